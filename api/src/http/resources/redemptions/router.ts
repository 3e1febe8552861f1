import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { REDEEM_BOUND } from "../../../domain/redemptions/redemptions.ts";
import { ZCASH_ADDRESS_PROBLEM_CODES } from "../../problem-catalog.ts";
import { type AnyRoute, route } from "../../routes.ts";
import {
  payoutRedirectSchema,
  payoutRefParams,
  redeemBody,
  redemptionIdParams,
  redemptionSchema,
  redirectBody,
  termsQuery,
  termsSchema,
} from "./schema.ts";
import type { RedemptionService } from "../../../domain/redemptions/redemptions.ts";
import type { RedirectService } from "../../../domain/payouts/redirects.ts";
import { presentRedirect } from "./presenter.ts";

const OWNER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const WITHDRAW_ADDRESS = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
/** WITHDRAW_ADDRESS sealed to the development key for OWNER on the local chain (examples are fixed text). */
const SEALED_ADDRESS =
  "0x0100000001b8636e5cc49d402d117218d347c44cc0c1b429b55c0abdcabce864b22fa679564b8f3ec79cbade9c3b770fe3f5cacbbc923d6b1be9eea1dd3f3b3f990f086c39977bba900919c4b743ef41899ef7e2776ab38ca7be14907b120046188ce1cc2b06273663cd27690813a9a1c9fe0de24d0758cc89378d4f4c9355b8b8bf37a8ca06abbdd1f29eeb59f672c9879b2c349b9ac68875";

const REDIRECT = {
  object: "payout_redirect" as const,
  redirectId: "rdr_4Hq8mT2vX6nC1pL9sK3w",
  payoutId: "3",
  owner: OWNER,
  destination: { withdrawAddress: WITHDRAW_ADDRESS },
  status: "queued" as const,
  txHash: null,
  blockNumber: null,
  newPayoutId: null,
  noteSequence: null,
  payoutStatus: null,
  zcashTxId: null,
  zecHeld: "2.34117647",
  failureCode: null,
  failureReason: null,
  createdAt: "2026-03-02T11:00:00.000Z",
  updatedAt: "2026-03-02T11:00:00.000Z",
};
const SIGNATURE = `0x${"5f".repeat(64)}1b`;

export function redemptionRoutes(redemptions: RedemptionService, redirects: RedirectService): AnyRoute[] {
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
        clear: {
          summary:
            "100 ZSD for ZEC to an address in the clear, signed by the owner over the sealedAddress of " +
            "GET /v1/redemptions/terms?owner=…&withdrawAddress=…",
          value: {
            amount: 100,
            withdrawAddress: WITHDRAW_ADDRESS,
            owner: OWNER,
            permit: {
              deadline: 1772450100,
              v: 28,
              r: "0x7d1e3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d",
              s: "0x2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d",
            },
          },
        },
        redeem: {
          summary:
            "100 ZSD for ZEC, sealed by the caller, signed by the owner over the terms of GET /v1/redemptions/terms",
          value: {
            amount: "100.0",
            sealedAddress: SEALED_ADDRESS,
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
            zecHeld: null,
            redirect: null,
            settlementTxHash: null,
            failureCode: null,
            failureReason: null,
            payout: null,
            hold: null,
            createdAt: "2026-03-02T10:15:00.000Z",
            updatedAt: "2026-03-02T10:15:00.000Z",
          },
        },
      },
      problems: [
        "unreadable_address",
        ...ZCASH_ADDRESS_PROBLEM_CODES,
        "price_stale",
        "redemption_too_small",
        "redemption_below_minimum",
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
      summary:
        "What an owner signs to redeem through the relay: EIP-712 domain and type, next nonce, a deadline, and the " +
        "withdrawAddress asked for sealed for the owner",
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
            withdrawAddress: WITHDRAW_ADDRESS,
            sealedAddress: SEALED_ADDRESS,
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
                  { name: "minZatOut", type: "uint256" },
                  { name: "sealedAddress", type: "bytes" },
                  { name: "nonce", type: "uint256" },
                  { name: "deadline", type: "uint256" },
                ],
              },
              primaryType: "Redeem",
            },
            bounds: { minZatOut: REDEEM_BOUND },
          },
        },
      },
      problems: [...ZCASH_ADDRESS_PROBLEM_CODES, "upstream_unavailable"],
      handler: async ({ query }) => ({
        status: 200,
        body: await redemptions.signingTerms(query.owner, query.withdrawAddress),
      }),
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
            zcashTxId: "6f1e3d5c7b9a0f2e4d6c8b0a2f4e6d8c0b2a4f6e8d0c2b4a6f8e0d2c4b6a8f0e",
            zecHeld: null,
            redirect: null,
            settlementTxHash: "0x4b6d8f0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c",
            failureCode: null,
            failureReason: null,
            payout: null,
            hold: null,
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
    route({
      method: "post",
      path: "/redemptions/:id/redirect",
      operationId: "redirectPayout",
      summary:
        "Redirect a failed payout's held ZEC (custody could not pay it) to another shielded address or into a note, " +
        "signed by its owner",
      tag: "Redeem",
      auth: true,
      params: payoutRefParams,
      body: redirectBody,
      requestExamples: {
        address: {
          summary: "To another shielded address: a new payout, paid like any other",
          value: { sealedAddress: SEALED_ADDRESS, deadline: 1772450100, signature: SIGNATURE },
        },
        note: {
          summary: "Into a fresh note (the SDK's noteCommitment of a new note), for a later private mint",
          value: {
            noteCommitment: "4923775312096713460294711538476215398812345678901234567890123456789012345",
            deadline: 1772450100,
            signature: SIGNATURE,
          },
        },
      },
      responses: {
        202: {
          description: "Queued: the relay sends redirectWithSig; follow it with GET /v1/redemptions/{id}/redirect",
          schema: payoutRedirectSchema,
          example: REDIRECT,
        },
      },
      problems: [
        "unreadable_address",
        ...ZCASH_ADDRESS_PROBLEM_CODES,
        "resource_not_found",
        "payout_not_failed",
        "payout_compliance_rejected",
        "expired_signature",
        "redirect_signature_invalid",
        "redirect_already_submitted",
        "redirect_would_revert",
        "upstream_unavailable",
      ],
      handler: async ({ params, body }, _req, res) => ({
        status: 202,
        body: presentRedirect(await redirects.request((res.locals.apiKey as ApiKey).accountId, params.id, body)),
      }),
    }),
    route({
      method: "get",
      path: "/redemptions/:id/redirect",
      operationId: "getPayoutRedirect",
      summary: "A failed payout's redirect: queued → submitted → confirmed | failed, then the new payout's state",
      tag: "Redeem",
      auth: true,
      params: payoutRefParams,
      responses: {
        200: {
          description: "The latest redirect of the payout",
          schema: payoutRedirectSchema,
          example: {
            ...REDIRECT,
            status: "confirmed",
            txHash: "0x2e7a9c1b3d5f7092a4c6e8f0b2d4f6a8c0e2f4a6b8d0f2a4c6e8a0b2d4f6a8c0",
            blockNumber: 1302,
            newPayoutId: "9",
            payoutStatus: "paid",
            zcashTxId: "6f1e3d5c7b9a0f2e4d6c8b0a2f4e6d8c0b2a4f6e8d0c2b4a6f8e0d2c4b6a8f0e",
            updatedAt: "2026-03-02T11:02:10.000Z",
          },
        },
      },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: presentRedirect(await redirects.latest((res.locals.apiKey as ApiKey).accountId, params.id)),
      }),
    }),
  ];
}
