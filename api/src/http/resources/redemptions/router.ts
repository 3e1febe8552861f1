import type { ApiKey } from "../../../domain/keys.ts";
import { ZCASH_ADDRESS_PROBLEM_CODES } from "../../problem-catalog.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { redeemBody, redemptionIdParams, redemptionSchema, termsQuery, termsSchema } from "./schema.ts";
import type { RedemptionService } from "../../../domain/redemptions.ts";

const OWNER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const WITHDRAW_ADDRESS =
  "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";

export function redemptionRoutes(redemptions: RedemptionService): AnyRoute[] {
  return [
    route({
      method: "post",
      path: "/redeem",
      operationId: "redeem",
      summary: "Burn ZSD for ZEC paid to a shielded address: relays the owner's signed redemption",
      tag: "Redeem",
      auth: true,
      body: redeemBody,
      requestExamples: {
        redeem: {
          summary: "100 ZSD for ZEC, signed by the owner over the terms of GET /v1/redemptions/terms",
          value: {
            amount: "100.0",
            withdrawAddress: WITHDRAW_ADDRESS,
            owner: OWNER,
            permit: {
              deadline: 1772450100,
              v: 27,
              r: "0x3c9f1e2d4b6a8c0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e",
              s: "0x1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809",
            },
          },
        },
      },
      responses: {
        202: {
          description: "Accepted: requested, then burned, then paid or failed",
          schema: redemptionSchema,
          example: {
            object: "redemption",
            id: "red_9Vb3nM6kP1qS4tW7yZ2c",
            status: "requested",
            owner: OWNER,
            amount: "100.0",
            withdrawAddress: WITHDRAW_ADDRESS,
            redemptionId: null,
            zecDue: null,
            txHash: null,
            zcashTxId: null,
            refunded: false,
            settlementTxHash: null,
            failureCode: null,
            failureReason: null,
            createdAt: "2026-03-02T10:15:00.000Z",
            updatedAt: "2026-03-02T10:15:00.000Z",
          },
        },
      },
      problems: [
        ...ZCASH_ADDRESS_PROBLEM_CODES,
        "price_stale",
        "redemption_too_small",
        "invalid_signature",
        "expired_signature",
        "insufficient_balance",
        "redemption_already_submitted",
        "redemption_rejected",
        "upstream_unavailable",
      ],
      handler: async ({ body }, _req, res) => ({
        status: 202,
        body: await redemptions.request((res.locals.apiKey as ApiKey).accountId, body),
      }),
    }),
    // Before /redemptions/:id, which would take "terms" for an id.
    route({
      method: "get",
      path: "/redemptions/terms",
      operationId: "getRedemptionTerms",
      summary: "What an owner signs to redeem through the relay: EIP-712 domain and type, next nonce, a deadline",
      tag: "Redeem",
      auth: true,
      query: termsQuery,
      responses: {
        200: {
          description: "The signing terms",
          schema: termsSchema,
          example: {
            object: "redemption_terms",
            owner: OWNER,
            nonce: "0",
            chainTime: 1772446500,
            suggestedDeadline: 1772450100,
            typedData: {
              domain: {
                name: "ZSD Redemptions",
                version: "1",
                chainId: 31337,
                verifyingContract: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
              },
              types: {
                Redeem: [
                  { name: "owner", type: "address" },
                  { name: "amount", type: "uint256" },
                  { name: "withdrawAddress", type: "string" },
                  { name: "nonce", type: "uint256" },
                  { name: "deadline", type: "uint256" },
                ],
              },
              primaryType: "Redeem",
            },
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ query }) => ({ status: 200, body: await redemptions.signingTerms(query.owner) }),
    }),
    route({
      method: "get",
      path: "/redemptions/:id",
      operationId: "getRedemption",
      summary: "A redemption: requested → burned → paid | failed, with the Zcash txid",
      tag: "Redeem",
      auth: true,
      params: redemptionIdParams,
      responses: {
        200: {
          description: "The redemption",
          schema: redemptionSchema,
          example: {
            object: "redemption",
            id: "red_9Vb3nM6kP1qS4tW7yZ2c",
            status: "paid",
            owner: OWNER,
            amount: "100.0",
            withdrawAddress: WITHDRAW_ADDRESS,
            redemptionId: "3",
            zecDue: "2.34117647",
            txHash: "0x2e7a9c1b3d5f7092a4c6e8f0b2d4f6a8c0e2f4a6b8d0f2a4c6e8a0b2d4f6a8c0",
            zcashTxId: "0x6f1e3d5c7b9a0f2e4d6c8b0a2f4e6d8c0b2a4f6e8d0c2b4a6f8e0d2c4b6a8f0e",
            refunded: false,
            settlementTxHash: "0x4b6d8f0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c",
            failureCode: null,
            failureReason: null,
            createdAt: "2026-03-02T10:15:00.000Z",
            updatedAt: "2026-03-02T10:16:30.000Z",
          },
        },
      },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await redemptions.get((res.locals.apiKey as ApiKey).accountId, params.id),
      }),
    }),
  ];
}
