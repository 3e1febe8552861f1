import { z } from "zod";
import { evmAddress as address } from "../../schemas.ts";

const fieldElement = z.string().regex(/^\d{1,78}$/, "a decimal field element");
const tokenAmount = z
  .string()
  .regex(/^\d{1,30}(\.\d{1,18})?$/, 'a decimal ZSD amount with at most 18 decimals, e.g. "100.00"');

export const submitProofBody = z.strictObject({
  proof: z
    .strictObject({
      pi_a: z.array(fieldElement).length(3),
      pi_b: z.array(z.array(fieldElement).length(2)).length(3),
      pi_c: z.array(fieldElement).length(3),
      protocol: z.literal("groth16"),
      curve: z.literal("bn128"),
    })
    .describe("The Groth16 proof as snarkjs writes it"),
  publicSignals: z
    .array(fieldElement)
    .length(5)
    .describe("[changeLeaf, root, nullifierHash, collateralFloorZat, bindingHash], in that order"),
  mintAmount: tokenAmount.describe("The amount the proof binds, in ZSD"),
  recipient: address.describe("Who receives mintAmount − fee"),
  relayer: address.optional().describe("Who receives the fee (default: none)"),
  fee: tokenAmount.optional().describe("The relayer fee the proof binds, in ZSD (default 0)"),
  owner: address.describe(
    "Who owns the position the mint opens: a fresh address the proof binds (the SDK derives it from the note)",
  ),
});

export const proofIdParams = z.object({ proofId: z.string().regex(/^prf_[0-9A-Za-z]{20}$/, "a proof id (prf_…)") });

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
