import type { ApiKey } from "../../../domain/accounts/keys.ts";
import type { PositionService } from "../../../domain/positions/positions.ts";
import { type ProblemCode, ZCASH_ADDRESS_PROBLEM_CODES } from "../../problem-catalog.ts";
import { type AnyRoute, route } from "../../routes.ts";
import {
  actionIdParams,
  actionParams,
  closeBody,
  liquidateBody,
  positionActionSchema,
  positionIdParams,
  positionSchema,
  positionTermsSchema,
  repayBody,
  termsQuery,
  topUpBody,
  withdrawBody,
  withdrawalBody,
  withdrawalParams,
  withdrawalSchema,
} from "./schema.ts";

const TAG = "Positions";
const OWNER = "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF";
const ZCASH = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
/** ZCASH sealed to the development key for OWNER on the local chain (examples are fixed text). */
const SEALED =
  "0x01000000017bb86b79cb494fa4511c1c6c0442d61344d131fc00e2f295d1727b04e5a8fe28d207e8ed25bf468ced0b14f67fccb8a04f6e67c2d1c1da704816dcaaec917e61463c1d4d4adbcb9f3cfe7353499a122b8f427dd8dacb8b183df14ede5da6e2b698da9fce97bb14483f4bcd40ab1263fabe132b458f92997af974904a5b755ce6e29422b78730afc83116b549cf1a6c7528282def";
const SIGNATURE = `0x${"5f".repeat(64)}1b`;
const TX = "0x2e7a9c1b3d5f7092a4c6e8f0b2d4f6a8c0e2f4a6b8d0f2a4c6e8a0b2d4f6a8c0";
const FIELD = "4923775312096713460294711538476215398812345678901234567890123456789012345";
const PROOF = {
  pi_a: [FIELD, FIELD, "1"],
  pi_b: [
    [FIELD, FIELD],
    [FIELD, FIELD],
    ["1", "0"],
  ],
  pi_c: [FIELD, FIELD, "1"],
  protocol: "groth16",
  curve: "bn128",
};
const SIGNALS = ["0", FIELD, FIELD, "300000000", FIELD];
const AT = { createdAt: "2026-03-02T10:15:00.000Z", updatedAt: "2026-03-02T10:15:04.000Z" };
const ACTION = {
  object: "position_action",
  actionId: "pact_4Rt8vN2kQ7xZ1mB5cW9y",
  positionId: "7",
  action: "close",
  signer: OWNER,
  amount: null,
  destination: { zcashAddress: ZCASH },
  released: "3.0",
  noteSequence: null,
  hold: null,
  status: "confirmed",
  txHash: TX,
  blockNumber: 1290,
  payoutId: "12",
  failureCode: null,
  failureReason: null,
  ...AT,
};

/** What an action on a position may meet, beyond its own validation. */
const ACTION_PROBLEMS: ProblemCode[] = [
  "resource_not_found",
  "position_signature_invalid",
  "expired_signature",
  "position_action_would_revert",
  "position_action_already_submitted",
  "upstream_unavailable",
];

/** Positions read live from the minter, and the relayed actions on them and on notes. */
export function positionRoutes(positions: PositionService): AnyRoute[] {
  const accountOf = (res: { locals: Record<string, unknown> }) => (res.locals.apiKey as ApiKey).accountId;
  const accepted = (description: string, example: Record<string, unknown>) => ({
    202: { description, schema: positionActionSchema, example: { ...ACTION, ...example } },
  });
  return [
    // Before /positions/:id, which would take "terms" for an id.
    route({
      method: "get",
      path: "/positions/terms",
      operationId: "getPositionTerms",
      summary: "What a signer signs for a relayed position action: EIP-712 domain and types, nonce, a deadline",
      tag: TAG,
      auth: true,
      query: termsQuery,
      responses: {
        200: {
          description: "The signing terms",
          schema: positionTermsSchema,
          example: {
            object: "position_terms",
            signer: OWNER,
            nonce: "0",
            chainTime: 1772446500,
            suggestedDeadline: 1772450100,
            domain: {
              name: "ZSD Minter",
              version: "1",
              chainId: 31337,
              verifyingContract: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
            },
            types: {
              Close: [
                { name: "positionId", type: "uint256" },
                { name: "maxDebt", type: "uint256" },
                { name: "minZatOut", type: "uint256" },
                { name: "sealedAddress", type: "bytes" },
                { name: "noteCommitment", type: "uint256" },
                { name: "nonce", type: "uint256" },
                { name: "deadline", type: "uint256" },
              ],
            },
            bounds: {
              repay: { maxAmount: "amount: the most ZSD burned; a debt a redemption shrank below it is repaid whole" },
              withdraw: {},
              close: {
                maxDebt: "maxDebt: the most ZSD burned (a redistribution onto the position raises the debt)",
                minZatOut: "minZec: the least ZEC released (a redemption lowers the collateral)",
              },
              liquidate: {
                maxDebt: "maxDebt: the most ZSD burned",
                minSeizedZat: "minSeizedZec: the least ZEC taken",
                minSeizedValue: "minSeizedValue: the least ZSD the ZEC taken is worth at the liquidation's price",
              },
            },
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ query }) => ({ status: 200, body: await positions.terms(query.signer) }),
    }),
    route({
      method: "get",
      path: "/positions/:id",
      operationId: "getPosition",
      summary: "A position now: collateral, debt, ratio, liquidation price, status",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      responses: {
        200: {
          description: "The position",
          schema: positionSchema,
          example: {
            object: "position",
            id: "7",
            owner: OWNER,
            status: "open",
            collateral: "3.0",
            debt: "100.0",
            collateralValueUsd: "150.0",
            collateralRatio: "1.5",
            liquidationPrice: "40.0",
            liquidatable: false,
            minCollateralRatio: "1.5",
            liquidationRatio: "1.2",
            price: "50.0",
            priceStale: false,
          },
        },
      },
      problems: ["resource_not_found", "upstream_unavailable"],
      handler: async ({ params }) => ({ status: 200, body: await positions.get(params.id) }),
    }),
    route({
      method: "post",
      path: "/positions/:id/repay",
      operationId: "repayPosition",
      summary: "Burn ZSD against a position's debt: relays the payer's signed Repay",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      body: repayBody,
      requestExamples: {
        repay: {
          summary: "25 ZSD of the payer's, signed over GET /v1/positions/terms",
          value: { amount: "25.0", payer: OWNER, deadline: 1772450100, signature: SIGNATURE },
        },
      },
      responses: accepted("Queued: sent by the relay, then confirmed or failed", {
        action: "repay",
        amount: "25.0",
        destination: null,
        released: null,
        status: "queued",
        txHash: null,
        blockNumber: null,
        payoutId: null,
      }),
      problems: ACTION_PROBLEMS,
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: await positions.request(accountOf(res), params.id, { action: "repay", ...body }),
      }),
    }),
    route({
      method: "post",
      path: "/positions/:id/withdraw",
      operationId: "withdrawFromPosition",
      summary: "Take ZEC out of a position that stays above the minimum ratio: relays the owner's signature",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      body: withdrawBody,
      requestExamples: {
        toAddress: {
          summary: "0.5 ZEC to a shielded address",
          value: { amount: "0.5", destination: { sealedAddress: SEALED }, deadline: 1772450100, signature: SIGNATURE },
        },
      },
      responses: accepted("Queued", { action: "withdraw", amount: "0.5", released: null, status: "queued" }),
      problems: [...ACTION_PROBLEMS, "unreadable_address", ...ZCASH_ADDRESS_PROBLEM_CODES, "payout_too_small"],
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: await positions.request(accountOf(res), params.id, { action: "withdraw", ...body }),
      }),
    }),
    route({
      method: "post",
      path: "/positions/:id/close",
      operationId: "closePosition",
      summary: "Burn the remaining debt from the owner and release all collateral: relays the owner's signature",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      body: closeBody,
      requestExamples: {
        toNote: {
          summary: "Into a new note, for a later private mint, bounded at the position as read",
          value: {
            maxDebt: "100.0",
            minZec: "2.5",
            destination: { noteCommitment: FIELD },
            deadline: 1772450100,
            signature: SIGNATURE,
          },
        },
      },
      responses: accepted("Queued", { status: "queued", released: null, payoutId: null, txHash: null }),
      problems: [...ACTION_PROBLEMS, "unreadable_address", ...ZCASH_ADDRESS_PROBLEM_CODES],
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: await positions.request(accountOf(res), params.id, { action: "close", ...body }),
      }),
    }),
    route({
      method: "post",
      path: "/positions/:id/liquidate",
      operationId: "liquidatePosition",
      summary: "Repay an under-collateralised position's debt and take its collateral plus the bonus",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      body: liquidateBody,
      requestExamples: {
        liquidate: {
          summary: "The liquidator's ZSD repays; the seized ZEC is paid to its address",
          value: {
            liquidator: OWNER,
            maxDebt: "83.0",
            minSeizedZec: "2.905",
            minSeizedValue: "83.0",
            destination: { sealedAddress: SEALED },
            deadline: 1772450100,
            signature: SIGNATURE,
          },
        },
      },
      responses: accepted("Queued", { action: "liquidate", status: "queued", released: null }),
      problems: [...ACTION_PROBLEMS, "unreadable_address", ...ZCASH_ADDRESS_PROBLEM_CODES],
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: await positions.request(accountOf(res), params.id, { action: "liquidate", ...body }),
      }),
    }),
    route({
      method: "post",
      path: "/positions/:id/top-up",
      operationId: "topUpPosition",
      summary: "Add a deposit note's ZEC to an open position, proven with a proof bound to the position",
      tag: TAG,
      auth: true,
      params: positionIdParams,
      body: topUpBody,
      requestExamples: { topUp: { summary: "3 ZEC of a note", value: { proof: PROOF, publicSignals: SIGNALS } } },
      responses: accepted("Queued", {
        action: "top_up",
        signer: null,
        amount: "3.0",
        destination: null,
        released: null,
        status: "queued",
      }),
      problems: [
        "resource_not_found",
        "binding_mismatch",
        "invalid_proof",
        "unknown_root",
        "root_expired",
        "nullifier_spent",
        "position_action_would_revert",
        "position_action_already_submitted",
        "upstream_unavailable",
      ],
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: await positions.topUp(accountOf(res), params.id, body),
      }),
    }),
    route({
      method: "get",
      path: "/positions/:id/actions/:actionId",
      operationId: "getPositionAction",
      summary: "An action this account relayed: queued → submitted → confirmed | failed",
      tag: TAG,
      auth: true,
      params: actionParams,
      responses: { 200: { description: "The action", schema: positionActionSchema, example: ACTION } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await positions.action(accountOf(res), params.actionId, "position_action", params.id),
      }),
    }),
    route({
      method: "get",
      path: "/position-actions/:actionId",
      operationId: "getPositionActionById",
      summary: "An action this account relayed, by its id alone (as an alert's subject or a webhook names it)",
      tag: TAG,
      auth: true,
      params: actionIdParams,
      responses: { 200: { description: "The action", schema: positionActionSchema, example: ACTION } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await positions.action(accountOf(res), params.actionId, "position_action"),
      }),
    }),
    route({
      method: "post",
      path: "/withdrawals",
      operationId: "createWithdrawal",
      summary: "Pay a deposit note's ZEC to a shielded address: the way out for a deposit that will never mint",
      tag: TAG,
      auth: true,
      body: withdrawalBody,
      requestExamples: {
        withdraw: {
          summary: "3 ZEC of a note, to the address the proof binds",
          value: { proof: PROOF, publicSignals: SIGNALS, sealedAddress: SEALED, owner: OWNER },
        },
      },
      responses: {
        202: {
          description: "Queued: sent by the relay, then paid by custody",
          schema: withdrawalSchema,
          example: {
            object: "withdrawal",
            withdrawalId: "wdr_8Kp2xV5nQ1mZ7tB3cR9w",
            amount: "3.0",
            zcashAddress: ZCASH,
            owner: OWNER,
            nullifierHash: FIELD,
            status: "queued",
            txHash: null,
            blockNumber: null,
            payoutId: null,
            failureCode: null,
            failureReason: null,
            ...AT,
          },
        },
      },
      problems: [
        "unreadable_address",
        ...ZCASH_ADDRESS_PROBLEM_CODES,
        "payout_too_small",
        "binding_mismatch",
        "invalid_proof",
        "unknown_root",
        "root_expired",
        "nullifier_spent",
        "withdrawal_would_revert",
        "withdrawal_already_submitted",
        "upstream_unavailable",
      ],
      handler: async ({ body }, _req, res) => ({
        status: 202,
        body: await positions.withdrawNote(accountOf(res), body),
      }),
    }),
    route({
      method: "get",
      path: "/withdrawals/:id",
      operationId: "getWithdrawal",
      summary: "A note withdrawal: queued → submitted → confirmed | failed, with its payout",
      tag: TAG,
      auth: true,
      params: withdrawalParams,
      responses: {
        200: {
          description: "The withdrawal",
          schema: withdrawalSchema,
          example: {
            object: "withdrawal",
            withdrawalId: "wdr_8Kp2xV5nQ1mZ7tB3cR9w",
            amount: "3.0",
            zcashAddress: ZCASH,
            owner: OWNER,
            nullifierHash: FIELD,
            status: "confirmed",
            txHash: TX,
            blockNumber: 1291,
            payoutId: "13",
            failureCode: null,
            failureReason: null,
            ...AT,
          },
        },
      },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await positions.action(accountOf(res), params.id, "withdrawal"),
      }),
    }),
  ];
}
