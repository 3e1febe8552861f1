import { ponder } from "ponder:registry";
import { redemption } from "ponder:schema";
import { updateCollateral } from "./lib/collateral";

ponder.on("Redemptions:RedemptionRequested", async ({ event, context }) => {
  const { id, owner, amount, zatDue, feeZat, price, withdrawAddress } = event.args;
  await context.db.insert(redemption).values({
    id,
    owner,
    amount,
    zatDue,
    feeZat,
    price,
    withdrawAddress,
    status: "requested",
    requestedAtBlock: event.block.number,
    requestedAt: event.block.timestamp,
    requestTxHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (row) => ({
    pendingRedemptionZat: row.pendingRedemptionZat + zatDue,
  }));
});

ponder.on("Redemptions:RedemptionCompleted", async ({ event, context }) => {
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

ponder.on("Redemptions:RedemptionFailed", async ({ event, context }) => {
  const { id, reason } = event.args;
  const row = await context.db.update(redemption, { id }).set({
    status: "failed",
    failureReason: reason,
    settledAtBlock: event.block.number,
    settledAt: event.block.timestamp,
    settleTxHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, (c) => ({
    pendingRedemptionZat: c.pendingRedemptionZat - row.zatDue,
  }));
});
