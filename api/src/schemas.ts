import { getAddress, isAddress } from "viem";
import { z } from "zod";

/** An EVM address: 0x + 40 hex digits, EIP-55 checksum checked when mixed case, answered checksummed. */
export const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, { message: "an EVM address: 0x and 40 hex digits", abort: true })
  .refine((a) => isAddress(a, { strict: true }), "the mixed-case checksum (EIP-55) does not match")
  .transform((a) => getAddress(a));
