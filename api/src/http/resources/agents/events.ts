// What each event's `data` holds, defined once: the OpenAPI document's
// `webhooks` are generated from it, and the tests check every delivered
// event against that document, so a payload the code emits differently fails
// them. Keyed by every event type: a new type does not compile without one.
import { z } from "zod";
import type { EventType } from "../../../domain/agents/events.ts";
import { alertSchema } from "../alerts/schema.ts";
import {
  GOVERNANCE_EVENT_EXAMPLES,
  GOVERNANCE_EVENT_PAYLOADS,
  GOVERNANCE_EVENT_SUMMARIES,
} from "../governance/events.ts";
import { POSITION_EVENT_EXAMPLES, POSITION_EVENT_PAYLOADS, POSITION_EVENT_SUMMARIES } from "../positions/events.ts";

const id = (prefix: string, what: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]{20}$`), `${what} id (${prefix}_…)`);
const mintId = id("mint", "a mint").describe("The mint (GET /v1/mints/{mintId})");
const redemptionId = id("red", "a redemption").describe("The redemption (GET /v1/redemptions/{redemptionId})");
const alertId = id("alt", "an alert");
const agentId = id("agt", "an agent");
const decimal = z.string().regex(/^\d+(\.\d+)?$/, "a decimal amount");
const zsd = decimal.describe("ZSD, a decimal string");
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an EVM address");
const failureCode = z
  .string()
  .regex(/^[a-z][a-z0-9_]*$/)
  .describe("Why, as a stable snake-case code (compliance_rejected, erc20_insufficient_balance, …)");
const by = z.string().describe("Who decided: a screener agent's id, or verdict_timeout (the configured default)");

/** An alert as GET /v1/alerts/{alertId} answers it, without `object`. */
const eventAlert = alertSchema.omit({ object: true }).meta({
  id: "EventAlert",
  description: "The alert as it stands after the change, as GET /v1/alerts/{alertId} answers it (without `object`)",
});

/** Set when the hold is on a payout redirected from the redemption's payout that compliance refused. */
const redirectedPayout = z
  .string()
  .optional()
  .describe(
    "The on-chain payout held (or released): one its owner redirected from this redemption's payout that compliance " +
      "refused; absent when the redemption itself is held",
  );

const holdFields = {
  alertId: alertId.nullable().describe("The alert that placed the hold; null when it waits for a verdict"),
  awaitingVerdict: z.boolean().describe("Screening is required: it waits for POST /v1/agents/verdicts"),
};

const zatString = z
  .string()
  .regex(/^-?[0-9]+$/)
  .describe("Zatoshi, a decimal integer string");
const reservesPayload = z.strictObject({
  status: z.enum(["ok", "shortfall"]),
  heldZat: zatString.describe("What custody's node shows its address holding"),
  inFlightZat: zatString.describe("Payouts sent by custody and not yet settled on the chain"),
  expectedZat: zatString.describe("The registry's collateral: deposits recorded less payouts completed"),
  differenceZat: zatString.describe("held + in flight − expected; negative is a shortfall"),
  blockNumber: z.number().int().nonnegative(),
  zcashHeight: z.number().int().nonnegative(),
  mintsPaused: z.boolean().describe("Whether new mints are stopped (the guardian stops them on a shortfall)"),
  readAt: z.string(),
});

export const EVENT_PAYLOADS = {
  "mint.queued": z.strictObject({ mintId, amount: zsd, recipient: evmAddress }),
  "mint.confirmed": z.strictObject({
    mintId,
    amount: zsd,
    recipient: evmAddress,
    positionId: z.string().nullable().describe("The position the mint opened (GET /v1/positions/{positionId})"),
    txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    blockNumber: z.number().int().nonnegative(),
  }),
  "mint.failed": z.strictObject({
    mintId,
    failureCode,
    failureReason: z.string().describe("Why, for people"),
  }),
  "mint.held": z.strictObject({ mintId, ...holdFields }),
  "mint.released": z.strictObject({ mintId, by }),
  "redemption.requested": z.strictObject({
    redemptionId,
    owner: evmAddress,
    amount: zsd,
  }),
  "redemption.paid": z.strictObject({
    redemptionId,
    zecPaid: decimal.describe("ZEC sent, a decimal string"),
    zcashTxId: z
      .string()
      .describe("The Zcash transaction that paid it, as zcashd and explorers show it (byte-reversed, no 0x)"),
  }),
  "redemption.failed": z.strictObject({
    redemptionId,
    failureCode,
    failureReason: z.string().optional().describe("Why, for people"),
    zecHeld: decimal
      .nullable()
      .describe(
        "Custody could not pay: this ZEC is held on-chain for the owner, who redirects it (no ZSD is returned); " +
          "null when the redemption failed before its burn (nothing was taken)",
      ),
    payoutId: z.string().nullable().describe("The on-chain payout whose ZEC is held (null before a burn)"),
    redirect: z
      .string()
      .nullable()
      .describe("How the owner redirects the held ZEC: POST /v1/redemptions/{id}/redirect (null before a burn)"),
  }),
  "redemption.held": z.strictObject({ redemptionId, ...holdFields, payoutId: redirectedPayout }),
  "redemption.released": z.strictObject({ redemptionId, by, payoutId: redirectedPayout }),
  "deposit.recorded": z.strictObject({
    leafIndex: z.number().int().nonnegative().describe("The deposit's leaf in the commitment tree"),
    amount: decimal.describe("ZEC, a decimal string"),
    amountZat: z.string().regex(/^\d+$/).describe("The same in zatoshi"),
    noteCommitment: z.string().regex(/^\d+$/).describe("The note commitment, a decimal field element"),
  }),
  "alert.raised": z.strictObject({ alert: eventAlert }),
  "alert.updated": z.strictObject({ alert: eventAlert }),
  "agent.disabled": z.strictObject({
    agentId,
    name: z.string(),
    reason: z
      .enum(["requested", "gone", "failing"])
      .describe("requested (by the account), gone (its endpoint answered 410), failing (every retry failed)"),
    disabledAt: z.iso.datetime(),
  }),
  ping: z.strictObject({ agentId, message: z.string() }),
  "reserves.shortfall": reservesPayload,
  "reserves.restored": reservesPayload,
  ...GOVERNANCE_EVENT_PAYLOADS,
  ...POSITION_EVENT_PAYLOADS,
} satisfies Record<EventType, z.ZodType>;

/** What each event tells of, for the document. */
export const EVENT_SUMMARIES: Record<EventType, string> = {
  "mint.queued": "A mint was accepted and queued for the relay",
  "mint.confirmed": "A mint's transaction was mined: the ZSD is the recipient's",
  "mint.failed": "A mint failed (refused on-chain, or rejected by compliance); its proof says whether it can be reused",
  "mint.held": "A queued mint is held by an alert, or waits for a screener's verdict",
  "mint.released": "A held mint was released and moves on",
  "redemption.requested": "A signed redemption was accepted and queued",
  "redemption.paid": "A redemption's ZEC was sent",
  "redemption.failed":
    "A redemption failed before its burn, or custody could not pay it: its ZEC is then held for the owner to redirect",
  "redemption.held": "A redemption is held by an alert, or waits for a screener's verdict",
  "redemption.released": "A held redemption was released and moves on",
  "deposit.recorded": "A deposit's note commitment was added to the tree (nothing links it to a mint)",
  "alert.raised": "An alert was raised (by an agent or the built-in rules agent)",
  "alert.updated": "An alert moved on: reviewed, closed, or its hold released or rejected",
  "agent.disabled": "An agent of the account was disabled",
  "reserves.shortfall":
    "Custody's ZEC fell short of what the chain counts by more than the tolerance; new mints are stopped (sent to every account's subscribed agents)",
  "reserves.restored":
    "Custody's ZEC is back within the tolerance of what the chain counts; mints the watch stopped resume",
  ping: "A test event, sent to one agent by POST /v1/agents/{agentId}/test",
  ...GOVERNANCE_EVENT_SUMMARIES,
  ...POSITION_EVENT_SUMMARIES,
};

const MINT = "mint_7KpX2mN9qR4tV6wY8zA1";
const REDEMPTION = "red_3FgH5jK7lZ9xC1vB3nM5";
const ALERT = "alt_8HwV2nQk5TzR1mXb6LcP";
const AGENT = "agt_4kQ9zR2mT7vB1nX8cL5p";
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const EXAMPLE_ALERT = {
  alertId: ALERT,
  raisedBy: "rules",
  subject: { type: "mint", id: MINT },
  severity: "high",
  category: "denied_address",
  reason: "The recipient is on the deny list.",
  action: "hold",
  status: "open",
  closeReason: null,
  hold: "held",
  history: [{ status: "open", at: "2026-03-09T08:00:00.000Z", by: "rules" }],
  createdAt: "2026-03-09T08:00:00.000Z",
  updatedAt: "2026-03-09T08:00:00.000Z",
};

/** An example `data` per event type (each passes its schema: test/api/http/openapi.test.ts). */
export const EVENT_EXAMPLES: { [T in EventType]: z.input<(typeof EVENT_PAYLOADS)[T]> } = {
  "mint.queued": { mintId: MINT, amount: "100", recipient: RECIPIENT },
  "mint.confirmed": {
    mintId: MINT,
    amount: "100",
    recipient: RECIPIENT,
    positionId: "7",
    txHash: "0x8f3c2a9e1b7d4f6a0c5e8b2d9f1a3c7e5b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a",
    blockNumber: 1842,
  },
  "mint.failed": {
    mintId: MINT,
    failureCode: "compliance_rejected",
    failureReason: "Refused by compliance (agt_4kQ9zR2mT7vB1nX8cL5p: sanctions).",
  },
  "mint.held": { mintId: MINT, alertId: ALERT, awaitingVerdict: false },
  "mint.released": { mintId: MINT, by: AGENT },
  "redemption.requested": {
    redemptionId: REDEMPTION,
    owner: RECIPIENT,
    amount: "25.5",
  },
  "redemption.paid": {
    redemptionId: REDEMPTION,
    zecPaid: "0.6375",
    zcashTxId: "1d4b6e8a0c2f4d6b8e0a2c4f6d8b0e2a4c6f8d0b2e4a6c8f0d2b4e6a8c0f2d4b",
  },
  "redemption.failed": {
    redemptionId: REDEMPTION,
    failureCode: "unreadable_address",
    failureReason:
      "Custody cannot open or pay this payout's sealed address (sealed to another key or owner, not a shielded address of this network, or used by an earlier payout). Its ZEC is held on-chain for the owner (no ZSD is returned): the owner redirects it to another shielded address or into a note.",
    zecHeld: "0.6375",
    payoutId: "12",
    redirect:
      "POST /v1/redemptions/{id}/redirect with a sealedAddress or a noteCommitment, a deadline and the owner's EIP-712 Redirect signature (SDK: redemptions.redirect).",
  },
  "redemption.held": { redemptionId: REDEMPTION, alertId: null, awaitingVerdict: true },
  "redemption.released": { redemptionId: REDEMPTION, by: "verdict_timeout" },
  "deposit.recorded": {
    leafIndex: 41,
    amount: "4",
    amountZat: "400000000",
    noteCommitment: "8123904712390487123094871230948712309487123094871230948712309487",
  },
  "alert.raised": { alert: EXAMPLE_ALERT as z.input<typeof eventAlert> },
  "alert.updated": {
    alert: {
      ...EXAMPLE_ALERT,
      hold: "released",
      history: [
        ...EXAMPLE_ALERT.history,
        { status: "released", at: "2026-03-09T08:04:00.000Z", by: AGENT, note: "Customer verified" },
      ],
      updatedAt: "2026-03-09T08:04:00.000Z",
    } as z.input<typeof eventAlert>,
  },
  "agent.disabled": { agentId: AGENT, name: "Screening desk", reason: "gone", disabledAt: "2026-03-09T08:00:00.000Z" },
  "reserves.shortfall": {
    status: "shortfall",
    heldZat: "4900000000",
    inFlightZat: "0",
    expectedZat: "5000000000",
    differenceZat: "-100000000",
    blockNumber: 1204,
    zcashHeight: 2710000,
    mintsPaused: true,
    readAt: "2026-03-09T08:00:00.000Z",
  },
  "reserves.restored": {
    status: "ok",
    heldZat: "5000000000",
    inFlightZat: "0",
    expectedZat: "5000000000",
    differenceZat: "0",
    blockNumber: 1210,
    zcashHeight: 2710004,
    mintsPaused: false,
    readAt: "2026-03-09T09:00:00.000Z",
  },
  ping: { agentId: AGENT, message: "A test event sent on request (POST /v1/agents/{agentId}/test)." },
  ...GOVERNANCE_EVENT_EXAMPLES,
  ...POSITION_EVENT_EXAMPLES,
};
