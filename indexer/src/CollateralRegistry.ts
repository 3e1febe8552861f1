import { ponder } from "ponder:registry";
import { deposit } from "ponder:schema";
import { updateCollateral } from "./lib/collateral";

ponder.on("CollateralRegistry:DepositRecorded", async ({ event, context }) => {
  const { index, leaf, noteCommitment, amountZat, root, totalCollateralZat } = event.args;
  await context.db.insert(deposit).values({
    index: Number(index),
    leaf,
    kind: "deposit",
    noteCommitment,
    amountZat,
    root,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (row) => ({
    depositedZat: row.depositedZat + amountZat,
    outstandingZat: totalCollateralZat,
    deposits: row.deposits + 1,
  }));
});

// The leaf is all a prover needs; the commitment stays with the note's owner.
ponder.on("CollateralRegistry:NoteInserted", async ({ event, context }) => {
  const { index, leaf, amountZat, root } = event.args;
  await context.db.insert(deposit).values({
    index: Number(index),
    leaf,
    kind: amountZat === 0n ? "change" : "note",
    noteCommitment: 0n,
    amountZat,
    root,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
});

ponder.on("CollateralRegistry:CollateralPaidOut", async ({ event, context }) => {
  const { amountZat, totalCollateralZat } = event.args;
  await updateCollateral(context, event.block.number, (row) => ({
    paidOutZat: row.paidOutZat + amountZat,
    outstandingZat: totalCollateralZat,
  }));
});
