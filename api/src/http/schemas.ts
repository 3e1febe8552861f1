import { getAddress, isAddress } from "viem";
import { z } from "zod";

/** An EVM address: 0x + 40 hex digits, EIP-55 checksum checked when mixed case, answered checksummed. */
export const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, { message: "an EVM address: 0x and 40 hex digits", abort: true })
  .refine((a) => isAddress(a, { strict: true }), "the mixed-case checksum (EIP-55) does not match")
  .transform((a) => getAddress(a));

/**
 * A ZSD amount sent as a JSON number: positive, and written in plain decimal
 * by JavaScript (1e21 and 1e-7 become "1e+21" and "1e-7", which no amount
 * parser reads), with at most the token's 18 decimals.
 */
export const zsdNumber = z
  .number()
  .positive()
  .finite()
  .refine((n) => /^\d+(\.\d{1,18})?$/.test(String(n)), "a plain decimal below 1e21 with at most 18 decimals");

/** A BN254 field element in decimal, as snarkjs writes it. */
export const fieldElement = z.string().regex(/^\d{1,78}$/, "a decimal field element");

/** A ZSD amount sent as a decimal string, with at most the token's 18 decimals. */
export const zsdDecimal = z
  .string()
  .regex(/^\d{1,30}(\.\d{1,18})?$/, 'a decimal ZSD amount with at most 18 decimals, e.g. "100.00"');

/** A collateral proof as snarkjs writes it, with the circuit's five public signals. */
export const collateralProof = {
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
};
