// What the dashboard's routers share: cookies, CSRF checks, the signed-in
// guard, and the error that answers a page with a status.
import { timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { Session } from "../../domain/accounts/accounts.ts";
import type { Environment } from "../../domain/accounts/keys.ts";
import type { PageContext } from "./layout.ts";

export const SESSION_COOKIE = "zsd_session";
export const CSRF_COOKIE = "zsd_csrf";

/** Answered as an error page with this status and message. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function cookies(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // The first wins, as browsers send the most specific path first.
    if (name && !(name in out)) out[name] = part.slice(eq + 1).trim();
  }
  return out;
}

export const sameToken = (a: unknown, b: string | undefined) =>
  typeof a === "string" &&
  b !== undefined &&
  a.length === b.length &&
  a.length > 0 &&
  timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Plain HTTP to this machine is local development: there the cookie cannot be Secure. */
export const isLocalDevelopment = (req: Request) =>
  !req.secure && ["localhost", "127.0.0.1", "[::1]", "::1"].includes(req.hostname);

export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds: number) {
  res.cookie(name, value, {
    httpOnly: true,
    sameSite: "lax",
    secure: !isLocalDevelopment(req),
    path: "/dashboard",
    maxAge: maxAgeSeconds * 1000,
  });
}

export const text = (value: unknown, max: number): string | undefined =>
  typeof value === "string" && value.length <= max && !value.includes("\u0000") ? value : undefined;

export const wrap =
  (handler: (req: Request, res: Response) => Promise<unknown>): RequestHandler =>
  (req, res, next) =>
    void handler(req, res).catch(next);

export const sessionOf = (res: Response) => res.locals.session as Session | undefined;

/** The context every page starts from. */
export const pageContext =
  (environment: Environment) =>
  (req: Request, title: string): PageContext => ({
    title,
    environment,
    account: sessionOf(req.res!)?.account,
    csrfToken: sessionOf(req.res!)?.csrfToken,
  });

/** Pages of a signed-in account; a POST also carries the session's CSRF token. */
export const signedIn: RequestHandler = (req, res, next) => {
  const session = sessionOf(res);
  if (!session) {
    if (req.method === "GET") return res.redirect(303, "/dashboard/signin");
    return next(new Refused(403, "Sign in first."));
  }
  if (req.method === "POST" && !sameToken((req.body as Record<string, unknown>)?._csrf, session.csrfToken))
    return next(new Refused(403, "The form's security token is missing or stale; reload the page and try again."));
  next();
};
