// The last handler: every error becomes an RFC 9457 problem. Known errors
// (domain errors, and what Express, body-parser and zlib raise while reading
// a request) keep their meaning; anything else is logged and answered 500,
// never with its message, which can echo what the caller sent.
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../logger.ts";
import { DomainError } from "../domain/errors.ts";
import { Problem, problemFromDomain, problems, sendProblem } from "./problems.ts";

export function errorHandler(options: {
  bodyLimit: string;
  logger: Logger;
  /** The per-address limiter, for errors raised before any limiter ran. */
  unlimited: RequestHandler;
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
    if (known) return sendProblem(res, known, id);
    options.logger.error({ err: error, requestId: id }, "unhandled error");
    sendProblem(res, problems.internal(), id);
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
