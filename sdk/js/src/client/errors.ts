// Errors by what the caller does about them, as stripe-node's: each carries
// the API's problem (RFC 9457, with its stable `code`) and the request id to
// quote to support.

/** An API problem body: type, title, status, detail, code, and the code's own members. */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code: string;
  requestId?: string;
  errors?: { field: string; message: string }[];
  [member: string]: unknown;
}

export class ZsdError extends Error {
  readonly status: number | undefined;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly problem: Problem | undefined;

  constructor(message: string, init: { status?: number; code: string; requestId?: string; problem?: Problem }) {
    super(message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.problem = init.problem;
  }
}

/** 401: missing, unknown or revoked key, or a key of the other environment. */
export class AuthenticationError extends ZsdError {}
/** 403: the key may not do this. */
export class PermissionError extends ZsdError {}
/** 404: no such object for this account (or no such route). */
export class NotFoundError extends ZsdError {}
/** 400, 413, 415, 422: the request is wrong; `errors` names the failing fields when there are any. */
export class InvalidRequestError extends ZsdError {
  get errors(): { field: string; message: string }[] {
    return this.problem?.errors ?? [];
  }
}
/** An Idempotency-Key reused with another body, or its first request still running. */
export class IdempotencyError extends ZsdError {}
/** 409: the request conflicts with the object's state (a proof already used, a nonce taken, …). */
export class ConflictError extends ZsdError {}
/** 429: slow down; `retryAfter` seconds. */
export class RateLimitError extends ZsdError {
  constructor(
    message: string,
    init: ConstructorParameters<typeof ZsdError>[1],
    readonly retryAfter: number | undefined,
  ) {
    super(message, init);
  }
}
/** 5xx: the API or something it depends on failed; a retry may succeed. */
export class APIError extends ZsdError {}
/** The API could not be reached, or did not answer in time. */
export class APIConnectionError extends ZsdError {}
/** A flow (mint, redeem) ended in a state other than the one it waited for. */
export class FlowError extends ZsdError {}

/** The error class for an API answer. */
export function errorFromProblem(status: number, problem: Problem, retryAfter: number | undefined): ZsdError {
  const message = `${problem.title ?? "Error"}: ${problem.detail ?? problem.code} (${status} ${problem.code})`;
  const init = { status, code: problem.code, requestId: problem.requestId, problem };
  if (problem.code.startsWith("idempotency_")) return new IdempotencyError(message, init);
  if (status === 401) return new AuthenticationError(message, init);
  if (status === 403) return new PermissionError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 409) return new ConflictError(message, init);
  if (status === 429) return new RateLimitError(message, init, retryAfter);
  if (status >= 500) return new APIError(message, init);
  return new InvalidRequestError(message, init);
}
