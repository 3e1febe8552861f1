// What the mint relay needs to send queued mints together in one
// StableMinter.mintBatch: the call, its gas limit, and how mints are packed
// into transactions under the per-transaction gas cap.
import {
  type Hex,
  decodeFunctionData,
  encodeFunctionData,
  parseEventLogs,
  parseTransaction,
  toFunctionSelector,
} from "viem";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import { CHANGE_QUEUE_GAS, TX_GAS_CAP, WALK_HEADROOM } from "../../adapters/gas.ts";
import { type MintCallRow, mintCallOf } from "../../domain/mints/mints.ts";
import type { MintJobRow } from "../../domain/mints/store.ts";

/** A mint the relay moves on, with its proof's columns. */
export type JobRow = MintJobRow;

/** A queued mint ready to go: simulated alone, with its call and estimate. */
export interface Ready {
  job: JobRow;
  data: Hex;
  gas: bigint;
  /** Its change leaf (0 for none), which sets its share of a batch's gas limit. */
  change_leaf: string;
  /** Where its position's walk into the ratio order starts, found as it was simulated. */
  hint: bigint;
}

/** The proof's columns as a mint call takes them (the proof's recipient, the mint's amount). */
export function callRowOf(job: JobRow): MintCallRow {
  return { ...job, mint_amount: job.amount, recipient: job.proof_recipient };
}

/** Sent mints by transaction, in the order read: a batch's rows share one. */
export function byTransaction(jobs: JobRow[]): JobRow[][] {
  const groups = new Map<string, JobRow[]>();
  for (const job of jobs) {
    const key = job.tx_hash ?? job.id;
    groups.set(key, [...(groups.get(key) ?? []), job]);
  }
  return [...groups.values()];
}

/**
 * What one mintBatch costs whatever its items: the transaction, the batch
 * check's N + 3 pairings beyond the items' own, the arrays. Measured
 * (bench:contracts, 4ead5b1, without change): a batch of 1 takes 517,204
 * gas and one of 16 3,268,976, so 333,753 fixed and 183,451 an item.
 */
export const MINT_BATCH_BASE_GAS = 450_000n;

/**
 * One item without its change leaf: its share of the pairing product,
 * nullifier, position slots, ratio bucket and the token's mints (a recipient
 * holding nothing yet writes a fresh balance slot). 183,451 measured with
 * recipients that held ZSD; the rest is margin for fresh slots and calldata.
 */
export const MINT_BATCH_ITEM_GAS = 300_000n;

/**
 * What a batch must run within when it is simulated: fixed, not estimated.
 * An item with a change leaf gets the queueing of its leaf on top
 * (CHANGE_QUEUE_GAS): the leaf waits in the registry's queue and is inserted
 * later, so no tree walk is budgeted here.
 */
export function mintBatchSimulationGas(rows: readonly Pick<MintCallRow, "change_leaf">[]): bigint {
  return rows.reduce(
    (gas, row) => gas + MINT_BATCH_ITEM_GAS + (BigInt(row.change_leaf) === 0n ? 0n : CHANGE_QUEUE_GAS),
    MINT_BATCH_BASE_GAS,
  );
}

/**
 * The gas limit a batch is sent with: its simulation budget and WALK_HEADROOM.
 * An item's position is filed in its sorted list, and positions filed between
 * the simulation and the batch's block can lengthen that walk: a batch that
 * ran within its budget at the head keeps this much room for it when mined,
 * as a single mint's estimate does.
 */
export function mintBatchGas(rows: readonly Pick<MintCallRow, "change_leaf">[]): bigint {
  return mintBatchSimulationGas(rows) + WALK_HEADROOM;
}

/**
 * Splits mints, in order, into batches of at most `max` whose gas limit stays
 * under the per-transaction cap (32, the minter's most, fit with change: 12.2M).
 */
export function packBatches<Row extends Pick<MintCallRow, "change_leaf">>(rows: readonly Row[], max: number): Row[][] {
  const batches: Row[][] = [];
  let current: Row[] = [];
  for (const row of rows) {
    if (current.length > 0 && (current.length >= max || mintBatchGas([...current, row]) > TX_GAS_CAP)) {
      batches.push(current);
      current = [];
    }
    current.push(row);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Call data of `mintBatch` for stored proofs, each item exactly the request its proof binds. */
export function mintBatchCallOf(rows: readonly MintCallRow[]): Hex {
  const items = rows.map((row) => {
    const { args } = decodeFunctionData({ abi: stableMinterAbi, data: mintCallOf(row) });
    return args as unknown as readonly [unknown, unknown];
  });
  return encodeFunctionData({
    abi: stableMinterAbi,
    functionName: "mintBatch",
    args: [items.map(([proof]) => proof), items.map(([, request]) => request)] as never,
  });
}

const MINT_BATCH_SELECTOR = toFunctionSelector(
  stableMinterAbi.find((item) => item.type === "function" && item.name === "mintBatch") as never,
);

/** Whether a signed relay transaction carries a mintBatch (else a single mint). */
export function isMintBatch(rawTx: string | null): boolean {
  try {
    return (parseTransaction(rawTx as Hex).data ?? "0x").slice(0, 10).toLowerCase() === MINT_BATCH_SELECTOR;
  } catch {
    return false; // Not a transaction we can read: followed as a single mint, by its hash.
  }
}

/** How many mints a signed mintBatch carries (0 if it is not one we can read). */
export function mintBatchSize(rawTx: string | null): number {
  try {
    const { functionName, args } = decodeFunctionData({
      abi: stableMinterAbi,
      data: parseTransaction(rawTx as Hex).data!,
    });
    return functionName === "mintBatch" ? (args[0] as readonly unknown[]).length : 0;
  } catch {
    return 0;
  }
}

export type Logs = Parameters<typeof parseEventLogs>[0]["logs"];

/**
 * The position a mint opened: the position manager's PositionOpened event just
 * before the minter's Minted event (a batch opens one per item, each right before its Minted).
 */
export function positionOpenedIn(logs: Logs, nullifierHash: string): string | null {
  const minted = parseEventLogs({ abi: stableMinterAbi, logs, eventName: "Minted" }).find(
    (event) => event.args.nullifierHash === BigInt(nullifierHash),
  );
  if (!minted) return null;
  const opened = parseEventLogs({ abi: positionManagerAbi, logs, eventName: "PositionOpened" })
    .filter((event) => event.logIndex < minted.logIndex)
    .at(-1);
  return opened ? opened.args.positionId.toString() : null;
}

/**
 * How long before its root expires a mint stops joining batches (a quarter of
 * maxRootAge when that is shorter): a batch can be mined later than its
 * checks ran, and one item whose root expired in between reverts it for all.
 */
export const ROOT_EXPIRY_MARGIN_S = 600n;

/**
 * The roots, among those given, that the minter stops taking within the
 * margin at the head's time (superseded, their age nearly run out): their
 * mints go alone. Two reads a pass and one a distinct root; a chain that
 * cannot be read answers none (each item's own run then meets the node).
 */
export async function expiringRoots(chain: Chain, roots: readonly string[]): Promise<Set<string>> {
  const distinct = [...new Set(roots)];
  if (distinct.length === 0) return new Set();
  try {
    const [age, head, superseded] = await Promise.all([
      chain.maxRootAge(),
      chain.client.getBlock({ blockTag: "latest" }),
      Promise.all(distinct.map((root) => chain.rootSupersededAt(BigInt(root)))),
    ]);
    const margin = age / 4n < ROOT_EXPIRY_MARGIN_S ? age / 4n : ROOT_EXPIRY_MARGIN_S;
    return new Set(distinct.filter((_, i) => superseded[i]! !== 0n && superseded[i]! + age < head.timestamp + margin));
  } catch {
    return new Set();
  }
}
