// RFC 9457 problem details: every error the API answers is one of these.
import type { Response } from "express";
import { type DomainError, type ErrorKind, type FieldError, domainErrors } from "../domain/errors.ts";

export type { FieldError };

/** Where a code's documentation is: PROBLEM_TYPE_BASE, else this server's /docs/problems page. */
export const problemType = (base: string, code: string) => `${base}${code}`;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/** An error that becomes a problem response. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; [k: string]: unknown } = {},
  ) {
    super(detail);
  }
}

export const problems = {
  // The domain's own errors, for the HTTP layer's checks of the same kind.
  validation: (errors: FieldError[]) => problemFromDomain(domainErrors.invalid(errors)),
  malformedJson: () => new Problem(400, "malformed_json", "Malformed JSON", "The request body is not valid JSON."),
  malformedBody: (detail: string) => new Problem(400, "malformed_body", "Malformed body", detail),
  malformedPath: () =>
    new Problem(400, "malformed_path", "Malformed path", "The request path has an invalid percent-encoding."),
  nestingTooDeep: (limit: number) =>
    new Problem(400, "nesting_too_deep", "JSON nested too deeply", `The request body nests more than ${limit} levels.`),
  badRequest: (status: number) =>
    new Problem(status, "bad_request", "Bad request", "The server could not read this request."),
  bodyTooLarge: (limit: string) =>
    new Problem(413, "body_too_large", "Body too large", `The request body exceeds ${limit}.`),
  unsupportedMediaType: (type: string) =>
    new Problem(415, "unsupported_media_type", "Unsupported media type", `Send application/json, not ${type}.`),
  notFound: (path: string) => new Problem(404, "not_found", "Not found", `No route matches ${path}.`),
  resourceNotFound: (what: string) => problemFromDomain(domainErrors.notFound(what)),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new Problem(405, "method_not_allowed", "Method not allowed", `${method} is not allowed here.`, {
      headers: { Allow: allowed.join(", ") },
    }),
  unauthorized: (code: string, detail: string, extra: Record<string, unknown> = {}) =>
    new Problem(401, code, "Unauthorized", detail, {
      ...extra,
      headers: { "WWW-Authenticate": 'Bearer realm="zsd"' },
    }),
  rateLimited: (retryAfter: number) =>
    new Problem(429, "rate_limited", "Too many requests", `Rate limit exceeded; retry in ${retryAfter} s.`, {
      headers: { "Retry-After": String(retryAfter) },
    }),
  idempotencyMismatch: () =>
    new Problem(
      422,
      "idempotency_key_reused",
      "Idempotency key reused",
      "This Idempotency-Key was used with a different request body.",
    ),
  idempotencyInFlight: () =>
    new Problem(
      409,
      "idempotency_request_in_progress",
      "Request in progress",
      "A request with this Idempotency-Key is still being processed; retry shortly.",
      { headers: { "Retry-After": "1" } },
    ),
  upstreamUnavailable: (what: string, retryAfter = 5) => problemFromDomain(domainErrors.unavailable(what, retryAfter)),
  internal: () =>
    new Problem(500, "internal_error", "Internal error", "Something went wrong on our side; retry later."),
};

/** The one place a domain error gets its HTTP status. */
const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unavailable: 503,
  pending: 504,
};

export function problemFromDomain(error: DomainError): Problem {
  const { retryAfter, ...facts } = error.facts;
  return new Problem(STATUS[error.kind], error.code, error.title, error.detail, {
    ...facts,
    ...(retryAfter === undefined ? {} : { headers: { "Retry-After": String(retryAfter) } }),
  });
}

export function sendProblem(res: Response, problem: Problem, typeBase: string, requestId?: string): void {
  const { headers, ...extensions } = problem.extra;
  for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
  const body: ProblemBody = {
    type: problemType(typeBase, problem.code),
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    ...(requestId ? { requestId } : {}),
    ...extensions,
  };
  res.status(problem.status).type("application/problem+json").send(JSON.stringify(body));
}
