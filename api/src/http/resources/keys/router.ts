import {
  type ApiKey,
  KeyBroaderError,
  KeyLimitError,
  type KeyService,
  noBroaderThan,
} from "../../../domain/accounts/keys.ts";
import { apiKeySchema, createKeyBody, createdKeySchema, keyIdParams, keyListSchema } from "./schema.ts";
import { Problem, problems } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";

const EXAMPLE_KEY = {
  object: "api_key",
  id: "key_3kTm9QxZ2bLw7VfA",
  name: "checkout backend",
  environment: "sandbox",
  prefix: "sk_test_",
  last4: "x9Qa",
  createdAt: "2026-03-02T10:15:00.000Z",
  lastUsedAt: null,
  revokedAt: null,
};

// Restrictions are set on the dashboard and not (yet) part of this resource's schema.
// The last four characters of a key broader than the caller are withheld: a
// restricted key learns that such a key exists, not a part of its secret.
const present = (caller: ApiKey, { accountId: _account, restrictions, ...key }: ApiKey) => ({
  object: "api_key" as const,
  ...key,
  last4: noBroaderThan(restrictions, caller.restrictions) ? key.last4 : null,
});

/** The account's own keys: what the dashboard's API Keys tab calls. */
/** Keys of the caller's environment only: a sandbox key neither sees nor touches production keys. */
export function keyRoutes(keys: KeyService, maxActive: number): AnyRoute[] {
  return [
    route({
      method: "post",
      path: "/keys",
      operationId: "createApiKey",
      summary: "Create an API key for this environment (the secret is shown once)",
      tag: "API keys",
      auth: true,
      body: createKeyBody,
      requestExamples: { key: { summary: "A key for one app", value: { name: "checkout backend" } } },
      responses: {
        201: {
          description: "The new key, with its secret",
          schema: createdKeySchema,
          example: { ...EXAMPLE_KEY, secret: `sk_test_${"7Hq2".repeat(12)}` },
        },
      },
      problems: ["key_limit_reached", "key_environment_not_allowed"],
      handler: async ({ body }, _req, res) => {
        const caller = res.locals.apiKey as ApiKey;
        // The dashboard makes keys of either environment behind a signed-in session; a bearer key is weaker
        // proof (sandbox keys live in test configs and CI), so it makes keys of its own environment only.
        if (body.environment !== undefined && body.environment !== caller.environment) {
          throw new Problem(
            403,
            "key_environment_not_allowed",
            "Key of another environment",
            `This ${caller.environment} key may not make ${body.environment} keys: make them on the dashboard's ` +
              `API Keys tab, or with a ${body.environment} key on the ${body.environment} API.`,
            { keyEnvironment: caller.environment },
          );
        }
        const created = await keys
          // A restricted key makes keys no wider than itself (the dashboard sets restrictions).
          .create(caller.accountId, caller.environment, body.name, {
            maxActive,
            restrictions: caller.restrictions,
            idempotency: res.locals.idempotency as { key: string; ttlHours: number } | undefined,
          })
          .catch((error: unknown) => {
            if (!(error instanceof KeyLimitError)) throw error;
            throw new Problem(
              409,
              "key_limit_reached",
              "Key limit reached",
              `This account holds ${error.limit} active ${caller.environment} keys, the most allowed; revoke one first.`,
              { limit: error.limit },
            );
          });
        res.locals.idempotencyRedact = ["secret"];
        return { status: 201, body: present(caller, created) };
      },
    }),
    route({
      method: "get",
      path: "/keys",
      operationId: "listApiKeys",
      summary: "List the account's API keys of this environment (prefix and last four characters only)",
      tag: "API keys",
      auth: true,
      responses: {
        200: { description: "The keys", schema: keyListSchema, example: { object: "list", data: [EXAMPLE_KEY] } },
      },
      handler: async (_input, _req, res) => {
        const caller = res.locals.apiKey as ApiKey;
        return {
          status: 200,
          body: {
            object: "list",
            data: (await keys.list(caller.accountId, caller.environment)).map((key) => present(caller, key)),
          },
        };
      },
    }),
    route({
      method: "delete",
      path: "/keys/:keyId",
      operationId: "revokeApiKey",
      summary: "Revoke an API key of the account",
      tag: "API keys",
      auth: true,
      params: keyIdParams,
      responses: {
        200: {
          description: "The revoked key",
          schema: apiKeySchema,
          example: { ...EXAMPLE_KEY, revokedAt: "2026-03-09T08:00:00.000Z" },
        },
      },
      problems: ["resource_not_found", "key_broader_than_caller"],
      handler: async ({ params }, _req, res) => {
        const caller = res.locals.apiKey as ApiKey;
        const revoked = await keys
          .revoke(caller.accountId, params.keyId, caller.environment, caller.restrictions)
          .catch((error: unknown) => {
            if (!(error instanceof KeyBroaderError)) throw error;
            throw new Problem(
              403,
              "key_broader_than_caller",
              "Key has more rights than this one",
              `API key ${error.keyId} has rights this key lacks (more resources, writing, or more addresses), ` +
                "so this key may not revoke it. Revoke it on the dashboard or with a key at least as broad.",
            );
          });
        if (!revoked) throw problems.resourceNotFound(`API key ${params.keyId}`);
        return { status: 200, body: present(caller, revoked) };
      },
    }),
  ];
}
