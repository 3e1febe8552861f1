import { z } from "zod";
import { evmAddress as address, holdSchema, zsdDecimal, zsdNumber } from "../../schemas.ts";
import { prefixedId } from "../../formats.ts";

/** Quick-start shape: answers 202 queued at once. */
export const mintShapeA = z.strictObject({
  amount: zsdDecimal,
  collateralType: z.string().describe("The collateral asset; only ZEC"),
  proofId: prefixedId("prf", 20, "a proof id"),
  recipient: address,
});

/** Endpoint-reference shape: waits for the transaction. */
export const mintShapeB = z.strictObject({
  amount: zsdNumber.describe("ZSD to mint"),
  collateralProof: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a proof hash from POST /v1/proofs/submit")
    // Hex is hex in either case; proof hashes are kept in lower case.
    .transform((hash) => hash.toLowerCase()),
});

export const mintBody = z.union([mintShapeA, mintShapeB]);

export const mintIdParams = z.object({ mintId: prefixedId("mint", 20, "a mint id") });

export const queuedSchema = z
  .object({
    status: z.literal("queued"),
    mintId: z.string(),
    expectedCollateralRatio: z.string().describe("Proven collateral value over the amount at the current price"),
    pegPrice: z.string(),
    hold: holdSchema
      .nullable()
      .describe("A hold placed as it was queued (the rules agent, required screening): it waits for review"),
  })
  .meta({ id: "MintQueued" });

export const successSchema = z
  .object({ status: z.literal("success"), mintId: z.string(), tx: z.string() })
  .meta({ id: "MintSuccess" });

export const mintSchema = z
  .object({
    object: z.literal("mint"),
    mintId: z.string(),
    status: z.enum(["queued", "submitted", "confirmed", "failed"]),
    proofId: z.string(),
    amount: z.string(),
    recipient: z.string(),
    positionId: z
      .string()
      .nullable()
      .describe("The position the mint opened, once confirmed (GET /v1/positions/{positionId})"),
    txHash: z.string().nullable(),
    blockNumber: z.number().int().nullable(),
    confirmations: z.number().int().nullable(),
    failureCode: z
      .string()
      .nullable()
      .describe(
        "Why a failed mint failed, as a stable code: a contract's refusal in snake case (price_frozen, " +
          "insufficient_collateral_value, enforced_pause, root_expired, unknown_root, invalid_proof, " +
          "nullifier_already_spent, …), simulation_failed (the node kept failing to simulate it), " +
          "transaction_reverted (reverted on-chain for a reason that could not be read) or unclassified " +
          "(failed before codes were recorded)",
      ),
    failureReason: z.string().nullable().describe("The failure in words, naming its cause and figures"),
    hold: holdSchema.nullable().describe("While compliance holds the mint: who, since when, under which alert"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Mint" });
