// Positions. A row holds what the position's own events say; redemptions and
// redistributions move every open position at once without naming any (see
// ponder.schema.ts), so only the system totals follow them.
import { ponder } from "ponder:registry";
import { position } from "ponder:schema";
import { positionChanged, positionCollateral, recordEvent } from "./lib/positions";

ponder.on("PositionManager:PositionOpened", async ({ event, context }) => {
  const { positionId, owner, collateralZat, debt } = event.args;
  const row = await context.db.insert(position).values({
    id: positionId,
    owner,
    status: "open",
    collateralZat,
    debt,
    openedAtBlock: event.block.number,
    updatedAtBlock: event.block.number,
    lastTxHash: event.transaction.hash,
  });
  await recordEvent(context, event, row, { kind: "opened", account: owner, amount: debt, amountZat: collateralZat });
  await positionCollateral(context, event, collateralZat);
});

ponder.on("PositionManager:PositionToppedUp", async ({ event, context }) => {
  const { positionId, nullifierHash, amountZat } = event.args;
  await positionChanged(context, event, positionId, (r) => ({ collateralZat: r.collateralZat + amountZat }), {
    kind: "toppedUp",
    amountZat,
    nullifierHash,
  });
  await positionCollateral(context, event, amountZat);
});

ponder.on("PositionManager:PositionRepaid", async ({ event, context }) => {
  const { positionId, payer, amount, debtLeft } = event.args;
  await positionChanged(context, event, positionId, () => ({ debt: debtLeft }), {
    kind: "repaid",
    account: payer,
    amount,
  });
  // Repaid in full, its collateral moves from backing to free.
  await positionCollateral(context, event, 0n);
});

// The collateral it had leaves with the CollateralReleased that follows.
ponder.on("PositionManager:PositionClosed", async ({ event, context }) => {
  const { positionId, debtRepaid, collateralZat } = event.args;
  await positionChanged(context, event, positionId, () => ({ status: "closed", collateralZat: 0n, debt: 0n }), {
    kind: "closed",
    amount: debtRepaid,
    amountZat: collateralZat,
  });
  await positionCollateral(context, event, 0n);
});

// The seized part leaves with the CollateralReleased that follows; the surplus stays the owner's.
ponder.on("PositionManager:PositionLiquidated", async ({ event, context }) => {
  const { positionId, liquidator, debt, seizedZat, surplusZat, price } = event.args;
  await positionChanged(
    context,
    event,
    positionId,
    () => ({ status: "liquidated", collateralZat: surplusZat, debt: 0n }),
    { kind: "liquidated", account: liquidator, amount: debt, amountZat: seizedZat, price },
  );
  await positionCollateral(context, event, 0n);
});

// A position under 100%: its debt and its collateral less the reward go to
// every other position in proportion to debt, so the positions' total falls
// only by the reward, which leaves with the CollateralReleased that follows
// (none inside a par redemption, where the reward is 0 and the caller the
// Redemptions contract). The position is left liquidated with nothing.
ponder.on("PositionManager:PositionRedistributed", async ({ event, context }) => {
  const { positionId, caller, debt, collateralZat, rewardZat } = event.args;
  await positionChanged(context, event, positionId, () => ({ status: "liquidated", collateralZat: 0n, debt: 0n }), {
    kind: "redistributed",
    account: caller,
    amount: debt,
    amountZat: collateralZat,
    rewardZat,
  });
  await positionCollateral(context, event, 0n);
});

ponder.on("PositionManager:RedeemedFromPositions", async ({ event, context }) => {
  await positionCollateral(context, event, -event.args.zatTaken);
});
