// /dashboard: the developer dashboard, server-rendered. Sign-in by email and
// password (account-routes.ts; sessions in the database, the cookie HttpOnly
// and SameSite=Lax, Secure unless served over plain HTTP to a loopback
// address), a CSRF token in every form, and the API Keys, Analytics, Request
// log, Agents and Sandbox tabs.
import type { ReservesWatch } from "../../domain/reserves/reserves.ts";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type NextFunction, type Request, type Response, Router } from "express";
import type { Redis } from "ioredis";
import { createNote, encodeNote, noteCommitment, SNARK_SCALAR_FIELD } from "@zsd/sdk/notes";
import { parseZec } from "@zsd/sdk/units";
import type { MailCapture } from "../../adapters/mail/index.ts";
import type { AccountMail } from "../../domain/accounts/mail.ts";
import { type AccountService, type Session, isUnverified } from "../../domain/accounts/accounts.ts";
import { type Period, PERIODS, type RequestAnalytics } from "../../domain/analytics/analytics.ts";
import type { AgentService } from "../../domain/agents/agents.ts";
import { DomainError } from "../../domain/errors.ts";
import {
  type Environment,
  type KeyRestrictions,
  KeyLimitError,
  type KeyService,
  isKeyResource,
  parseIpRule,
} from "../../domain/accounts/keys.ts";
import type { Custody } from "../../adapters/custody/index.ts";
import type { Logger } from "../../observability/logger.ts";
import { type FieldError, problemFromDomain } from "../problems.ts";
import { nonUtf8Fields, unstorableFields, unstorableReason } from "../text-rules.ts";
import { accountRoutes } from "./account-routes.ts";
import { Refused, SESSION_COOKIE, cookies, pageContext, signedIn, text, wrap } from "./common.ts";
import * as views from "./views.ts";

export interface DashboardDependencies {
  accounts: AccountService;
  mail: AccountMail;
  /** The sandbox's SMTP capture, when mail is not sent out (no SMTP_URL). */
  mailCapture?: Promise<MailCapture>;
  keys: KeyService;
  analytics: RequestAnalytics;
  agents: AgentService;
  custody?: Custody;
  reserves?: ReservesWatch;
  environment: Environment;
  /** The sandbox's failing-payout address, as its Zcash node's setting names it; the page names it only. */
  failingPayoutAddress?: string;
  maxActiveKeys: number;
  sessionHours: number;
  redis?: Redis;
  logger: Logger;
}

/** Pages use this origin's scripts and styles only; forms post to this origin only. */
const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));
const here = dirname(fileURLToPath(import.meta.url));
const ASSET_FILES: Record<string, string> = {
  [views.ASSETS.pico]: join(packageDir("@picocss/pico"), "css", "pico.classless.min.css"),
  [views.ASSETS.uplotCss]: join(packageDir("uplot"), "dist", "uPlot.min.css"),
  [views.ASSETS.uplotJs]: join(packageDir("uplot"), "dist", "uPlot.iife.min.js"),
  [views.ASSETS.css]: join(here, "assets", "dashboard.css"),
  [views.ASSETS.js]: join(here, "assets", "dashboard.js"),
};

const list = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The restriction fields of a key form; a list of what is wrong otherwise. */
function parseRestrictions(body: Record<string, unknown>): KeyRestrictions | string[] {
  const errors: string[] = [];
  const readOnly = body.readOnly === undefined ? false : body.readOnly === "on" ? true : undefined;
  if (readOnly === undefined) errors.push("Read-only must be ticked or not.");
  const resources = list(body.resources);
  if (resources.length > 20 || !resources.every((r) => typeof r === "string" && isKeyResource(r)))
    errors.push("Choose resources from the list.");
  const ipsText = body.allowedIps === undefined ? "" : text(body.allowedIps, 2000);
  const ips: string[] = [];
  if (ipsText === undefined) errors.push("Allowed IP addresses: at most 2000 characters.");
  else {
    for (const item of ipsText.split(/[\s,]+/).filter(Boolean)) {
      const rule = parseIpRule(item);
      if (rule) ips.push(rule);
      else errors.push(`Not an IP address or CIDR range: ${item.slice(0, 60)}`);
    }
    if (ips.length > 50) errors.push("At most 50 IP addresses or ranges.");
  }
  if (errors.length) return errors;
  return {
    readOnly: readOnly!,
    resources: resources.length ? [...new Set(resources as string[])].filter(isKeyResource) : null,
    allowedIps: ips.length ? [...new Set(ips)] : null,
  };
}

const FIELD_LABEL: Record<string, string> = { query: "query parameter", form: "form field" };

/** Why a field list cannot be taken, in the words of an error page. */
function refusedFields(found: FieldError[]): Refused {
  const described = found.map(({ field, message }) => {
    const [where = "", ...path] = field.split(".");
    const name = path.join(".").slice(0, 64);
    return name
      ? `The ${FIELD_LABEL[where] ?? where} “${name}” ${message}`
      : `A ${FIELD_LABEL[where] ?? where} ${message}`;
  });
  return new Refused(400, `${described.join("; ")}. Correct it and send again.`);
}

/** Form bytes whose percent-decoding is not UTF-8 would be read as U+FFFD: refused before they are parsed. */
function formIsUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  const found = nonUtf8Fields("form", body.toString("latin1"));
  if (found.length > 0) throw refusedFields(found);
}

/** Query and form text PostgreSQL cannot hold (NUL, a lone surrogate) or that was not UTF-8. */
function unstorableInput(req: Request): Refused | undefined {
  const mark = req.originalUrl.indexOf("?");
  const found = [
    ...(mark < 0 ? [] : nonUtf8Fields("query", req.originalUrl.slice(mark + 1))),
    ...unstorableFields("query", req.query),
    ...unstorableFields("form", req.body),
  ];
  return found.length > 0 ? refusedFields(found) : undefined;
}

/** The names of the `:parameters` in the paths of a router's routes. */
function pathParameters(router: Router): Set<string> {
  const names = new Set<string>();
  for (const layer of router.stack as { route?: { path?: unknown } }[]) {
    const path = layer.route?.path;
    for (const p of Array.isArray(path) ? path : [path])
      if (typeof p === "string") for (const match of p.matchAll(/:(\w+)/g)) names.add(match[1]!);
  }
  return names;
}

/** Requests on one page of the request log: a phone scrolls through fifty, not the whole log. */
export const REQUEST_LOG_PAGE = 50;

export function dashboardRouter(deps: DashboardDependencies): Router {
  const { accounts, keys, analytics, agents, environment } = deps;
  const router = Router();
  const base = pageContext(environment);

  router.use((_req, res, next) => {
    res.setHeader("Content-Security-Policy", DASHBOARD_CSP);
    // The API's no-referrer makes browsers send `Origin: null` with a form; same-origin keeps the origin check useful.
    res.setHeader("Referrer-Policy", "same-origin");
    next();
  });

  router.get(Object.keys(ASSET_FILES), (req, res, next) => {
    res.setHeader("Cache-Control", "public, max-age=3600");
    res.sendFile(ASSET_FILES[req.path]!, (error) => error && next(error));
  });

  // Forms only, small; anything else is refused before it is read.
  router.use(express.urlencoded({ extended: false, limit: "16kb", parameterLimit: 100, verify: formIsUtf8 }));
  router.use((req, _res, next) => {
    if (req.method === "POST" && !req.is("application/x-www-form-urlencoded"))
      return next(new Refused(415, "The dashboard takes form submissions only."));
    next();
  });
  router.use((req, _res, next) => next(unstorableInput(req)));

  // A request from another site never acts, whatever it carries (the CSRF token is checked as well, below).
  router.use((req, _res, next) => {
    if (req.method !== "POST") return next();
    const site = req.get("sec-fetch-site");
    const origin = req.get("origin");
    const own = `${req.protocol}://${req.get("host")}`;
    if ((site && site !== "same-origin" && site !== "none") || (origin && origin !== "null" && origin !== own))
      return next(new Refused(403, "This form was sent from another site, so it was refused."));
    if (origin === "null")
      return next(new Refused(403, "This form was sent from an opaque origin, so it was refused."));
    next();
  });

  router.use(async (req, res, next) => {
    try {
      const token = cookies(req)[SESSION_COOKIE];
      if (token && token.length <= 100) res.locals.session = await accounts.session(token);
      next();
    } catch (error) {
      next(error);
    }
  });

  accountRoutes(router, {
    accounts,
    mail: deps.mail,
    capture: deps.mailCapture,
    environment,
    sessionHours: deps.sessionHours,
    redis: deps.redis,
  });

  router.get("/dashboard", (_req, res) =>
    res.redirect(303, res.locals.session ? "/dashboard/keys" : "/dashboard/signin"),
  );

  // API Keys
  const accountOf = (res: Response) => (res.locals.session as Session).account;
  const ownKey = async (res: Response, keyId: unknown) => {
    const key =
      typeof keyId === "string" ? (await keys.list(accountOf(res).id)).find((k) => k.id === keyId) : undefined;
    if (!key) throw new Refused(404, "No such key in this account.");
    return key;
  };

  router.get(
    "/dashboard/keys",
    signedIn,
    wrap(async (req, res) => {
      const list = await keys.list(accountOf(res).id);
      res.type("html").send(views.keysPage({ ...base(req, "API Keys"), tab: "keys" }, list));
    }),
  );

  router.post(
    "/dashboard/keys",
    signedIn,
    wrap(async (req, res) => {
      const body = req.body as Record<string, unknown>;
      const account = accountOf(res);
      const errors: string[] = [];
      const name = text(body.name, 100)?.trim();
      if (!name) errors.push("Give the key a name (at most 100 characters).");
      const env = body.environment;
      if (env !== "sandbox" && env !== "production") errors.push("Choose sandbox or production.");
      const restrictions = parseRestrictions(body);
      if (Array.isArray(restrictions)) errors.push(...restrictions);
      const ctx = { ...base(req, "API Keys"), tab: "keys" as const };
      if (errors.length)
        return res
          .status(400)
          .type("html")
          .send(views.keysPage({ ...ctx, errors }, await keys.list(account.id)));
      // Production keys move real money: only an account whose owner answered the mail gets one.
      if (env === "production" && isUnverified(account))
        return res
          .status(403)
          .type("html")
          .send(
            views.keysPage(
              {
                ...ctx,
                errors: [
                  "Verify your email before making production keys: follow the link we mailed you (the Account tab sends a new one).",
                ],
              },
              await keys.list(account.id),
            ),
          );
      try {
        const created = await keys.create(account.id, env as Environment, name!, {
          maxActive: deps.maxActiveKeys,
          restrictions: restrictions as KeyRestrictions,
        });
        res.type("html").send(views.keysPage(ctx, await keys.list(account.id), created));
      } catch (error) {
        if (!(error instanceof KeyLimitError)) throw error;
        res
          .status(409)
          .type("html")
          .send(
            views.keysPage(
              {
                ...ctx,
                errors: [`An account holds at most ${error.limit} active ${String(env)} keys: revoke one first.`],
              },
              await keys.list(account.id),
            ),
          );
      }
    }),
  );

  router.get(
    "/dashboard/keys/:keyId",
    signedIn,
    wrap(async (req, res) => {
      const key = await ownKey(res, req.params.keyId);
      res.type("html").send(views.keyPage({ ...base(req, key.name), tab: "keys" }, key));
    }),
  );

  router.post(
    "/dashboard/keys/:keyId/restrictions",
    signedIn,
    wrap(async (req, res) => {
      const key = await ownKey(res, req.params.keyId);
      const restrictions = parseRestrictions(req.body as Record<string, unknown>);
      const ctx = { ...base(req, key.name), tab: "keys" as const };
      if (Array.isArray(restrictions))
        return res
          .status(400)
          .type("html")
          .send(views.keyPage({ ...ctx, errors: restrictions }, key));
      const updated = await keys.restrict(accountOf(res).id, key.id, restrictions);
      if (!updated) throw new Refused(409, "This key was revoked; its restrictions no longer matter.");
      res.type("html").send(views.keyPage({ ...ctx, notice: "Restrictions saved." }, updated));
    }),
  );

  router.get(
    "/dashboard/keys/:keyId/revoke",
    signedIn,
    wrap(async (req, res) => {
      const key = await ownKey(res, req.params.keyId);
      if (key.revokedAt) return res.redirect(303, `/dashboard/keys/${key.id}`);
      res.type("html").send(views.revokePage({ ...base(req, "Revoke key"), tab: "keys" }, key));
    }),
  );

  router.post(
    "/dashboard/keys/:keyId/revoke",
    signedIn,
    wrap(async (req, res) => {
      const key = await ownKey(res, req.params.keyId);
      await keys.revoke(accountOf(res).id, key.id);
      const list = await keys.list(accountOf(res).id);
      res
        .type("html")
        .send(views.keysPage({ ...base(req, "API Keys"), tab: "keys", notice: `Key “${key.name}” revoked.` }, list));
    }),
  );

  // Analytics and the request log: this process's pending samples are written first, so a call shows at once.
  router.get(
    "/dashboard/analytics",
    signedIn,
    wrap(async (req, res) => {
      const account = accountOf(res);
      const period = (Object.hasOwn(PERIODS, String(req.query.period)) ? req.query.period : "24h") as Period;
      const list = await keys.list(account.id);
      const keyId = list.some((k) => k.id === req.query.key) ? (req.query.key as string) : undefined;
      await analytics.flush();
      const report = await analytics.report(account.id, period, keyId);
      res.type("html").send(views.analyticsPage({ ...base(req, "Analytics"), tab: "analytics" }, report, list, keyId));
    }),
  );

  router.get(
    "/dashboard/requests",
    signedIn,
    wrap(async (req, res) => {
      const account = accountOf(res);
      const list = await keys.list(account.id);
      const q = req.query;
      const key = list.some((k) => k.id === q.key) ? (q.key as string) : undefined;
      const status = typeof q.status === "string" && /^[1-5](\d\d|xx)$/.test(q.status) ? q.status : undefined;
      await analytics.flush();
      const routes = await analytics.loggedRoutes(account.id);
      const route = typeof q.route === "string" && routes.includes(q.route) ? q.route : undefined;
      // A page of the log at a time, older pages after an entry's id (the "Older" link's).
      const before = q.before;
      if (
        before !== undefined &&
        (typeof before !== "string" || !/^[1-9]\d{0,18}$/.test(before) || BigInt(before) > 2n ** 63n - 1n)
      )
        throw new Refused(
          400,
          "before (in the page address) must be a position in the request log, as the Older link gives it.",
        );
      const filter = { key, status, route };
      const page = await analytics.requests(account.id, {
        apiKeyId: key,
        status,
        route,
        before,
        limit: REQUEST_LOG_PAGE + 1,
      });
      const entries = page.slice(0, REQUEST_LOG_PAGE);
      const older = page.length > REQUEST_LOG_PAGE ? entries.at(-1)!.id : undefined;
      res.type("html").send(
        views.requestsPage({ ...base(req, "Request log"), tab: "requests" }, entries, list, routes, filter, {
          older,
          newer: before !== undefined,
        }),
      );
    }),
  );

  // Agents
  router.get(
    "/dashboard/agents",
    signedIn,
    wrap(async (req, res) => {
      const list = await agents.list(accountOf(res).id, environment);
      res.type("html").send(views.agentsPage({ ...base(req, "Agents"), tab: "agents" }, list));
    }),
  );

  const agentView = async (req: Request, res: Response, notice?: string) => {
    const agentId = String(req.params.agentId);
    const account = accountOf(res).id;
    const agent = await agents.get(account, environment, agentId);
    const deliveries = await agents.deliveries(account, environment, agentId, { limit: 50 });
    res.type("html").send(views.agentPage({ ...base(req, agent.name), tab: "agents", notice }, agent, deliveries));
  };

  router.get("/dashboard/agents/:agentId", signedIn, wrap(agentView));

  router.post(
    "/dashboard/agents/:agentId/deliveries/:deliveryId/redeliver",
    signedIn,
    wrap(async (req, res) => {
      await agents.retry(accountOf(res).id, environment, String(req.params.agentId), String(req.params.deliveryId));
      await agentView(req, res, "Delivery queued again.");
    }),
  );

  router.get(
    "/dashboard/reserves",
    signedIn,
    wrap(async (req, res) => {
      const readings = deps.reserves ? await deps.reserves.store.recent(48) : undefined;
      res.type("html").send(views.reservesPage({ ...base(req, "Reserves"), tab: "reserves" }, readings));
    }),
  );

  // Sandbox helpers
  if (environment === "sandbox") {
    const sandbox = () => ({
      available: Boolean(deps.custody?.simulateDeposit),
      failingPayoutAddress: deps.failingPayoutAddress,
    });
    router.get("/dashboard/sandbox", signedIn, (req, res) => {
      res.type("html").send(views.sandboxPage({ ...base(req, "Sandbox"), tab: "sandbox" }, sandbox()));
    });

    router.post(
      "/dashboard/sandbox/deposits",
      signedIn,
      wrap(async (req, res) => {
        const body = req.body as Record<string, unknown>;
        const ctx = { ...base(req, "Sandbox"), tab: "sandbox" as const };
        const available = Boolean(deps.custody?.simulateDeposit);
        const errors: string[] = [];
        const amount = text(body.amount, 20)?.trim() ?? "";
        if (!/^\d{1,11}(\.\d{1,8})?$/.test(amount) || parseZec(amount) === 0n)
          errors.push("Amount: a ZEC amount above 0 with at most 8 decimals, e.g. 1.5.");
        const given = text(body.noteCommitment, 80)?.trim() ?? "";
        let commitment: bigint | undefined;
        if (given) {
          if (
            /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(given) &&
            BigInt(given) > 0n &&
            BigInt(given) < SNARK_SCALAR_FIELD
          )
            commitment = BigInt(given);
          else errors.push("Note commitment: a field element, decimal or 0x-hex.");
        }
        if (errors.length)
          return res
            .status(400)
            .type("html")
            .send(views.sandboxPage({ ...ctx, errors }, sandbox()));
        if (!available) throw new Refused(503, "The sandbox custody is not configured on this server.");
        const note = commitment === undefined ? createNote() : undefined;
        commitment ??= noteCommitment(note!);
        const deposit = await deps.custody!.simulateDeposit!(commitment, parseZec(amount), accountOf(res).id);
        res
          .status(201)
          .type("html")
          .send(
            views.sandboxPage({ ...ctx, notice: "Deposit recorded." }, sandbox(), {
              amount,
              leafIndex: deposit.leafIndex,
              txHash: deposit.txHash,
              noteCommitment: `0x${commitment.toString(16).padStart(64, "0")}`,
              note: note ? encodeNote(note) : undefined,
            }),
          );
      }),
    );
  }

  // Every path parameter of the pages above, checked as forms and queries are (the names are found, not listed, so
  // that a new page cannot miss the check).
  for (const name of pathParameters(router)) {
    router.param(name, (_req, _res, next, value: unknown) => {
      const reason = typeof value === "string" ? unstorableReason(value) : undefined;
      next(
        reason ? new Refused(400, `${name} (in the page address) ${reason}: remove them and try again.`) : undefined,
      );
    });
  }

  router.use("/dashboard", (req, _res, next) => next(new Refused(404, `No dashboard page at ${req.path}.`)));

  // Errors answer as pages; a domain error keeps its status and its words, anything else is logged.
  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith("/dashboard")) return next(error);
    let status = 500;
    let message = "Something went wrong on our side; try again later.";
    if (error instanceof Refused) ({ status, message } = error);
    else if (error instanceof URIError) {
      status = 400;
      message = "The page address has an invalid percent-encoding.";
    } else if (error instanceof DomainError) {
      const problem = problemFromDomain(error);
      status = problem.status;
      message = problem.detail;
    } else if (typeof (error as { status?: unknown }).status === "number") {
      // body-parser: too large, malformed encoding.
      status = (error as { status: number }).status;
      message = status === 413 ? "The form is too large." : "The form could not be read.";
    } else deps.logger.error({ err: error, requestId: res.locals.requestId }, "dashboard page failed");
    if (status >= 500 && status !== 503) status = 500;
    res
      .status(status)
      .type("html")
      .send(views.errorPage(base(req, ""), status, message));
  });

  return router;
}
