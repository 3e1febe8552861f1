import { type Address, type Hex, encodePacked, keccak256 } from "viem";

/**
 * The registry's EIP-712 domain: `CollateralRegistry` checks attestors' signatures as
 * "ZSD CollateralRegistry", version 1, so a signature holds on one chain and one registry only.
 */
export function depositBatchTypedData(chainId: number, registry: Address) {
  return {
    domain: { name: "ZSD CollateralRegistry", version: "1", chainId, verifyingContract: registry },
    types: {
      DepositBatch: [
        { name: "batch", type: "uint256" },
        { name: "leavesHash", type: "bytes32" },
        { name: "totalZat", type: "uint256" },
      ],
    },
    primaryType: "DepositBatch",
  } as const;
}

/**
 * What an attestor signs for a batch of deposit leaves: the batch's turn (the registry's
 * `depositBatchCount()` when it is recorded), its leaves in order and their total.
 */
export function depositBatchMessage(
  leaves: readonly bigint[],
  totalZat: bigint,
  batch: bigint,
): { batch: bigint; leavesHash: Hex; totalZat: bigint } {
  return {
    batch,
    leavesHash: keccak256(encodePacked(["uint256[]"], [[...leaves]])),
    totalZat,
  };
}

/** Signatures ordered by their signers' addresses, as the registry takes them (each signer once). */
export function orderBySigner<T extends { signer: Address }>(signed: readonly T[]): T[] {
  return [...signed].sort((a, b) =>
    BigInt(a.signer) < BigInt(b.signer) ? -1 : BigInt(a.signer) > BigInt(b.signer) ? 1 : 0,
  );
}
