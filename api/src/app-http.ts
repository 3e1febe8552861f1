// What the API's HTTP layer takes from the configuration beyond its routes:
// the servers its OpenAPI document names and where its problem types live,
// the rate limits (per account once authenticated, per client address
// before), and the security headers every answer carries.
import type { RequestHandler } from "express";
import helmet from "helmet";
import type { Redis } from "ioredis";
import { type Config, rateLimitFor } from "./config/config.ts";
import type { Metrics } from "./http/metrics.ts";
import { createLimiter, rateLimit } from "./http/middleware/rate-limit.ts";

/** The document's servers (this one first) and the base of its problem types' URIs. */
export function openApiServers(config: Config) {
  // The document's paths start with /v1: a server is the address before it.
  const root = (baseUrl: string) => baseUrl.replace(/\/v1\/?$/, "");
  const environments = [
    { environment: "production", baseUrl: config.PRODUCTION_BASE_URL, description: "Production" },
    { environment: "sandbox", baseUrl: config.SANDBOX_BASE_URL, description: "Sandbox (testnet)" },
  ] as const;
  const own = environments.find((e) => e.environment === config.ENVIRONMENT)!;
  // Without a configured address this server names itself relatively, as no placeholder could.
  const servers = [
    { url: own.baseUrl ? root(own.baseUrl) : "/", description: `${own.description}: this server` },
    ...environments
      .filter((e) => e !== own && e.baseUrl)
      .map((e) => ({ url: root(e.baseUrl!), description: e.description })),
  ];
  const problemTypeBase = config.PROBLEM_TYPE_BASE ?? `${own.baseUrl ? root(own.baseUrl) : ""}/docs/problems#`;
  return { servers, problemTypeBase };
}

/**
 * The limiters: per account (`account`), per client address (`ip`), and for
 * public routes, which cost the address's budget even when a key is sent.
 */
export function rateLimiters(config: Config, metrics: Metrics, redis?: Redis) {
  const points = rateLimitFor(config);
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const limits = { environment: config.ENVIRONMENT, metrics };
  // Per account and environment once authenticated (a new key adds no
  // budget); per client address before that, with a larger budget, so that
  // unauthenticated floods stay bounded too.
  const accountLimiter = rateLimit(
    createLimiter({ name: "account", points, windowSeconds: window, redis }),
    { name: "default", points, windowSeconds: window, ...limits },
    (_req, res) => `account:${res.locals.apiKey.accountId}:${res.locals.apiKey.environment}`,
  );
  const ipPoints = points * 10;
  const ipLimiter = rateLimit(
    createLimiter({ name: "ip", points: ipPoints, windowSeconds: window, redis }),
    { name: "ip", points: ipPoints, windowSeconds: window, ...limits },
    (req) => `ip:${req.ip}`,
  );
  // Public routes cost the address's budget even when a key is sent with them.
  const publicLimiter: RequestHandler = (req, res, next) =>
    req.headers.authorization ? ipLimiter(req, res, next) : next();
  return { account: accountLimiter, ip: ipLimiter, public: publicLimiter };
}

/**
 * Helmet's headers as this API sets them, and Cache-Control: no-store (answers are per account
 * and may carry secrets, such as a new key). Helmet's answer is the same for every request, so it
 * is taken once, at start-up, and replayed: its eleven middlewares per request cost a busy API
 * about a percent of its throughput.
 */
export function securityHeaders(config: Config): RequestHandler {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void set.push([name, String(value)]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let done = false;
  helmetFor(config)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  // Replaying is right only if Helmet answered at once, from its options alone.
  if (!done || set.length === 0) throw new Error("helmet did not set its headers synchronously");
  set.push(["Cache-Control", "no-store"]);
  return (_req, res, next) => {
    for (const name of removed) res.removeHeader(name);
    for (const [name, value] of set) res.setHeader(name, value);
    next();
  };
}

function helmetFor(config: Config): RequestHandler {
  return helmet({
    // JSON answers and HTML pages with inline style and no script; /docs sets its own (openapi/docs.ts).
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    strictTransportSecurity:
      config.ENVIRONMENT === "production" ? { maxAge: 63_072_000, includeSubDomains: true } : false,
    referrerPolicy: { policy: "no-referrer" },
  });
}
