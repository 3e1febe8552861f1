// Which problem codes an operation can answer: what every operation of its
// kind shares (a body, a key, an id in the path) and the codes its route
// declares. Apart from the catalog so that the catalog needs no routes and the
// routes need only the catalog's code names.
import type { ProblemCode } from "./problem-catalog.ts";
import type { AnyRoute } from "./routes.ts";

/** Codes any operation can answer before it is known which one was called. */
export const ANY_REQUEST: readonly ProblemCode[] = [
  "not_found",
  "method_not_allowed",
  "bad_request",
  "request_timeout",
  "uri_too_long",
  "headers_too_large",
  "rate_limited",
  "overloaded",
  "internal_error",
];

const BODY: readonly ProblemCode[] = [
  "validation_failed",
  "malformed_json",
  "malformed_body",
  "nesting_too_deep",
  "body_too_large",
  "unsupported_media_type",
  "bad_request",
];
const AUTH: readonly ProblemCode[] = [
  "missing_api_key",
  "malformed_authorization",
  "malformed_api_key",
  "invalid_api_key",
  "revoked_api_key",
  "wrong_environment",
  "key_read_only",
  "key_resource_not_allowed",
  "key_ip_not_allowed",
];

/** Every code an operation can answer: what all operations of its kind share, then its own. */
export function operationProblems(route: AnyRoute): ProblemCode[] {
  const codes = new Set<ProblemCode>(["rate_limited", "internal_error"]);
  // Shed before the operation starts; health and readiness never are.
  if (!route.path.startsWith("/health")) codes.add("overloaded");
  if (route.params) for (const code of ["validation_failed", "malformed_path"] as const) codes.add(code);
  if (route.query) codes.add("validation_failed");
  if (route.body || route.method === "post") for (const code of BODY) codes.add(code);
  if (route.auth) for (const code of AUTH) codes.add(code);
  // A key is looked up in the database: while it is out of reach, 503 (retry shortly).
  if (route.auth) codes.add("upstream_unavailable");
  if (route.auth && route.method === "post") {
    // Idempotency-Key: a malformed one is a validation error.
    for (const code of ["validation_failed", "idempotency_key_reused", "idempotency_request_in_progress"] as const)
      codes.add(code);
  }
  for (const code of route.problems ?? []) codes.add(code);
  return [...codes];
}
