import { z } from "zod";
import { EVENT_TYPES } from "../../../domain/agents/events.ts";
import { prefixedId } from "../../formats.ts";

const eventTypes = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length * 2)
  // A type named twice is subscribed once.
  .transform((events) => [...new Set(events)])
  .describe("The event types sent to the agent");

const webhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .describe(
    "Where events are posted. In production: https, resolving to public addresses only; " +
      "the sandbox also allows http and loopback",
  );
const name = z.string().trim().min(1).max(100).describe("A label for the agent");
const description = z.string().trim().max(500);
const role = z
  .enum(["observer", "screener"])
  .describe(
    "observer: receives events; screener: may also hold and be asked for verdicts on mints, redemptions and position actions",
  );

export const registerAgentBody = z.strictObject({
  name,
  webhookUrl,
  events: eventTypes,
  description: description.optional(),
  role,
});

export const updateAgentBody = z
  .strictObject({
    name: name.optional(),
    webhookUrl: webhookUrl.optional(),
    events: eventTypes.optional(),
    description: description.nullable().optional().describe("null clears it"),
    role: role.optional(),
    enabled: z.boolean().optional().describe("false stops deliveries (pending ones fail); true resumes them"),
  })
  .refine((changes) => Object.keys(changes).length > 0, "name at least one field to change");

export const agentIdParams = z.object({
  agentId: prefixedId("agt", 20, "an agent id"),
});

export const deliveryParams = agentIdParams.extend({
  deliveryId: prefixedId("dlv", 20, "a delivery id"),
});

export const deliveriesQuery = z.object({
  status: z.enum(["pending", "succeeded", "failed"]).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("At most this many, newest first"),
});

export const retrySinceBody = z.strictObject({
  since: z.iso
    .datetime({ offset: true })
    .describe("Every failed delivery made at or after this time is sent again")
    .transform((since) => new Date(since)),
});

export const agentSchema = z
  .object({
    object: z.literal("agent"),
    agentId: z.string(),
    environment: z.enum(["sandbox", "production"]),
    name: z.string(),
    description: z.string().nullable(),
    role: z.enum(["observer", "screener"]),
    webhookUrl: z.string(),
    events: z.array(z.enum(EVENT_TYPES)),
    enabled: z.boolean(),
    disabledReason: z
      .enum(["requested", "gone", "failing"])
      .nullable()
      .describe(
        "requested (by its owner), gone (the endpoint answered 410) or failing (every attempt failed for days)",
      ),
    disabledAt: z.iso.datetime().nullable(),
    previousSecretExpiresAt: z.iso
      .datetime()
      .nullable()
      .describe("After a rotation: until when the previous secret still signs beside the new one"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Agent" });

export const agentWithSecretSchema = agentSchema
  .extend({
    secret: z
      .string()
      .nullable()
      .describe(
        "The signing secret (whsec_…): shown once, store it now (null when an Idempotency-Key replays the request)",
      ),
  })
  .meta({ id: "AgentWithSecret" });

export const agentListSchema = z
  .object({ object: z.literal("list"), data: z.array(agentSchema) })
  .meta({ id: "AgentList" });

export const deletedAgentSchema = z
  .object({ object: z.literal("agent"), agentId: z.string(), deleted: z.literal(true) })
  .meta({ id: "DeletedAgent" });

export const deliverySchema = z
  .object({
    object: z.literal("webhook_delivery"),
    deliveryId: z.string(),
    agentId: z.string(),
    eventId: z.string().describe("The event's id, sent as webhook-id on every attempt"),
    eventType: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attemptCount: z.number().int(),
    nextAttemptAt: z.iso.datetime().nullable(),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    attempts: z
      .array(
        z.object({
          attempt: z.number().int(),
          startedAt: z.iso.datetime(),
          responseStatus: z.number().int().nullable(),
          latencyMs: z.number().int(),
          error: z.string().nullable(),
        }),
      )
      .describe("The latest attempts, newest first"),
  })
  .meta({ id: "WebhookDelivery" });

export const deliveryListSchema = z
  .object({ object: z.literal("list"), data: z.array(deliverySchema) })
  .meta({ id: "WebhookDeliveryList" });

export const retriedSchema = z
  .object({
    object: z.literal("delivery_retry"),
    agentId: z.string(),
    since: z.iso.datetime(),
    count: z.number().int().describe("Failed deliveries queued again"),
  })
  .meta({ id: "DeliveryRetry" });
