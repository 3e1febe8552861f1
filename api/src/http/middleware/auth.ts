import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Config } from "../../config/config.ts";
import { Problem, problems } from "../problems.ts";
import {
  type AuthResult,
  KEY_PREFIX,
  type KeyService,
  checkRestrictions,
  keyShapeProblem,
} from "../../domain/accounts/keys.ts";

/** Bearer API keys: 401 with WWW-Authenticate for every way a key can be wrong. */
export function authenticate(keys: KeyService, config: Config, onFailure: RequestHandler): RequestHandler {
  // A failed authentication still counts, against the client address.
  const refuse = (req: Request, res: Response, next: NextFunction, error: unknown) =>
    onFailure(req, res, (limited?: unknown) => next(limited ?? error));
  const admit = (req: Request, res: Response, next: NextFunction, token: string, result: AuthResult) => {
    try {
      admitted(result, token, config, req, res);
    } catch (error) {
      return refuse(req, res, next, error);
    }
    next();
  };
  return (req, res, next) => {
    let token: string;
    try {
      token = bearerToken(req.get("authorization"));
    } catch (error) {
      return refuse(req, res, next, error);
    }
    // A key verified moments ago answers at once; otherwise the database says.
    const known = keys.authenticateCached(token, config.ENVIRONMENT);
    if (known) return admit(req, res, next, token, known);
    keys.authenticate(token, config.ENVIRONMENT).then(
      (result) => admit(req, res, next, token, result),
      (error: unknown) => refuse(req, res, next, error),
    );
  };
}

/** The token of an `Authorization: Bearer <key>` header. */
function bearerToken(header: string | undefined): string {
  if (!header) throw problems.unauthorized("missing_api_key", "Send your API key as `Authorization: Bearer <key>`.");
  const [scheme, token, ...rest] = header.split(" ");
  if (scheme?.toLowerCase() !== "bearer" || !token || rest.length > 0) {
    throw problems.unauthorized("malformed_authorization", "The Authorization header must be `Bearer <key>`.");
  }
  return token;
}

/** Throws the problem for a key that may not make this request; otherwise records it as the caller. */
function admitted(result: AuthResult, token: string, config: Config, req: Request, res: Response): void {
  if (!result.ok) {
    switch (result.reason) {
      case "malformed":
        throw problems.unauthorized("malformed_api_key", keyShapeProblem(token));
      case "revoked":
        throw problems.unauthorized(
          "revoked_api_key",
          "This API key was revoked: use another key of the account, or create one on the dashboard's API Keys tab.",
        );
      case "wrong_environment": {
        const other = result.environment;
        const setting = other === "production" ? "PRODUCTION_BASE_URL" : "SANDBOX_BASE_URL";
        const baseUrl = config[setting];
        const here = `or use a ${KEY_PREFIX[config.ENVIRONMENT]}… key with this server.`;
        throw problems.unauthorized(
          "wrong_environment",
          `This is a ${other} key; this server is the ${config.ENVIRONMENT} environment. ` +
            (baseUrl
              ? `Call ${baseUrl} with it, ${here}`
              : // Named when known; otherwise say so, rather than leave the caller looking for an address.
                `This server is not told where the ${other} API answers (its ${setting} is unset): call the ` +
                `${other} base address of the deployment that issued the key, ${here}`),
          { keyEnvironment: other, ...(baseUrl && { baseUrl }) },
        );
      }
      default:
        throw problems.unauthorized(
          "invalid_api_key",
          "No API key has this secret, though it is shaped like one: it is mistyped, was deleted with its " +
            "account, or belongs to another deployment. Check it, or create a key on the dashboard's API Keys tab.",
        );
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
}
