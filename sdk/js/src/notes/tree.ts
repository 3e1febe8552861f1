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

/** A registry event as viem decodes it (`getContractEvents`, `parseEventLogs`). */
export interface RegistryEvent {
  eventName: string;
  args: unknown;
}

/**
 * The tree's leaves in index order, from the registry's events: a run of
 * leaves from `firstIndex` per DepositsRecorded and PendingLeavesInserted
 * (change and released notes are queued first: a queued leaf is in the tree
 * only from its PendingLeavesInserted, not from its LeafQueued). Other events are ignored. Throws when an index is missing or given twice: a tree
 * with a gap would have another root than the registry's.
 */
export function registryLeaves(events: readonly RegistryEvent[]): bigint[] {
  const byIndex = new Map<bigint, bigint>();
  const put = (index: bigint, leaf: bigint) => {
    if (byIndex.has(index)) throw new RangeError(`leaf ${index} is in the events twice`);
    byIndex.set(index, leaf);
  };
  for (const { eventName, args } of events) {
    if (eventName === "DepositsRecorded" || eventName === "PendingLeavesInserted") {
      const { firstIndex, leaves } = args as { firstIndex: bigint; leaves: readonly bigint[] };
      leaves.forEach((leaf, i) => put(firstIndex + BigInt(i), leaf));
    }
  }
  const leaves: bigint[] = [];
  for (let i = 0n; i < BigInt(byIndex.size); i++) {
    const leaf = byIndex.get(i);
    if (leaf === undefined) throw new RangeError(`leaf ${i} is missing from the events`);
    leaves.push(leaf);
  }
  return leaves;
}
