import { type Address, type Hex, encodeAbiParameters, keccak256 } from "viem";
import { SNARK_SCALAR_FIELD } from "./constants.ts";

/** What a mint proof binds: `StableMinter.mintBinding(recipient, relayer, fee, mintAmount, owner)`. */
export interface Binding {
  chainId: bigint;
  minter: Address;
  recipient: Address;
  relayer: Address;
  fee: bigint;
  mintAmount: bigint;
  /** The position's owner: a fresh address (see `positionOwner`), bound so no one can take the position. */
  owner: Address;
}

/** A proof that adds a note's ZEC to position `positionId`. */
export interface TopUpBinding {
  chainId: bigint;
  minter: Address;
  positionId: bigint;
}

/** A proof that pays a note's ZEC to the address sealed in `sealedAddress`. */
export interface WithdrawBinding {
  chainId: bigint;
  minter: Address;
  /** The withdraw address sealed to custody's key for `owner` (`sealAddress`): the proof binds its keccak256. */
  sealedAddress: Hex;
  /** Who may redirect the payout if custody cannot make it (see `positionOwner`). */
  owner: Address;
}

export type AnyBinding = Binding | TopUpBinding | WithdrawBinding;

const field = (encoded: `0x${string}`) => BigInt(keccak256(encoded)) % SNARK_SCALAR_FIELD;

/**
 * The public input that ties a proof to its action and parameters; equal to the
 * minter's `mintBinding`, `topUpBinding` or `withdrawBinding`. Each action hashes
 * its own name, so a proof for one can never serve another.
 */
export function bindingHash(b: AnyBinding): bigint {
  if ("positionId" in b) {
    return field(
      encodeAbiParameters(
        [{ type: "uint256" }, { type: "address" }, { type: "string" }, { type: "uint256" }],
        [b.chainId, b.minter, "topUp", b.positionId],
      ),
    );
  }
  if ("sealedAddress" in b) {
    return field(
      encodeAbiParameters(
        [{ type: "uint256" }, { type: "address" }, { type: "string" }, { type: "bytes32" }, { type: "address" }],
        [b.chainId, b.minter, "withdraw", keccak256(b.sealedAddress), b.owner],
      ),
    );
  }
  return field(
    encodeAbiParameters(
      [
        { type: "uint256" },
        { type: "address" },
        { type: "string" },
        { type: "address" },
        { type: "address" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "address" },
      ],
      [b.chainId, b.minter, "mint", b.recipient, b.relayer, b.fee, b.mintAmount, b.owner],
    ),
  );
}
