import { type Address, type Hex, encodeFunctionData } from "viem";
import { stableMinterAbi } from "../generated/abis.ts";
import type { Binding } from "./binding.ts";
import type { PublicSignals, SolidityProof } from "./prover.ts";

/** The `MintRequest` struct of `StableMinter.mint`. */
export interface MintRequest {
  root: bigint;
  nullifierHash: bigint;
  collateralFloorZat: bigint;
  changeLeaf: bigint;
  mintAmount: bigint;
  recipient: Address;
  relayer: Address;
  fee: bigint;
  owner: Address;
  /** Where the new position's walk into the ratio order starts (`findInsertHint`); 0 for none. Not bound by the proof. */
  hint: bigint;
}

/** The `NoteSpend` struct of `StableMinter.topUp` and `withdrawNote`. */
export interface NoteSpend {
  root: bigint;
  nullifierHash: bigint;
  collateralFloorZat: bigint;
  changeLeaf: bigint;
}

export function noteSpend(signals: PublicSignals): NoteSpend {
  return {
    root: signals.root,
    nullifierHash: signals.nullifierHash,
    collateralFloorZat: signals.collateralFloorZat,
    changeLeaf: signals.changeLeaf,
  };
}

export function mintRequest(signals: PublicSignals, binding: Binding, hint = 0n): MintRequest {
  return {
    root: signals.root,
    nullifierHash: signals.nullifierHash,
    collateralFloorZat: signals.collateralFloorZat,
    changeLeaf: signals.changeLeaf,
    mintAmount: binding.mintAmount,
    recipient: binding.recipient,
    relayer: binding.relayer,
    fee: binding.fee,
    owner: binding.owner,
    hint,
  };
}

/** Call data of `StableMinter.mint(proof, request)`, for any wallet or relay. */
export function encodeMintCall(proof: SolidityProof, request: MintRequest): Hex {
  return encodeFunctionData({ abi: stableMinterAbi, functionName: "mint", args: [proof, request] });
}
