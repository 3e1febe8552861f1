import { ponder } from "ponder:registry";
import { mint, noteWithdrawal, redemption } from "ponder:schema";
import { positionChanged, positionCollateral } from "./lib/positions";

ponder.on("StableMinter:Minted", async ({ event, context }) => {
  const { nullifierHash, recipient, relayer, mintAmount, fee, collateralFloorZat, root } = event.args;
  await context.db.insert(mint).values({
    nullifierHash,
    recipient,
    relayer,
    amount: mintAmount,
    fee,
    collateralFloorZat,
    root,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
});

// After a withdrawal, a liquidation (the seized part), a close (everything) or
// a redistribution (the caller's reward): the only way ZEC leaves a position.
// A batch of redistributions pays its keeper once, naming position 0: each
// position's PositionRedistributed row says what it gave.
ponder.on("StableMinter:CollateralReleased", async ({ event, context }) => {
  const { positionId, amountZat, payoutId, noteSequence, collateralLeft } = event.args;
  if (positionId === 0n) {
    await positionCollateral(context, event, -amountZat);
    return;
  }
  const toNote = payoutId === 0n;
  await positionChanged(context, event, positionId, () => ({ collateralZat: collateralLeft }), {
    kind: "released",
    amountZat,
    payoutId: toNote ? null : payoutId,
    noteSequence: toNote ? noteSequence : null,
  });
  await positionCollateral(context, event, -amountZat);
});

ponder.on("StableMinter:NoteWithdrawn", async ({ event, context }) => {
  const { nullifierHash, amountZat, payoutId } = event.args;
  // The payout's PayoutRequested came first, with the owner the proof binds.
  const payout = await context.db.find(redemption, { id: payoutId });
  if (!payout) throw new Error(`payout ${payoutId} of note withdrawal ${nullifierHash} not indexed`);
  await context.db.insert(noteWithdrawal).values({
    nullifierHash,
    amountZat,
    payoutId,
    owner: payout.owner,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
});
