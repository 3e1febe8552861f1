// What each position and withdrawal event's `data` holds (the webhook payloads
// of workers/relay/position-relay.ts): the action or withdrawal as GET answers it,
// without `object` and its timestamps. Merged into the document's webhooks by
// ../agents/events.ts.
import { z } from "zod";
import { positionActionSchema, withdrawalSchema } from "./schema.ts";

// Without the Zcash address: a webhook receiver is no place for it; GET answers show it to the account.
const action = positionActionSchema
  .omit({ object: true, createdAt: true, updatedAt: true, hold: true })
  .extend({
    destination: z
      .union([z.strictObject({ zcashAddress: z.literal("sealed") }), z.strictObject({ noteCommitment: z.string() })])
      .nullable()
      .describe(
        'Where the ZEC went: a Zcash address ("sealed": GET /v1/positions/{id}/actions/{actionId} shows it) or a note',
      ),
  })
  .strict();
const actionId = z.string().describe("The position action (pact_…)");
const withdrawal = withdrawalSchema
  .omit({ object: true, createdAt: true, updatedAt: true, zcashAddress: true })
  .strict()
  .describe("The withdrawal as GET /v1/withdrawals/{id} shows it, without its Zcash address");

export const POSITION_EVENT_PAYLOADS = {
  "position.action.confirmed": action,
  "position.action.failed": action,
  "position.action.held": z.strictObject({
    actionId,
    alertId: z.string().nullable().describe("The alert holding it (null while a verdict is awaited)"),
    awaitingVerdict: z.boolean().describe("Screening is required and no verdict came yet"),
  }),
  "position.action.released": z.strictObject({
    actionId,
    by: z.string().describe("The screener agent (or verdict_timeout) that released it"),
  }),
  "withdrawal.confirmed": withdrawal,
  "withdrawal.failed": withdrawal,
};

export const POSITION_EVENT_SUMMARIES = {
  "position.action.confirmed":
    "A repayment, withdrawal, close, liquidation or top-up this account relayed was mined (payoutId: the ZEC's payout)",
  "position.action.failed":
    "A position action this account relayed failed: failureCode says why (compliance_rejected: a screener refused it, unsent)",
  "position.action.held":
    "A queued position action is held by an alert, or waits for a screener's verdict: the relay sends none of the signer's",
  "position.action.released": "A held position action was released and moves on",
  "withdrawal.confirmed": "A note withdrawal this account relayed was mined: custody pays payoutId",
  "withdrawal.failed": "A note withdrawal this account relayed failed: failureCode says why",
};

const TX = "0x2e7a9c1b3d5f7092a4c6e8f0b2d4f6a8c0e2f4a6b8d0f2a4c6e8a0b2d4f6a8c0";
const ACTION = {
  actionId: "pact_4Rt8vN2kQ7xZ1mB5cW9y",
  positionId: "7",
  action: "close" as const,
  signer: "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF",
  amount: null,
  destination: { zcashAddress: "sealed" as const },
  released: "3.0",
  noteSequence: null,
  status: "confirmed" as const,
  txHash: TX,
  blockNumber: 1290,
  payoutId: "12",
  failureCode: null,
  failureReason: null,
};
const WITHDRAWAL = {
  withdrawalId: "wdr_8Kp2xV5nQ1mZ7tB3cR9w",
  amount: "3.0",
  owner: "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF",
  nullifierHash: "4923775312096713460294711538476215398812345678901234567890123456789012345",
  status: "confirmed" as const,
  txHash: TX,
  blockNumber: 1291,
  payoutId: "13",
  failureCode: null,
  failureReason: null,
};

export const POSITION_EVENT_EXAMPLES: {
  [T in keyof typeof POSITION_EVENT_PAYLOADS]: z.input<(typeof POSITION_EVENT_PAYLOADS)[T]>;
} = {
  "position.action.confirmed": ACTION,
  "position.action.failed": {
    ...ACTION,
    status: "failed",
    released: null,
    txHash: null,
    blockNumber: null,
    payoutId: null,
    failureCode: "position_undercollateralized",
    failureReason: "Position 7 would be worth $120, under the $150 the minimum ratio needs.",
  },
  "position.action.held": { actionId: ACTION.actionId, alertId: "alt_9QmX4vT7nK2pR8wZ1cB6", awaitingVerdict: false },
  "position.action.released": { actionId: ACTION.actionId, by: "agt_3Hn6pQ9rT2vX5zB8cD1f" },
  "withdrawal.confirmed": WITHDRAWAL,
  "withdrawal.failed": {
    ...WITHDRAWAL,
    status: "failed",
    txHash: null,
    blockNumber: null,
    payoutId: null,
    failureCode: "nullifier_spent",
    failureReason: "The note was spent by another transaction first.",
  },
};
