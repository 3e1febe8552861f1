// The dashboard's account routes: sign-up (the same answer whether or not the
// address has an account), sign-in with limits a stranger cannot use to lock
// the owner out, email verification and password reset by mailed single-use
// links, the Account tab, and the sandbox's mailbox.
import { randomBytes } from "node:crypto";
import type { Request, RequestHandler, Response, Router } from "express";
import ipaddr from "ipaddr.js";
import type { Redis } from "ioredis";
import { RateLimiterRes } from "rate-limiter-flexible";
import { MAIL_ADDRESS_RULES, mailAddressProblem } from "../../adapters/mail/address.ts";
import type { MailCapture } from "../../adapters/mail/index.ts";
import type { AccountMail } from "../../domain/accounts/mail.ts";
import {
  type Account,
  type AccountService,
  EMAIL_PATTERN,
  PASSWORD_MAX,
  PASSWORD_MIN,
  normaliseEmail,
} from "../../domain/accounts/accounts.ts";
import type { Environment } from "../../domain/accounts/keys.ts";
import { type Limiter, createLimiter } from "../middleware/rate-limit.ts";
import * as pages from "./account-views.ts";
import {
  CSRF_COOKIE,
  Refused,
  SESSION_COOKIE,
  cookies,
  isLocalDevelopment,
  pageContext,
  sameToken,
  sessionOf,
  setCookie,
  signedIn,
  text,
  wrap,
} from "./common.ts";

/**
 * Sign-in budgets. The tight one counts an email from one client address, so
 * that guesses from elsewhere never lock the owner out; the per-email one is
 * more than one address can spend in its window (40 an hour), so only a
 * spread-out attack meets it (and a reset link clears it); the per-address
 * one bounds one client trying many emails.
 */
export const LOGIN_LIMITS = {
  perEmailAndAddress: { points: 10, windowSeconds: 15 * 60 },
  perEmail: { points: 100, windowSeconds: 60 * 60 },
  perAddress: { points: 100, windowSeconds: 15 * 60 },
} as const;
/** Mail to one address (sign-up attempts, reset links, verification again): no one can flood an inbox through us. */
export const MAIL_LIMIT = { points: 5, windowSeconds: 60 * 60 };
const GENERIC_LOGIN_ERROR = "Email or password is incorrect.";
const BAD_LINK =
  "This link is not valid: it was used already, it expired, or it was cut short. Ask for a new one and use the newest.";

export interface AccountRouteDependencies {
  accounts: AccountService;
  mail: AccountMail;
  /** The sandbox's SMTP capture (no SMTP_URL): its mail is shown at /dashboard/mail to this machine. */
  capture?: Promise<MailCapture>;
  environment: Environment;
  sessionHours: number;
  redis?: Redis;
}

const retryAfter = (res: Response, rejection: RateLimiterRes) =>
  res.setHeader("Retry-After", String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));

/** Consumes a point of each limiter in turn; the first that refuses stops the rest from being spent. */
async function spend(res: Response, ...buckets: [Limiter, string][]): Promise<boolean> {
  try {
    for (const [limiter, key] of buckets) await limiter.consume(key);
    return true;
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    retryAfter(res, rejection);
    return false;
  }
}

/** The mailbox shows everyone's links: only to a browser on this machine, talking to it directly. */
function fromThisMachine(req: Request): boolean {
  const peer = req.socket.remoteAddress;
  if (!peer || !ipaddr.isValid(peer)) return false;
  const parsed = ipaddr.process(peer);
  const forwarded = ["x-forwarded-for", "forwarded", "x-real-ip"].some((h) => req.headers[h] !== undefined);
  return parsed.range() === "loopback" && !forwarded && isLocalDevelopment(req);
}

export function accountRoutes(router: Router, deps: AccountRouteDependencies): void {
  const { accounts, mail, environment } = deps;
  const base = pageContext(environment);
  const limiter = (name: string, limit: { points: number; windowSeconds: number }) =>
    createLimiter({ name, ...limit, redis: deps.redis });
  const perEmailAndAddress = limiter("login_email_ip", LOGIN_LIMITS.perEmailAndAddress);
  const perEmail = limiter("login_email", LOGIN_LIMITS.perEmail);
  const perAddress = limiter("login_ip", LOGIN_LIMITS.perAddress);
  const mailLimiter = limiter("mail_to", MAIL_LIMIT);
  const emailKey = (email: string) => `email:${normaliseEmail(email)}`;
  const pairKey = (email: string, req: Request) => `email:${normaliseEmail(email)}|ip:${req.ip}`;
  /** Whether another mail may go to the address; the page never says (it would tell whether mail was sent). */
  const mayMail = async (email: string) =>
    mailLimiter.consume(emailKey(email)).then(
      () => true,
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return false;
        throw rejection;
      },
    );
  const sandboxMailbox = deps.capture !== undefined;

  /** Forms before sign-in: a double-submit token, as there is no session yet. */
  const anonymousCsrf = (req: Request, res: Response): string => {
    let token = cookies(req)[CSRF_COOKIE];
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) {
      token = randomBytes(32).toString("base64url");
      setCookie(req, res, CSRF_COOKIE, token, 3600);
    }
    return token;
  };
  const checkAnonymousCsrf: RequestHandler = (req, _res, next) => {
    if (!sameToken((req.body as Record<string, unknown>)?._csrf, cookies(req)[CSRF_COOKIE]))
      return next(new Refused(403, "The form's security token is missing or stale; reload the page and try again."));
    next();
  };
  const page = (res: Response, status: number, body: string) => res.status(status).type("html").send(body);

  const signIn = async (req: Request, res: Response, account: Account) => {
    // A new session token at every sign-in: one planted in the browser beforehand is ended, never promoted.
    const { token, session } = await accounts.startSession(account.id, cookies(req)[SESSION_COOKIE]);
    setCookie(req, res, SESSION_COOKIE, token, deps.sessionHours * 3600);
    res.locals.session = session;
    res.redirect(303, "/dashboard/keys");
  };

  router.get("/dashboard/signin", (req, res) => {
    if (sessionOf(res)) return res.redirect(303, "/dashboard/keys");
    res.type("html").send(pages.signInPage(base(req, "Sign in"), anonymousCsrf(req, res)));
  });

  router.post(
    "/dashboard/signin",
    checkAnonymousCsrf,
    wrap(async (req, res) => {
      const body = req.body as Record<string, unknown>;
      const email = text(body.email, 254) ?? "";
      const password = text(body.password, PASSWORD_MAX) ?? "";
      const again = (status: number, error: string) =>
        page(
          res,
          status,
          pages.signInPage({ ...base(req, "Sign in"), errors: [error] }, anonymousCsrf(req, res), email),
        );
      const allowed = await spend(
        res,
        [perAddress, `ip:${req.ip}`],
        [perEmailAndAddress, pairKey(email, req)],
        [perEmail, emailKey(email)],
      );
      if (!allowed) return again(429, "Too many sign-in attempts; wait a few minutes and try again.");
      const account = email && password ? await accounts.verify(email, password) : undefined;
      if (!account) return again(401, GENERIC_LOGIN_ERROR);
      // The right password from this address: its own guesses start again (the per-email count does not).
      await perEmailAndAddress.delete(pairKey(email, req));
      await signIn(req, res, account);
    }),
  );

  router.get("/dashboard/signup", (req, res) => {
    if (sessionOf(res)) return res.redirect(303, "/dashboard/keys");
    res.type("html").send(pages.signUpPage(base(req, "Create an account"), anonymousCsrf(req, res)));
  });

  router.post(
    "/dashboard/signup",
    checkAnonymousCsrf,
    wrap(async (req, res) => {
      const body = req.body as Record<string, unknown>;
      const email = text(body.email, 254)?.trim() ?? "";
      const password = text(body.password, PASSWORD_MAX + 1);
      const errors: string[] = [];
      // As mail transport will judge it: an account at an address no server takes could never be verified.
      const addressProblem = mailAddressProblem(email);
      if (addressProblem) errors.push(`${addressProblem} ${MAIL_ADDRESS_RULES}`);
      if (password === undefined || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
        errors.push(`A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
      const again = (status: number, problems: string[]) =>
        page(
          res,
          status,
          pages.signUpPage({ ...base(req, "Create an account"), errors: problems }, anonymousCsrf(req, res), email),
        );
      if (errors.length) return again(400, errors);
      // Sign-ups share the sign-in budget per address: account creation costs a scrypt too.
      if (!(await spend(res, [perAddress, `ip:${req.ip}`])))
        return again(429, ["Too many attempts from this address; wait a few minutes."]);
      // A new address gets an account and a verification link; a known one, a warning to its owner.
      // The answer is the same page either way, and the mail goes after it.
      const result = await accounts.signUp(email, password!);
      if (await mayMail(email)) mail.afterSignUp(result);
      page(res, 200, pages.checkEmailPage(base(req, "Check your email"), normaliseEmail(email), sandboxMailbox));
    }),
  );

  router.get(
    "/dashboard/verify",
    wrap(async (req, res) => {
      const token = text(req.query.token, 100);
      if (!(await accounts.tokens.check(token, "verify_email"))) throw new Refused(400, BAD_LINK);
      // A click confirms, not the link's GET: mail scanners that fetch links verify nothing.
      res.type("html").send(pages.verifyPage(base(req, "Confirm your email"), anonymousCsrf(req, res), token!));
    }),
  );

  router.post(
    "/dashboard/verify",
    checkAnonymousCsrf,
    wrap(async (req, res) => {
      const account = await accounts.verifyEmail(text((req.body as Record<string, unknown>).token, 100));
      if (!account) throw new Refused(400, BAD_LINK);
      const session = sessionOf(res);
      if (session?.account.id === account.id) {
        res.locals.session = { ...session, account };
        return page(
          res,
          200,
          pages.accountPage({ ...base(req, "Account"), tab: "account", notice: "Email verified." }),
        );
      }
      page(
        res,
        200,
        pages.signInPage(
          { ...base(req, "Sign in"), notice: "Email verified: sign in to continue." },
          anonymousCsrf(req, res),
          account.email ?? "",
        ),
      );
    }),
  );

  router.get("/dashboard/reset", (req, res) => {
    res.type("html").send(pages.resetRequestPage(base(req, "Reset your password"), anonymousCsrf(req, res)));
  });

  router.post(
    "/dashboard/reset",
    checkAnonymousCsrf,
    wrap(async (req, res) => {
      const email = text((req.body as Record<string, unknown>).email, 254)?.trim() ?? "";
      const ctx = base(req, "Reset your password");
      if (!EMAIL_PATTERN.test(email))
        return page(
          res,
          400,
          pages.resetRequestPage({ ...ctx, errors: ["Enter an email address."] }, anonymousCsrf(req, res), email),
        );
      if (!(await spend(res, [perAddress, `ip:${req.ip}`])))
        return page(
          res,
          429,
          pages.resetRequestPage(
            { ...ctx, errors: ["Too many attempts from this address; wait a few minutes."] },
            anonymousCsrf(req, res),
            email,
          ),
        );
      // Whether the address has an account is looked up after the answer, by the mail job.
      if (await mayMail(email)) mail.requestReset(email);
      page(res, 200, pages.resetSentPage(ctx, normaliseEmail(email), sandboxMailbox));
    }),
  );

  router.get(
    "/dashboard/reset/confirm",
    wrap(async (req, res) => {
      const token = text(req.query.token, 100);
      if (!(await accounts.tokens.check(token, "reset_password"))) throw new Refused(400, BAD_LINK);
      res.type("html").send(pages.resetPage(base(req, "Choose a new password"), anonymousCsrf(req, res), token!));
    }),
  );

  router.post(
    "/dashboard/reset/confirm",
    checkAnonymousCsrf,
    wrap(async (req, res) => {
      const body = req.body as Record<string, unknown>;
      const token = text(body.token, 100) ?? "";
      const password = text(body.password, PASSWORD_MAX + 1);
      const ctx = base(req, "Choose a new password");
      if (password === undefined || password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
        return page(
          res,
          400,
          pages.resetPage(
            { ...ctx, errors: [`A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] },
            anonymousCsrf(req, res),
            token,
          ),
        );
      if (!(await spend(res, [perAddress, `ip:${req.ip}`])))
        return page(
          res,
          429,
          pages.resetPage(
            { ...ctx, errors: ["Too many attempts from this address; wait a few minutes."] },
            anonymousCsrf(req, res),
            token,
          ),
        );
      const account = await accounts.resetPassword(token, password);
      if (!account) throw new Refused(400, BAD_LINK);
      // The owner proved the mailbox: a lock-out a spread-out attack caused ends with it.
      await perEmail.delete(emailKey(account.email!));
      await perEmailAndAddress.delete(pairKey(account.email!, req));
      mail.passwordReset(account);
      res.clearCookie(SESSION_COOKIE, { path: "/dashboard" });
      res.locals.session = undefined;
      page(
        res,
        200,
        pages.signInPage(
          {
            ...base(req, "Sign in"),
            notice: "Password changed, and every session signed out: sign in with the new one.",
          },
          anonymousCsrf(req, res),
          account.email!,
        ),
      );
    }),
  );

  router.post(
    "/dashboard/signout",
    signedIn,
    wrap(async (req, res) => {
      await accounts.endSession(cookies(req)[SESSION_COOKIE]!);
      res.clearCookie(SESSION_COOKIE, { path: "/dashboard" });
      res.redirect(303, "/dashboard/signin");
    }),
  );

  router.get("/dashboard/account", signedIn, (req, res) => {
    res.type("html").send(pages.accountPage({ ...base(req, "Account"), tab: "account" }));
  });

  router.post(
    "/dashboard/account/verification",
    signedIn,
    wrap(async (req, res) => {
      const account = sessionOf(res)!.account;
      if (account.email && (await mayMail(account.email))) mail.resendVerification(account);
      page(
        res,
        200,
        pages.accountPage({
          ...base(req, "Account"),
          tab: "account",
          notice: account.emailVerifiedAt
            ? "This address is verified already."
            : `A new link is on its way to ${account.email}.`,
        }),
      );
    }),
  );

  router.post(
    "/dashboard/account/password",
    signedIn,
    wrap(async (req, res) => {
      const session = sessionOf(res)!;
      const body = req.body as Record<string, unknown>;
      const current = text(body.current, PASSWORD_MAX) ?? "";
      const next = text(body.next, PASSWORD_MAX + 1);
      const ctx = { ...base(req, "Account"), tab: "account" as const };
      if (next === undefined || next.length < PASSWORD_MIN || next.length > PASSWORD_MAX)
        return page(
          res,
          400,
          pages.accountPage({ ...ctx, errors: [`A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] }),
        );
      // The sign-in budgets of the account's email: a stolen session must not guess the password faster than sign-in.
      const login = session.account.email ?? session.account.id;
      if (!(await spend(res, [perEmailAndAddress, pairKey(login, req)], [perEmail, emailKey(login)])))
        return page(
          res,
          429,
          pages.accountPage({ ...ctx, errors: ["Too many attempts; wait a few minutes and try again."] }),
        );
      if (!(await accounts.changePassword(session.account.id, current, next)))
        return page(res, 400, pages.accountPage({ ...ctx, errors: ["The current password is not right."] }));
      // Other browsers signed in with the old password are signed out; this one gets a fresh session.
      await accounts.endOtherSessions(session.account.id, cookies(req)[SESSION_COOKIE]);
      const { token, session: fresh } = await accounts.startSession(session.account.id, cookies(req)[SESSION_COOKIE]);
      setCookie(req, res, SESSION_COOKIE, token, deps.sessionHours * 3600);
      res.locals.session = fresh;
      res
        .type("html")
        .send(pages.accountPage({ ...base(req, "Account"), tab: "account", notice: "Password changed." }));
    }),
  );

  if (deps.capture) {
    const capture = deps.capture;
    router.get(
      "/dashboard/mail",
      wrap(async (req, res) => {
        if (!fromThisMachine(req)) throw new Refused(404, `No dashboard page at ${req.path}.`);
        res.type("html").send(pages.mailboxPage(base(req, "Sandbox mailbox"), (await capture).list()));
      }),
    );
  }
}
