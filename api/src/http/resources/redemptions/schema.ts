import { ZCASH_ADDRESS_MAX_LENGTH } from "@zsd/sdk/zcash";
import { z } from "zod";
import { evmAddress as address, zsdNumber } from "../../schemas.ts";

export const redeemBody = z.strictObject({
  amount: z
    .union([zsdNumber, z.string().regex(/^\d{1,30}(\.\d{1,18})?$/)])
    .describe("ZSD to burn, as a number or a decimal string"),
  withdrawAddress: z
    .string()
    .min(1)
    .max(ZCASH_ADDRESS_MAX_LENGTH)
    .describe("Shielded Zcash address (Sapling or Unified) of this environment's network"),
  owner: address.describe("The holder whose tokens are burned"),
  permit: z
    .strictObject({
      deadline: z.union([z.number().int().positive(), z.string().regex(/^\d{1,20}$/)]),
      v: z.number().int().min(27).max(28),
      r: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
      s: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    })
    .describe(
      "The owner's EIP-712 Redeem(owner, amount, withdrawAddress, nonce, deadline) signature for the Redemptions contract",
    ),
});

export const redemptionIdParams = z.object({
  id: z.string().regex(/^red_[0-9A-Za-z]{20}$/, "a redemption id (red_…)"),
});

export const redemptionSchema = z
  .object({
    object: z.literal("redemption"),
    id: z.string(),
    status: z.enum(["requested", "burned", "paid", "failed"]),
    owner: z.string(),
    amount: z.string(),
    withdrawAddress: z.string(),
    redemptionId: z.string().nullable().describe("The on-chain redemption id once burned"),
    zecDue: z.string().nullable(),
    txHash: z.string().nullable(),
    zcashTxId: z.string().nullable().describe("The Zcash transaction that paid the ZEC"),
    refunded: z.boolean().describe("Custody could not pay, and the burned ZSD was minted back to the owner"),
    settlementTxHash: z
      .string()
      .nullable()
      .describe("The attestor's transaction that marked the redemption paid or refunded on-chain"),
    failureCode: z
      .string()
      .nullable()
      .describe(
        "Why the redemption failed or is held up, as a stable code: a contract's refusal in snake case " +
          "(expired_signature, invalid_signature, erc20_insufficient_balance, insufficient_available_collateral, " +
          "stale_price, enforced_pause, …), nonce_used (another redemption signed at the same owner nonce went " +
          "through), simulation_failed, transaction_reverted, payout_refunded, payout_refunding, payout_in_review " +
          "or unclassified (failed before codes were recorded)",
      ),
    failureReason: z.string().nullable().describe("The failure in words, naming its cause and figures"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Redemption" });

export const termsQuery = z.object({ owner: address.describe("The ZSD holder who will sign") });

export const termsSchema = z
  .object({
    object: z.literal("redemption_terms"),
    owner: z.string(),
    nonce: z.string().describe("The owner's next nonce on the Redemptions contract"),
    chainTime: z.number().int().describe("The chain's latest block time (deadlines are judged against it)"),
    suggestedDeadline: z.number().int().describe("chainTime + 1 hour"),
    typedData: z
      .object({
        domain: z.record(z.string(), z.unknown()),
        types: z.record(z.string(), z.unknown()),
        primaryType: z.string(),
      })
      .describe(
        "EIP-712 domain, types and primary type; the message is {owner, amount, withdrawAddress, nonce, deadline}",
      ),
  })
  .meta({ id: "RedemptionTerms" });
