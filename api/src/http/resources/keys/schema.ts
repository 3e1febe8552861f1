import { z } from "zod";
import { prefixedId } from "../../formats.ts";

export const createKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).describe("A label for the key, e.g. the app that uses it"),
  environment: z
    .enum(["sandbox", "production"])
    .optional()
    .describe(
      "The new key's environment: the calling key's own (the default). A sandbox key cannot make production keys " +
        "(key_environment_not_allowed): make those on the dashboard's API Keys tab, or with a production key.",
    ),
});

export const keyIdParams = z.object({ keyId: prefixedId("key", 16, "a key id") });

export const apiKeySchema = z
  .object({
    object: z.literal("api_key"),
    id: z.string(),
    name: z.string(),
    environment: z.enum(["sandbox", "production"]),
    prefix: z.string().describe("sk_test_ or sk_live_"),
    last4: z
      .string()
      .nullable()
      .describe("The key's last four characters; null for a key with rights the calling key lacks"),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "ApiKey" });

export const createdKeySchema = apiKeySchema
  .extend({
    secret: z
      .string()
      .nullable()
      .describe("The key itself: shown once, store it now (null when an Idempotency-Key replays the creation)"),
  })
  .meta({ id: "CreatedApiKey" });

export const keyListSchema = z
  .object({ object: z.literal("list"), data: z.array(apiKeySchema) })
  .meta({ id: "ApiKeyList" });
