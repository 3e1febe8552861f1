import { SNARK_SCALAR_FIELD } from "@zsd/sdk";
import { z } from "zod";
import { collateralProof, evmAddress as address, zsdDecimal } from "../../schemas.ts";
import { prefixedId } from "../../formats.ts";

export const submitProofBody = z.strictObject({
  ...collateralProof,
  mintAmount: zsdDecimal.describe("The amount the proof binds, in ZSD"),
  recipient: address.describe("Who receives mintAmount − fee"),
  relayer: address.optional().describe("Who receives the fee (default: none)"),
  fee: zsdDecimal.optional().describe("The relayer fee the proof binds, in ZSD (default 0)"),
  owner: address.describe(
    "Who owns the position the mint opens: a fresh address the proof binds (the SDK derives it from the note)",
  ),
});

export const proofIdParams = z.object({ proofId: prefixedId("prf", 20, "a proof id") });

export const proofSchema = z
  .object({
    object: z.literal("proof"),
    proofId: z.string(),
    proofHash: z.string().describe("keccak256 of the ABI-encoded proof and public signals"),
    status: z.enum(["verified", "consumed", "rejected"]),
    publicInputs: z.object({
      root: z.string(),
      nullifierHash: z.string(),
      collateralFloorZat: z.string(),
      bindingHash: z.string(),
      changeLeaf: z.string().describe("The rest of the note as a new leaf, 0 when the mint spends all of it"),
    }),
    mintAmount: z.string(),
    recipient: z.string(),
    relayer: z.string(),
    fee: z.string(),
    owner: z.string().describe("The owner of the position the mint opens"),
    rejectionReason: z.string().nullable(),
    mintId: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: "Proof" });

export const nullifierParams = z.object({
  nullifierHash: z
    .string()
    .regex(/^\d{1,78}$/, { message: "a nullifier hash: a decimal field element, as publicSignals[2]", abort: true })
    .refine((v) => BigInt(v) < SNARK_SCALAR_FIELD, "a nullifier hash is below the BN254 field modulus"),
});

export const nullifierSchema = z
  .object({
    object: z.literal("nullifier"),
    nullifierHash: z.string(),
    spent: z.boolean().describe("Whether a mint, top-up or note withdrawal has spent it on chain"),
  })
  .meta({ id: "Nullifier" });
