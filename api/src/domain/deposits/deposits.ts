// A deposit as its own account sees it. The chain shows a deposit's leaf and
// its batch's total only: its amount and note commitment stay with
// custody's ledger, which serves them to the account that made the deposit.
import { depositLeaf } from "@zsd/sdk/notes";
import { formatZec } from "@zsd/sdk/units";
import { depositLineOf, depositLinesAt } from "../../adapters/custody/ledger.ts";
import type { Queryable } from "../../adapters/db/index.ts";
import type { Upstreams } from "../../adapters/upstreams.ts";
import { domainErrors } from "../errors.ts";

export interface DepositView {
  object: "deposit";
  id: string;
  leafIndex: number;
  leaf: string;
  amount: string;
  amountZat: string;
  noteCommitment: string;
  txHash: string;
  createdAt: string;
}

/**
 * The deposit `id` of `accountId`. Another account's deposit, or one custody
 * found in its wallet for nobody's account, is not found: whether it exists
 * is no one else's business.
 */
export async function depositOf(db: Queryable, accountId: string, id: string): Promise<DepositView> {
  const row = await depositLineOf(db, accountId, id);
  if (!row) throw domainErrors.notFound(`Deposit ${id}`);
  const amountZat = BigInt(row.amount_zat);
  return {
    object: "deposit",
    id: row.public_id,
    leafIndex: row.leaf_index,
    leaf: depositLeaf(amountZat, BigInt(row.note_commitment)).toString(),
    amount: formatZec(amountZat),
    amountZat: row.amount_zat,
    noteCommitment: row.note_commitment,
    txHash: row.tx_hash,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/**
 * The account's own deposits among leaves `from`..`to`: their amounts and
 * commitments, which the chain does not show. The leaves page carries them to
 * the account that made them, so its wallet finds its note's leaf among all
 * the leaves it reads, naming none to the API; others see 0 there.
 */
export async function ownLeaves(
  db: Queryable,
  accountId: string,
  from: number,
  to: number,
): Promise<Map<number, { amountZat: string; noteCommitment: string }>> {
  const rows = await depositLinesAt(db, accountId, from, to);
  return new Map(rows.map((r) => [r.leaf_index, { amountZat: r.amount_zat, noteCommitment: r.note_commitment }]));
}

/** The change leaves the registry queued and did not insert yet: no path, so not spendable. */
export interface PendingLeavesView {
  data: { sequence: number; leaf: string; queuedAt: string }[];
  queuedCount: number;
}

interface IndexerPendingLeaves {
  pending: { sequence: string; leaf: string; timestamp: string }[];
  queuedCount: string;
}

/**
 * Where a change note stands between its spend and the tree: queued,
 * in order. A wallet that does not find its leaf among the tree's leaves looks
 * here before giving up; every wallet reads the same list, naming none.
 */
export async function pendingLeaves(upstreams: Upstreams): Promise<PendingLeavesView> {
  const queue = await upstreams.indexer<IndexerPendingLeaves>("/pending-leaves");
  return {
    data: queue.pending.map((p) => ({
      sequence: Number(p.sequence),
      leaf: p.leaf,
      queuedAt: new Date(Number(p.timestamp) * 1000).toISOString(),
    })),
    queuedCount: Number(queue.queuedCount),
  };
}
