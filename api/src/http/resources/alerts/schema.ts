import { z } from "zod";
import { prefixedId } from "../../formats.ts";

const agentId = prefixedId("agt", 20, "an agent id").describe("The agent acting");
const alertId = prefixedId("alt", 20, "an alert id");
const subjectId = z.string().trim().min(1).max(200);
const severity = z.enum(["low", "medium", "high", "severe"]);
const status = z.enum(["open", "in_review", "dismissed", "confirmed"]);
const subjectType = z.enum(["mint", "redemption", "deposit", "address", "payout", "position_action"]);
/** A payout (its on-chain id) is held by the payouts only, when redirected from one compliance refused. */
const raisableType = subjectType.exclude(["payout"]);
/** What a verdict decides: a mint, redemption or position action waiting for one. */
const holdableType = z.enum(["mint", "redemption", "position_action"]);
const code = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "a code in snake case (a-z, 0-9, _), at most 64 characters");

export const raiseAlertBody = z.strictObject({
  agentId,
  subject: z.strictObject({
    type: raisableType,
    id: subjectId.describe(
      "A mint id (mint_…), a redemption id (red_…), a position action id (pact_…), a deposit's leaf or an address",
    ),
  }),
  severity,
  category: code.describe("What kind of risk, e.g. sanctions, velocity, large_amount"),
  reason: z.string().trim().min(1).max(1000).describe("Why, for the people who review it"),
  action: z
    .enum(["none", "hold"])
    .default("none")
    .describe(
      "hold (screener agents only): a queued mint or position action, or an unpaid redemption, stops until released or rejected",
    ),
});

export const alertsQuery = z.strictObject({
  status: status.optional(),
  severity: severity.optional(),
  subjectType: subjectType.optional(),
  subjectId: subjectId.optional(),
  raisedBy: z.string().max(40).optional().describe("An agent id, or rules for the built-in rules agent"),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("At most this many, newest first"),
  startingAfter: alertId.optional().describe("The last alert of the previous page"),
});

export const alertIdParams = z.object({ alertId });

export const updateAlertBody = z.strictObject({
  agentId,
  status: status.exclude(["open"]),
  closeReason: z.string().trim().min(1).max(500).optional().describe("Required to dismiss or confirm"),
});

export const releaseBody = z.strictObject({
  agentId,
  note: z.string().trim().min(1).max(500).optional(),
});

export const rejectBody = z.strictObject({
  agentId,
  reasonCode: code.describe("Why, as a code: written on the failed mint or with the on-chain failure of the payout"),
});

export const verdictBody = z.strictObject({
  agentId,
  subject: z.strictObject({ type: holdableType, id: subjectId }),
  verdict: z.enum(["PASSED", "REJECTED"]),
  reason: code.optional().describe("Why, as a code (kept with a rejection)"),
});

const historyEntry = z.object({
  status: z.enum(["open", "in_review", "dismissed", "confirmed", "released", "rejected"]),
  at: z.iso.datetime(),
  by: z.string().describe("An agent id, rules or verdict_timeout"),
  note: z.string().optional(),
});

export const alertSchema = z
  .object({
    object: z.literal("alert"),
    alertId: z.string(),
    raisedBy: z.string().describe("The agent id, or rules for the built-in rules agent"),
    subject: z.object({ type: subjectType, id: z.string() }),
    severity,
    category: z.string(),
    reason: z.string(),
    action: z.enum(["none", "hold"]),
    status,
    closeReason: z.string().nullable(),
    hold: z
      .enum(["awaiting_verdict", "held", "released", "rejected"])
      .nullable()
      .describe("Where the hold this alert placed stands"),
    history: z.array(historyEntry).describe("Every change: what, when and by whom"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Alert" });

export const alertListSchema = z.object({
  object: z.literal("list"),
  data: z.array(alertSchema),
  hasMore: z.boolean(),
});

export const verdictSchema = z.object({
  object: z.literal("verdict"),
  subject: z.object({ type: holdableType, id: z.string() }),
  verdict: z.enum(["PASSED", "REJECTED"]),
  hold: z.enum(["released", "rejected"]),
});
