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

// A spend's change, or a note of released collateral (a withdrawal, a close, a
// liquidation's surplus, a failed payout redirected), waits in the registry's
// queue until someone inserts it: no leaf index, no path yet. GET /pending-leaves
// lists what waits, so a wallet can tell a queued note from an unknown one and an
// inserter can pass the queue. A released note's amount is public and joins the
// unminted ZEC as it is queued (the registry counts it then); a change leaf's
// amount (0 here) is private and was never taken out of it (a spend takes only
// its floor).
ponder.on("CollateralRegistry:LeafQueued", async ({ event, context }) => {
  const { sequence, leaf, amountZat } = event.args;
  await context.db.insert(pendingLeaf).values({
    sequence,
    leaf,
    amountZat,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
  await context.db
    .insert(leafQueue)
    .values({ id: "queue", queuedCount: sequence + 1n })
    .onConflictDoUpdate({ queuedCount: sequence + 1n });
  if (amountZat !== 0n) {
    await updateCollateral(context, event.block.number, (row) => ({ unmintedZat: row.unmintedZat + amountZat }));
  }
});

// Queued leaves entered the tree: rows at their indexes, one root after the last,
// and the `consumed` oldest leave the queue, the dropped duplicates among them
// (the tree held them already). The event names the leaves only: a released
// note's amount comes from its queued row, change stays private (amount 0).
ponder.on("CollateralRegistry:PendingLeavesInserted", async ({ event, context }) => {
  const { leaves, consumed } = event.args;
  const queued = await context.db.sql
    .select({ sequence: pendingLeaf.sequence, leaf: pendingLeaf.leaf, amountZat: pendingLeaf.amountZat })
    .from(pendingLeaf)
    .orderBy(asc(pendingLeaf.sequence))
    .limit(Number(consumed));
  // The inserted leaves are the consumed ones in queue order less the dropped:
  // a consumed row that is not the next inserted leaf was dropped. A leaf equal
  // to an earlier consumed one is always dropped (the earlier one went in or
  // was dropped too), so matching in order cannot pair a leaf with the wrong row.
  let next = 0;
  const rows = batchRows("change", event.args, event).map((row) => {
    while (next < queued.length && queued[next]!.leaf !== row.leaf) next++;
    const source = queued[next++];
    if (!source) throw new Error(`PendingLeavesInserted: leaf ${row.leaf} is not among the ${consumed} consumed`);
    const { amountZat } = source;
    return amountZat === 0n ? row : { ...row, kind: "note", amountZat, maxAmountZat: amountZat };
  });
  if (rows.length > 0) await context.db.insert(deposit).values(rows);
  // The queue is consumed from its front, and every queued sequence has its row.
  const [oldest] = queued;
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
