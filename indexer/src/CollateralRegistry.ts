import { ponder } from "ponder:registry";
import { asc, lt } from "ponder";
import { deposit, depositBatch, leafQueue, pendingLeaf } from "ponder:schema";
import { updateCollateral } from "./lib/collateral";

// Deposits are recorded in batches (one deposit too), which publish their total
// only: each leaf's amount stays private
// (0 here, kind "batch-deposit"), like a change leaf's, and is bounded by the
// total (each of the others holds at least a zatoshi). Every leaf gets its row at
// its index; only the batch's last leaf carries a root, since the
// registry never had a root between a batch's leaves.
/** A row per leaf of a batch at its index, amount private; only the last leaf carries the batch's root. */
function batchRows(
  kind: "batch-deposit" | "change",
  args: { firstIndex: bigint; leaves: readonly bigint[]; root: bigint; totalZat?: bigint },
  event: { block: { number: bigint; timestamp: bigint }; transaction: { hash: `0x${string}` } },
) {
  const { firstIndex, leaves, root, totalZat } = args;
  const maxAmountZat = totalZat === undefined ? 0n : totalZat - BigInt(leaves.length - 1);
  return leaves.map((leaf, i) => ({
    index: Number(firstIndex) + i,
    leaf,
    kind,
    noteCommitment: 0n,
    amountZat: 0n,
    maxAmountZat,
    root: i === leaves.length - 1 ? root : 0n,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  }));
}

// The batch gets a row of its own too: how many of its leaves can hold a floor at once depends on
// its total and size, which no single leaf's row shows (GET /anonymity).
ponder.on("CollateralRegistry:DepositsRecorded", async ({ event, context }) => {
  const { firstIndex, leaves, totalZat, totalCollateralZat } = event.args;
  const rows = batchRows("batch-deposit", event.args, event);
  await context.db.insert(deposit).values(rows);
  await context.db.insert(depositBatch).values({
    firstIndex: Number(firstIndex),
    size: leaves.length,
    totalZat,
    maxAmountZat: rows[0]!.maxAmountZat,
    blockNumber: event.block.number,
    txHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (row) => ({
    depositedZat: row.depositedZat + totalZat,
    outstandingZat: totalCollateralZat,
    deposits: row.deposits + leaves.length,
    unmintedZat: row.unmintedZat + totalZat,
  }));
});

// A spend's change waits in the registry's queue until someone inserts it: no
// leaf index, no path yet. GET /pending-leaves lists what waits, so a wallet
// can tell a queued note from an unknown one and an inserter can pass the queue.
ponder.on("CollateralRegistry:LeafQueued", async ({ event, context }) => {
  const { sequence, leaf } = event.args;
  await context.db.insert(pendingLeaf).values({
    sequence,
    leaf,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
  await context.db
    .insert(leafQueue)
    .values({ id: "queue", queuedCount: sequence + 1n })
    .onConflictDoUpdate({ queuedCount: sequence + 1n });
});

// Queued leaves entered the tree: rows at their indexes like a batch of change
// (amounts private, already unminted), and the `consumed` oldest leave the queue,
// the dropped duplicates among them (the tree held them already).
ponder.on("CollateralRegistry:PendingLeavesInserted", async ({ event, context }) => {
  const { leaves, consumed } = event.args;
  if (leaves.length > 0) await context.db.insert(deposit).values(batchRows("change", event.args, event));
  const [oldest] = await context.db.sql
    .select({ sequence: pendingLeaf.sequence })
    .from(pendingLeaf)
    .orderBy(asc(pendingLeaf.sequence))
    .limit(1);
  // The queue is consumed from its front, and every queued sequence has its row.
  if (oldest) await context.db.sql.delete(pendingLeaf).where(lt(pendingLeaf.sequence, oldest.sequence + consumed));
});

// Its row leaves with the PendingLeavesInserted of the same call; the tree holds the leaf already.
ponder.on("CollateralRegistry:PendingLeafDropped", async ({ event }) => {
  console.info(
    JSON.stringify({
      level: 30,
      time: Date.now(),
      msg: "Queued leaf dropped: the tree held it already",
      leaf: event.args.leaf.toString(),
      txHash: event.transaction.hash,
    }),
  );
});

// The leaf is all a prover needs; the commitment stays with the note's owner.
// A note with an amount (released collateral, a payout redirected into a note)
// adds to the unminted ZEC; a change leaf's amount is private and was never
// taken out of it (a spend takes only its floor).
ponder.on("CollateralRegistry:NoteInserted", async ({ event, context }) => {
  const { index, leaf, amountZat, root } = event.args;
  await context.db.insert(deposit).values({
    index: Number(index),
    leaf,
    kind: amountZat === 0n ? "change" : "note",
    noteCommitment: 0n,
    amountZat,
    maxAmountZat: amountZat,
    root,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
  if (amountZat !== 0n) {
    await updateCollateral(context, event.block.number, (row) => ({ unmintedZat: row.unmintedZat + amountZat }));
  }
});

// A proof spent a note's floor (into a position, or out as a payout).
ponder.on("CollateralRegistry:NoteSpent", async ({ event, context }) => {
  await updateCollateral(context, event.block.number, () => ({ unmintedZat: event.args.unmintedZat }));
});

ponder.on("CollateralRegistry:CollateralPaidOut", async ({ event, context }) => {
  const { amountZat, totalCollateralZat } = event.args;
  await updateCollateral(context, event.block.number, (row) => ({
    paidOutZat: row.paidOutZat + amountZat,
    outstandingZat: totalCollateralZat,
  }));
});
