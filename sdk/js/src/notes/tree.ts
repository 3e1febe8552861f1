import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite";
import { MAX_DEPTH } from "./constants.ts";

/** A Merkle path in the shape the circuit takes (siblings padded to MAX_DEPTH). */
export interface MerklePath {
  root: bigint;
  leaf: bigint;
  leafIndex: bigint;
  pathLength: number;
  siblings: bigint[];
}

/**
 * The deposit tree rebuilt off-chain from the registry's leaves, in order. It
 * is the same LeanIMT with Poseidon as the contract's, so roots agree.
 */
export class DepositTree {
  readonly #tree: LeanIMT<bigint>;

  constructor(leaves: readonly bigint[] = []) {
    this.#tree = new LeanIMT<bigint>((a, b) => poseidon2([a, b]), [...leaves]);
  }

  get root(): bigint {
    return this.#tree.size === 0 ? 0n : this.#tree.root;
  }

  get size(): number {
    return this.#tree.size;
  }

  insert(leaf: bigint): void {
    this.#tree.insert(leaf);
  }

  indexOf(leaf: bigint): number {
    return this.#tree.indexOf(leaf);
  }

  /** The path of `leaf` (or of the leaf at `index`). Throws when it is not in the tree. */
  path(leafOrIndex: { leaf: bigint } | { index: number }): MerklePath {
    const index = "leaf" in leafOrIndex ? this.#tree.indexOf(leafOrIndex.leaf) : leafOrIndex.index;
    if (index < 0 || index >= this.#tree.size) throw new RangeError("leaf is not in the deposit tree");
    const proof = this.#tree.generateProof(index);
    if (proof.siblings.length > MAX_DEPTH) throw new RangeError(`path longer than ${MAX_DEPTH} levels`);
    const siblings = [...proof.siblings, ...Array<bigint>(MAX_DEPTH - proof.siblings.length).fill(0n)];
    return {
      root: proof.root,
      leaf: proof.leaf,
      leafIndex: BigInt(proof.index),
      pathLength: proof.siblings.length,
      siblings,
    };
  }
}
