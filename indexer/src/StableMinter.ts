import { type Context, ponder } from "ponder:registry";
import { mint, noteWithdrawal, position, positionEvent, redemption } from "ponder:schema";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { updateCollateral } from "./lib/collateral";

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

// Positions. A row holds what the position's own events say; redemptions and
// redistributions move every open position at once without naming any (see
// ponder.schema.ts), so only the system totals follow them.

type PositionRow = typeof position.$inferSelect;
type PositionEventRow = typeof positionEvent.$inferInsert;
/** What an event row says beyond the position's row: see the table in ponder.schema.ts. */
type Detail = Pick<PositionEventRow, "kind"> &
  Partial<
    Pick<
      PositionEventRow,
      "account" | "amount" | "amountZat" | "nullifierHash" | "payoutId" | "noteSequence" | "price" | "rewardZat"
    >
  >;

interface MinterLog {
  id: string;
  block: { number: bigint; timestamp: bigint };
  log: { logIndex: number; address: `0x${string}` };
  transaction: { hash: `0x${string}` };
}

/** Applies `change` to position `id` and records the event with the row it left. */
async function positionChanged(
  context: Context,
  event: MinterLog,
  id: bigint,
  change: (row: PositionRow) => Partial<Pick<PositionRow, "status" | "collateralZat" | "debt">>,
  detail: Detail,
): Promise<void> {
  const row = await context.db.update(position, { id }).set((r) => ({
    ...change(r),
    updatedAtBlock: event.block.number,
    lastTxHash: event.transaction.hash,
  }));
  await recordEvent(context, event, row, detail);
}

async function recordEvent(context: Context, event: MinterLog, row: PositionRow, detail: Detail): Promise<void> {
  await context.db.insert(positionEvent).values({
    id: event.id,
    positionId: row.id,
    ...detail,
    debt: row.debt,
    collateralZat: row.collateralZat,
    blockNumber: event.block.number,
    logIndex: event.log.logIndex,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
}

/**
 * The ZEC held by all positions moves by `deltaZat`; its split between backing
 * and free collateral is read from the position manager at the event's block (a full
 * repayment frees a position's live collateral, which no event carries).
 */
async function positionCollateral(context: Context, event: MinterLog, deltaZat: bigint): Promise<void> {
  const positions = { abi: positionManagerAbi, address: context.contracts.PositionManager.address } as const;
  // Ponder reads at the block of the event being handled.
  const [backing, free] = await Promise.all([
    context.client.readContract({ ...positions, functionName: "backingCollateralZat" }),
    context.client.readContract({ ...positions, functionName: "freeCollateralZat" }),
  ]);
  await updateCollateral(context, event.block.number, (row) => ({
    positionCollateralZat: row.positionCollateralZat + deltaZat,
    backingCollateralZat: backing,
    freeCollateralZat: free,
  }));
}

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

// After a withdrawal, a liquidation (the seized part), a close (everything) or
// a redistribution (the caller's reward): the only way ZEC leaves a position.
ponder.on("StableMinter:CollateralReleased", async ({ event, context }) => {
  const { positionId, amountZat, payoutId, noteSequence, collateralLeft } = event.args;
  const toNote = payoutId === 0n;
  await positionChanged(context, event, positionId, () => ({ collateralZat: collateralLeft }), {
    kind: "released",
    amountZat,
    payoutId: toNote ? null : payoutId,
    noteSequence: toNote ? noteSequence : null,
  });
  await positionCollateral(context, event, -amountZat);
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
