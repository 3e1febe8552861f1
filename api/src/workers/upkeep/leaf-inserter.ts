// The leaf inserter: change leaves (of mints, batches, top-ups and note
// withdrawals, relayed or sent by wallets themselves) are only queued by the
// registry; none is spendable before CollateralRegistry.insertPendingLeaves
// puts it in the tree. Anyone may insert; the relay does it for everyone, in
// batches: once LEAF_BATCH_MAX leaves wait or the oldest waited
// LEAF_BATCH_WAIT_MS. The call carries a run of queued leaves from a sequence
// on, as the indexer lists them (GET /pending-leaves), and the registry checks
// them against the hash chain it kept at those sequences: leaves queued since
// (the relay's own mints mined meanwhile) stay queued, and leaves someone
// inserted first are skipped, so neither makes the insertion revert. An
// indexer that has not listed every queued leaf yet is waited for, never
// guessed past. One insertion is in flight at a time, held in memory: a
// restarted worker reads the queue from the chain again. Should its
// predecessor's insertion still wait unmined, whichever of the two is mined
// second inserts what the first left, or reverts (InvalidPendingRange) when
// nothing is left: a restart costs one reverted insertion at most, never a
// leaf inserted twice.
import { type Hex, encodeFunctionData, parseEventLogs, parseTransaction } from "viem";
import { z } from "zod";
import { collateralRegistryAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import { decodeRevert } from "../../domain/reverts.ts";
import type { ContractRevertError } from "../../domain/errors.ts";
import { isOutOfGas } from "../../adapters/gas.ts";
import type { RecordedTransaction, TransactionSender } from "../relay/sender.ts";

export interface LeafInserterOptions {
  /** The indexer's base address, for GET /pending-leaves. */
  indexerUrl: string;
  /** Leaves waiting that start an insertion at once (LEAF_BATCH_MAX). */
  batchMax: number;
  /** How long the oldest waiting leaf waits for others before an insertion starts anyway (LEAF_BATCH_WAIT_MS). */
  batchWaitMs: number;
  /** Most leaves one insertion carries, so puts in the tree (LEAF_INSERT_MAX); the rest wait for the next. */
  insertMax: number;
  /** The gas limit of an insertion carrying `count` leaves (default insertionGas, which holds for any tree). */
  gasLimit?: (count: number) => bigint;
  /** How long the indexer may stay behind the registry's queue (the worker polling fast) before it is reported as stuck. */
  indexerCatchUpMs?: number;
  /** A failure, with its real error: the next pass tries again from the chain's state. */
  onError?: (error: unknown) => void;
  /** An insertion mined: how many leaves left the queue, in which transaction. */
  onInserted?: (inserted: { consumed: number; txHash: string; gasUsed: bigint }) => void;
}

/**
 * The worst cost of each part of an insertion, whatever the tree holds (it has
 * 20 levels at most: CollateralRegistry.MAX_DEPTH). A PoseidonT3 hash and the
 * side node it writes were measured at 22,013 gas a level (adapters/gas.ts);
 * a hash is taken as 25,000 here. Of `count` leaves walked up from any index,
 * a level holds at most half the one below plus one new node, so the walk
 * takes at most count + 2 × 20 hashes.
 */
export const INSERT_GAS = {
  /** Intrinsic 21,000; the chain's two words read at both ends of the run, the queue's counts, the tree's size and depth, the new root's side node, both roots' ages, the event. */
  base: 21_000n + 200_000n,
  /** Each leaf the call carries: 32 bytes of calldata (EIP-7623's floor of 40 gas a byte) and one keccak link. */
  perCarried: 1_500n,
  /** Each leaf inserted: its index's slot read cold and written fresh (24,200), one hash, its event words and memory. */
  perInserted: 52_000n,
  /** Each of 20 levels: two hashes beyond the leaves' own share, its side node read cold and written fresh (24,200). */
  perLevel: 75_000n,
  levels: 20n,
} as const;

/**
 * The gas limit of insertPendingLeaves carrying `count` queued leaves, for any tree. Each may be
 * inserted (none was inserted meanwhile): the queue's length beyond them costs nothing.
 */
export function insertionGas(count: number): bigint {
  const g = INSERT_GAS;
  return g.base + BigInt(count) * (g.perCarried + g.perInserted) + g.levels * g.perLevel;
}

const decimal = z.string().regex(/^\d{1,78}$/);
const pendingLeaves = z.object({
  pending: z
    .array(
      z.object({
        sequence: decimal,
        leaf: decimal,
        timestamp: decimal,
      }),
    )
    .max(1024),
  queuedCount: decimal,
});

/** A queued leaf as the indexer lists it. */
export interface PendingLeaf {
  sequence: bigint;
  leaf: bigint;
  /** Its block's time, unix seconds. */
  timestamp: bigint;
}

/** Every leaf the indexer holds as queued, by sequence; refuses an answer that is not that. */
export async function readPendingLeaves(indexerUrl: string, timeoutMs = 5_000): Promise<PendingLeaf[]> {
  const response = await fetch(new URL("/pending-leaves", indexerUrl), { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`the indexer's GET /pending-leaves answered ${response.status}`);
  const body = pendingLeaves.parse(await response.json());
  const leaves = body.pending.map((p) => ({
    sequence: BigInt(p.sequence),
    leaf: BigInt(p.leaf),
    timestamp: BigInt(p.timestamp),
  }));
  // The call carries a run of consecutive sequences: a gap is an indexer mid-update, not a queue.
  for (let i = 1; i < leaves.length; i++) {
    if (leaves[i]!.sequence !== leaves[i - 1]!.sequence + 1n)
      throw new Error(`the indexer's pending leaves skip from ${leaves[i - 1]!.sequence} to ${leaves[i]!.sequence}`);
  }
  return leaves;
}

/**
 * What the registry's refusal of an insertion means here. `raced`: every leaf it carried was
 * inserted meanwhile, by another inserter or an earlier transaction of ours (normal). `mismatch`: the
 * leaves or their sequences are not the chain's (an indexer on another fork, behind the node, or
 * wrong). Undefined: another refusal.
 */
export function insertionRefusal(revert: ContractRevertError | undefined): "raced" | "mismatch" | undefined {
  if (revert?.errorName === "PendingLeavesMismatch") return "mismatch";
  if (revert?.errorName !== "InvalidPendingRange") return undefined;
  const [from, count, inserted] = revert.args.map((a) => BigInt(a as bigint));
  return inserted! >= from! + count! ? "raced" : "mismatch";
}

type Outcome = "inserted" | "waiting" | "behind" | "nothing" | "raced" | "mismatch" | "out of gas";

/** How long an indexer behind the chain keeps the worker's fast poll: it catches up in a block or two, or it is stuck. */
export const INDEXER_CATCH_UP_MS = 30_000;
/** Passes in a row whose insertion the registry refused as not its queue: then the indexer is reported as wrong. */
const MISMATCH_PASSES = 3;

export class LeafInserter {
  /** The insertion sent and not yet seen mined (or its replacement). */
  #sent: (RecordedTransaction & { gas: bigint }) | undefined;
  /** The sequence at the head of the queue and when this worker first saw it there (its own clock). */
  #head: { sequence: bigint; seenAt: number } | undefined;
  #waiting = false;
  /** Since when the indexer is behind the chain's queue (undefined: it is not), and whether that was reported. */
  #behind: { since: number; reported: boolean } | undefined;
  /** What the indexer listed and the chain held at the last read, for the report of an indexer behind. */
  #listing = { listed: 0, from: 0n, pending: 0 };
  /** Passes in a row that ended in a mismatch, and whether that was reported. */
  #mismatches = { passes: 0, reported: false };

  constructor(
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: LeafInserterOptions,
  ) {}

  /** Whether leaves wait for their batch to fill or for the indexer to list them: the worker keeps its fast poll. */
  get waiting(): boolean {
    return this.#waiting;
  }

  /** Follows the insertion in flight; once none is, inserts the queue if it is due. */
  async pass(): Promise<void> {
    this.#waiting = false;
    let retried = false;
    if (this.#sent) {
      const followed = await this.#follow(this.#sent);
      if (followed === "mismatch") return this.#tally("mismatch");
      if (followed === "waiting") return;
      // Ran out of gas when mined: once more, on the queue as it is now.
      if (followed === "out of gas") retried = true;
    }
    // Two reads of the queue at most: leaves all inserted by someone else since they were read are
    // read again at once, and an insertion out of gas is tried once more, on the fresh queue. Still
    // all inserted on the second read: the indexer has not seen those insertions yet.
    let outcome: Outcome | undefined;
    for (let read = 0; read < 2; read++) {
      outcome = await this.#insert(retried);
      if (outcome === "out of gas") {
        if (retried) throw new Error("a leaf insertion ran out of gas within its computed limit, twice");
        retried = true;
      } else if (outcome !== "raced") return this.#tally(outcome);
    }
    if (outcome === "raced") this.#tally("behind");
  }

  /**
   * A stuck or wrong indexer makes no error by itself (insertions wait for it, or are refused before
   * they are sent): reported once it lasts, and once only until it is over.
   */
  #tally(outcome: Outcome): void {
    if (outcome === "behind") {
      const behind = (this.#behind ??= { since: Date.now(), reported: false });
      const late = Date.now() - behind.since;
      this.#waiting = late < (this.options.indexerCatchUpMs ?? INDEXER_CATCH_UP_MS);
      if (!this.#waiting && !behind.reported) {
        behind.reported = true;
        const { listed, from, pending } = this.#listing;
        this.options.onError?.(
          new Error(
            `the indexer (${this.options.indexerUrl}) has been behind the registry's queue for ${Math.round(late / 1000)} s (it lists ${listed} leaves from sequence ${from}; the registry holds ${pending} not inserted): it is stuck or far behind, and queued change waits for it`,
          ),
        );
      }
      return;
    }
    // Any other answer: the indexer listed the whole queue.
    this.#behind = undefined;
    const m = this.#mismatches;
    if (outcome !== "mismatch") {
      if (outcome === "inserted" || outcome === "nothing") this.#mismatches = { passes: 0, reported: false };
      return;
    }
    m.passes++;
    if (m.passes >= MISMATCH_PASSES && !m.reported) {
      m.reported = true;
      this.options.onError?.(
        new Error(
          `the registry refused the indexer's pending leaves as not its queue ${m.passes} passes in a row: the indexer (${this.options.indexerUrl}) is on another fork or wrong; no leaf is inserted until it agrees`,
        ),
      );
    }
  }

  /** Reads the queue and, when due, sends one insertion of it. */
  async #insert(force: boolean): Promise<Outcome> {
    const registry = { address: this.chain.registry, abi: collateralRegistryAbi } as const;
    // One read of the chain when nothing waits: the idle worker's whole cost here. An unreachable
    // node is the adapter's short `unavailable`, as the relays' own reads say it: viem's error
    // quotes the whole request and made each failed pass's log line 16 KB (process.test).
    const count = Number(
      await this.chain.read(() => this.chain.client.readContract({ ...registry, functionName: "pendingCount" })),
    );
    if (count === 0) {
      this.#head = undefined;
      return "nothing";
    }
    const leaves = await readPendingLeaves(this.options.indexerUrl);
    this.#listing = { listed: leaves.length, from: leaves[0]?.sequence ?? 0n, pending: count };
    // The indexer has not listed every queued leaf yet: wait for it, do not guess. More than the chain
    // holds is an indexer that has not seen an insertion yet: the registry skips the leaves it inserted.
    if (leaves.length < count) return "behind";
    const first = leaves[0]!;
    if (this.#head?.sequence !== first.sequence) this.#head = { sequence: first.sequence, seenAt: Date.now() };
    // Waited by the chain's time or, when that runs ahead of ours (a test chain's warp), since we saw it.
    const waited = Math.max(Date.now() - Number(first.timestamp) * 1000, Date.now() - this.#head.seenAt);
    if (!force && count < this.options.batchMax && waited < this.options.batchWaitMs) {
      this.#waiting = true;
      return "waiting";
    }
    const carried = leaves.slice(0, this.options.insertMax);
    const data = encodeFunctionData({
      abi: collateralRegistryAbi,
      functionName: "insertPendingLeaves",
      args: [first.sequence, carried.map((p) => p.leaf)],
    });
    const gas = (this.options.gasLimit ?? insertionGas)(carried.length);
    try {
      // Run first, within the limit it is sent with: leaves all inserted by someone else since the
      // count was read, or a listing the registry refuses, cost a read, not a reverted transaction.
      await this.chain.client.call({ account: this.sender.address, to: this.chain.registry, data, gas });
    } catch (error) {
      const revert = decodeRevert(error);
      const refusal = insertionRefusal(revert);
      if (refusal) return refusal;
      if (!revert && isOutOfGas(error)) return "out of gas";
      throw error;
    }
    await this.sender.send(
      this.chain.registry,
      data,
      gas,
      async (sent) => {
        this.#sent = { ...sent, gas };
        return true;
      },
      // The limit holds for any tree: nothing on top.
      0n,
    );
    return "inserted";
  }

  /** The insertion in flight: mined (settled here), still waiting (moved on by the sender), or gone. */
  async #follow(
    sent: RecordedTransaction & { gas: bigint },
  ): Promise<"waiting" | "settled" | "mismatch" | "out of gas"> {
    const receipt = await this.sender.receipt(sent.tx_hash!);
    if (!receipt) {
      const record = async (replacement: { tx_hash: Hex; raw_tx: Hex; nonce: number; submitted_at: Date }) => {
        this.#sent = { ...replacement, gas: sent.gas };
        return true;
      };
      // Its nonce went to another transaction (its replacement or one of ours mined first): the queue on
      // the chain says what is left to insert; a replacement mined later only finds less to do.
      if ((await this.sender.advance(sent, record)) === "nonce taken") {
        this.#sent = undefined;
        return "settled";
      }
      return "waiting";
    }
    this.#sent = undefined;
    if (receipt.status === "success") {
      this.options.onInserted?.({
        consumed: consumedIn(receipt.logs),
        txHash: receipt.transactionHash,
        gasUsed: receipt.gasUsed,
      });
      return "settled";
    }
    // All its gas used: out of gas, which the limit is meant to make impossible. Reported, and sent once more.
    if (receipt.gasUsed >= sent.gas) {
      this.options.onError?.(
        new Error(`leaf insertion ${receipt.transactionHash} ran out of gas (${receipt.gasUsed}); sent once more`),
      );
      return "out of gas";
    }
    // Reverted otherwise: most likely another inserter's transaction took every leaf it carried first.
    // Why it reverted is read by running it again; that race is normal, anything else is reported.
    const why = await this.#whyReverted(receipt.blockNumber, sent.raw_tx as Hex);
    if (why === "raced") return "settled";
    if (why === "mismatch") return "mismatch";
    this.options.onError?.(new Error(`leaf insertion ${receipt.transactionHash} reverted: ${why}`));
    return "settled";
  }

  /** Runs the reverted transaction again on the block before its own, then on its own block's end state. */
  async #whyReverted(blockNumber: bigint, raw: Hex): Promise<string> {
    const tx = parseTransaction(raw);
    // On the block before, it reverts when what moved the queue was mined earlier; when the move came
    // ahead of it in its own block, it reverts only on that block's state.
    for (const at of [blockNumber - 1n, blockNumber]) {
      try {
        await this.chain.client.call({
          account: this.sender.address,
          to: this.chain.registry,
          data: tx.data!,
          gas: tx.gas,
          blockNumber: at,
        });
      } catch (error) {
        const revert = decodeRevert(error);
        return insertionRefusal(revert) ?? revert?.errorName ?? (error as Error).message;
      }
    }
    return "a revert that running it again does not show";
  }
}

/** How many queued leaves a mined insertion consumed (its PendingLeavesInserted event). */
function consumedIn(logs: Parameters<typeof parseEventLogs>[0]["logs"]): number {
  const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs, eventName: "PendingLeavesInserted" });
  return event ? Number(event.args.consumed) : 0;
}
