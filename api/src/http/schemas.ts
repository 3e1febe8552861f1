import { getAddress, isAddress } from "viem";
import { z } from "zod";
import { SEALED_ADDRESS_MAX_LENGTH, SEALED_ADDRESS_MIN_LENGTH } from "@zsd/sdk/seal";
import { decimalAmount } from "./formats.ts";

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
  .positive("a ZSD amount must be positive")
  .finite()
  .refine((n) => /^\d+(\.\d{1,18})?$/.test(String(n)), "a plain decimal below 1e21 with at most 18 decimals");

const SEALED_HOW =
  "seal the shielded address to the key of GET /v1/relay for the payout's owner (sealAddress in the SDKs)";

/**
 * A withdraw address sealed to custody's key: only its envelope's
 * shape is checked here; whether it opens, and to what, the domain decides.
 */
export const sealedAddress = z
  .string()
  .regex(/^0x(?:[0-9a-fA-F]{2})*$/, { message: `0x and an even number of hex digits: ${SEALED_HOW}`, abort: true })
  .refine(
    (s) => s.length >= 2 + 2 * SEALED_ADDRESS_MIN_LENGTH && s.length <= 2 + 2 * SEALED_ADDRESS_MAX_LENGTH,
    `a sealed address is ${SEALED_ADDRESS_MIN_LENGTH} to ${SEALED_ADDRESS_MAX_LENGTH} bytes: ${SEALED_HOW}`,
  )
  .transform((s) => s as `0x${string}`)
  .describe(
    `A shielded Zcash address sealed to custody's seal key (GET /v1/relay: sealKey) for this payout's owner, chain and ` +
      `Redemptions contract: 0x and ${SEALED_ADDRESS_MIN_LENGTH} to ${SEALED_ADDRESS_MAX_LENGTH} bytes ` +
      "(version 1, keyId, ephemeral X25519 key, nonce, ChaCha20-Poly1305 ciphertext). The chain sees only this",
  );

/** A BN254 field element in decimal, as snarkjs writes it. */
export const fieldElement = z.string().regex(/^\d{1,78}$/, "a decimal field element");

/** A ZSD amount sent as a decimal string, with at most the token's 18 decimals. */
export const zsdDecimal = decimalAmount({ unit: "ZSD", integerDigits: 30, decimals: 18, example: "100.00" });

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

/** The hold keeping a mint, a redemption or a position action from moving (api/src/domain/compliance/hold-of.ts), or null when none does. */
export const holdSchema = z
  .object({
    state: z
      .enum(["held", "awaiting_verdict"])
      .describe(
        "held: an alert holds it until a screener releases or rejects it (POST /v1/alerts/{alertId}/release | /reject); " +
          "awaiting_verdict: screening is required and no verdict came yet (POST /v1/agents/verdicts)",
      ),
    alertId: z.string().nullable().describe("The alert that placed the hold (null while a verdict is awaited)"),
    by: z
      .string()
      .nullable()
      .describe('Who placed it: the agent\'s id, or "rules" / "payouts" for the built-in agents'),
    since: z.iso.datetime(),
  })
  .meta({ id: "Hold" });
