// The last handler: every error becomes an RFC 9457 problem. Known errors
// (domain errors, and what Express, body-parser and zlib raise while reading
// a request) keep their meaning; anything else is logged and answered 500,
// never with its message, which can echo what the caller sent.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import type { Logger } from "../observability/logger.ts";
import { DomainError } from "../domain/errors.ts";
import { Problem, problemFromDomain, problems, sendProblem } from "./problems.ts";
import { operationProblems } from "./operation-problems.ts";
import { PROBLEM_CATALOG, isProblemCode } from "./problem-catalog.ts";
import { type AnyRoute, findRoute } from "./routes.ts";

/** A problem answered that the OpenAPI document does not promise for that operation. */
export interface UndeclaredProblem {
  /** "GET /v1/mints/:mintId", or the method and path when no operation matched. */
  operation: string;
  code: string;
  status: number;
  why: string;
}

/**
 * Compares each problem answered with the catalog and the operation's
 * declared codes, and reports the ones the document does not describe.
 */
export function undeclaredProblems(routes: AnyRoute[], report: (found: UndeclaredProblem) => void) {
  return (req: Request, res: Response, problem: Problem): void => {
    const template = res.locals.route as string | undefined;
    const spec = template
      ? routes.find((r) => `/v1${r.path}` === template && r.method === req.method.toLowerCase())
      : req.path.startsWith("/v1/")
        ? findRoute(routes, req.method, req.path.slice(3))
        : undefined;
    const operation = spec ? `${req.method} /v1${spec.path}` : `${req.method} ${template ?? "(no operation)"}`;
    const { code, status } = problem;
    const found = (why: string) => report({ operation, code, status, why });
    if (!isProblemCode(code)) return found("not in the problem catalog");
    if (PROBLEM_CATALOG[code].status !== status) return found(`the catalog says ${PROBLEM_CATALOG[code].status}`);
    // No operation ran for these: a path that only looks like one (`/v1/agents/` for the list) is still none.
    if (code === "not_found" || code === "method_not_allowed") return;
    if (spec && !operationProblems(spec).includes(code)) return found("not declared by the operation");
  };
}

export function errorHandler(options: {
  bodyLimit: string;
  logger: Logger;
  /** Prefix of each problem's `type` link. */
  problemTypeBase: string;
  /** The per-address limiter, for errors raised before any limiter ran. */
  unlimited: RequestHandler;
  /** Sees every problem before it is sent (see undeclaredProblems). */
  inspect?: (req: Request, res: Response, problem: Problem) => void;
}): ErrorRequestHandler {
  const onError: ErrorRequestHandler = (error, req, res, next) => {
    if (res.headersSent) return;
    // Every response carries rate-limit headers: an error raised before any
    // limiter ran (a bad body with a key, say) counts against the address.
    if (!res.getHeader("RateLimit-Policy")) {
      return options.unlimited(req, res, (limited?: unknown) => onError(limited ?? error, req, res, next));
    }
    const id = res.locals.requestId as string | undefined;
    const known = requestProblem(error, options.bodyLimit);
    if (!known) options.logger.error({ err: error, requestId: id }, "unhandled error");
    const problem = known ?? problems.internal();
    options.inspect?.(req, res, problem);
    sendProblem(res, problem, options.problemTypeBase, id);
  };
  return onError;
}

/**
 * The problem for an error raised while reading the request (Express's router,
 * body-parser, zlib): never their message, which can echo what the caller sent.
 */
function requestProblem(error: unknown, bodyLimit: string): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof DomainError) return problemFromDomain(error);
  if (error instanceof URIError) return problems.malformedPath();
  const { type, status } = (error ?? {}) as { type?: string; status?: unknown };
  switch (type) {
    case "entity.parse.failed":
      return problems.malformedJson();
    case "entity.too.large":
      return problems.bodyTooLarge(bodyLimit);
    case "encoding.unsupported":
      return problems.unsupportedMediaType("this Content-Encoding");
    case "charset.unsupported":
      return problems.unsupportedMediaType("this charset");
    case "request.size.invalid":
    case "request.aborted":
      return problems.malformedBody("The request body is shorter or longer than its Content-Length.");
  }
  // zlib's errors for a corrupt gzip / deflate / br body carry status 400.
  if (typeof status === "number" && status >= 400 && status < 500) {
    return status === 400
      ? problems.malformedBody("The request body could not be decoded (check its Content-Encoding).")
      : problems.badRequest(status);
  }
  return undefined;
}
