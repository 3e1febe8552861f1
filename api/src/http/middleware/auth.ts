import type { RequestHandler } from "express";
import type { Config } from "../../config.ts";
import { Problem, problems } from "../problems.ts";
import { type KeyService, checkRestrictions } from "../../domain/keys.ts";

/** Bearer API keys: 401 with WWW-Authenticate for every way a key can be wrong. */
export function authenticate(keys: KeyService, config: Config, onFailure: RequestHandler): RequestHandler {
  return async (req, res, next) => {
    try {
      const header = req.get("authorization");
      if (!header)
        throw problems.unauthorized("missing_api_key", "Send your API key as `Authorization: Bearer <key>`.");
      const [scheme, token, ...rest] = header.split(" ");
      if (scheme?.toLowerCase() !== "bearer" || !token || rest.length > 0) {
        throw problems.unauthorized("malformed_authorization", "The Authorization header must be `Bearer <key>`.");
      }
      const result = await keys.authenticate(token, config.ENVIRONMENT);
      if (!result.ok) {
        switch (result.reason) {
          case "malformed":
            throw problems.unauthorized("malformed_api_key", "API keys look like sk_test_… or sk_live_….");
          case "revoked":
            throw problems.unauthorized("revoked_api_key", "This API key was revoked.");
          case "wrong_environment": {
            const baseUrl = result.environment === "production" ? config.PRODUCTION_BASE_URL : config.SANDBOX_BASE_URL;
            throw problems.unauthorized(
              "wrong_environment",
              `This is a ${result.environment} key; this server is the ${config.ENVIRONMENT} environment.` +
                (baseUrl ? ` Call ${baseUrl} with it.` : ""),
              { keyEnvironment: result.environment, ...(baseUrl && { baseUrl }) },
            );
          }
          default:
            throw problems.unauthorized("invalid_api_key", "This API key does not exist.");
        }
      }
      // Known before the restrictions are checked, so that a refused call shows in the key's request log.
      res.locals.apiKey = result.key;
      const route = res.locals.route as string | undefined;
      switch (checkRestrictions(result.key.restrictions, req.method, route, req.ip)) {
        case "ip":
          throw new Problem(
            403,
            "key_ip_not_allowed",
            "Address not allowed for this key",
            "This API key may not be used from this address.",
          );
        case "resource":
          throw new Problem(
            403,
            "key_resource_not_allowed",
            "Resource not allowed for this key",
            `This API key may not call ${route ?? req.path}.`,
          );
        case "read_only":
          throw new Problem(
            403,
            "key_read_only",
            "Key is read-only",
            `This API key is read-only: ${req.method} is refused.`,
          );
      }
      next();
    } catch (error) {
      // A failed authentication still counts, against the client address.
      onFailure(req, res, (limited?: unknown) => next(limited ?? error));
    }
  };
}
