import { type Address, encodeAbiParameters, keccak256 } from "viem";
import { SNARK_SCALAR_FIELD } from "./constants.ts";

export interface Binding {
  chainId: bigint;
  minter: Address;
  recipient: Address;
  relayer: Address;
  fee: bigint;
  mintAmount: bigint;
}

/**
 * The public input that ties a proof to its recipient, relayer, fee and amount;
 * equal to `StableMinter.bindingHash(recipient, relayer, fee, mintAmount)`.
 */
export function bindingHash(b: Binding): bigint {
  const encoded = encodeAbiParameters(
    [
      { type: "uint256" },
      { type: "address" },
      { type: "address" },
      { type: "address" },
      { type: "uint256" },
      { type: "uint256" },
    ],
    [b.chainId, b.minter, b.recipient, b.relayer, b.fee, b.mintAmount],
  );
  return BigInt(keccak256(encoded)) % SNARK_SCALAR_FIELD;
}
