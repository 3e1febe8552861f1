import type { RequestHandler } from "express";
import type { Config } from "../../config.ts";
import { problems } from "../problems.ts";
import type { KeyService } from "../../domain/keys.ts";

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
      res.locals.apiKey = result.key;
      next();
    } catch (error) {
      // A failed authentication still counts, against the client address.
      onFailure(req, res, (limited?: unknown) => next(limited ?? error));
    }
  };
}
