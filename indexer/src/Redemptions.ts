import { ponder } from "ponder:registry";
import { redemption } from "ponder:schema";
import { updateCollateral } from "./lib/collateral";

// Every payout custody makes is a record here: a redemption (ZSD burnt), a
// release of collateral or a note withdrawal (amount 0), or a redirect of a
// failed one (amount 0, `redirectedFromId` set by PayoutRedirected).
ponder.on("Redemptions:PayoutRequested", async ({ event, context }) => {
  const { id, owner, amount, zatDue, feeZat, price, sealedAddressHash } = event.args;
  await context.db.insert(redemption).values({
    id,
    owner,
    amount,
    zatDue,
    feeZat,
    price,
    sealedAddressHash,
    status: "requested",
    requestedAtBlock: event.block.number,
    requestedAt: event.block.timestamp,
    requestTxHash: event.transaction.hash,
  });
  // A redirect's new record carries ZEC already owed: PayoutRedirected, which
  // follows in the same transaction, takes the failed record's share out.
  await updateCollateral(context, event.block.number, (row) => ({
    pendingRedemptionZat: row.pendingRedemptionZat + zatDue,
  }));
});

ponder.on("Redemptions:PayoutCompleted", async ({ event, context }) => {
  const { id, zcashTxId, zatPaid } = event.args;
  await context.db.update(redemption, { id }).set({
    status: "paid",
    zcashTxId,
    settledAtBlock: event.block.number,
    settledAt: event.block.timestamp,
    settleTxHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (row) => ({
    pendingRedemptionZat: row.pendingRedemptionZat - zatPaid,
  }));
});

// Custody could not pay: the ZEC stays owed to the owner (nothing is refunded,
// no position changes), who redirects it.
ponder.on("Redemptions:PayoutFailed", async ({ event, context }) => {
  const { id, zatHeld, reason } = event.args;
  await context.db.update(redemption, { id }).set({
    status: "failed",
    failureReason: reason,
    settledAtBlock: event.block.number,
    settledAt: event.block.timestamp,
    settleTxHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (c) => ({ heldPayoutZat: c.heldPayoutZat + zatHeld }));
});

// The held ZEC leaves the failed record as a whole: to the new payout `newId`
// (its PayoutRequested came first and counted it again), or into the note
// queued as `noteSequence` (its LeafQueued added it to the unminted ZEC).
ponder.on("Redemptions:PayoutRedirected", async ({ event, context }) => {
  const { id, newId, noteSequence } = event.args;
  const toNote = newId === 0n;
  const row = await context.db.update(redemption, { id }).set({
    status: "redirected",
    redirectedToId: toNote ? null : newId,
    redirectNoteSequence: toNote ? noteSequence : null,
    redirectedAtBlock: event.block.number,
    redirectedAt: event.block.timestamp,
    redirectTxHash: event.transaction.hash,
  });
  if (!toNote) await context.db.update(redemption, { id: newId }).set({ redirectedFromId: id });
  await updateCollateral(context, event.block.number, (c) => ({
    pendingRedemptionZat: c.pendingRedemptionZat - row.zatDue,
    heldPayoutZat: c.heldPayoutZat - row.zatDue,
  }));
});
