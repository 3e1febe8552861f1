import { ponder } from "ponder:registry";
import { deposit, depositBatch } from "ponder:schema";
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

// The change leaves of a mintBatch, entered together: amounts private, already unminted.
ponder.on("CollateralRegistry:ChangeLeavesInserted", async ({ event, context }) => {
  await context.db.insert(deposit).values(batchRows("change", event.args, event));
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
