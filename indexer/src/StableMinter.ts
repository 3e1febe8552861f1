import { type Context, ponder } from "ponder:registry";
import { mint, noteWithdrawal, position, positionEvent } from "ponder:schema";
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

// Positions. A row holds what the position's own events say; redemptions move
// every open position at once without naming any (see ponder.schema.ts), so
// only the system total follows them.

type PositionRow = typeof position.$inferSelect;
type PositionEventRow = typeof positionEvent.$inferInsert;
/** What an event row says beyond the position's row: see the table in ponder.schema.ts. */
type Detail = Pick<PositionEventRow, "kind"> &
  Partial<
    Pick<PositionEventRow, "account" | "amount" | "amountZat" | "nullifierHash" | "payoutId" | "noteIndex" | "price">
  >;

interface MinterLog {
  id: string;
  block: { number: bigint; timestamp: bigint };
  log: { logIndex: number };
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

/** The ZEC held by all positions moves by `deltaZat`. */
function positionCollateral(context: Context, event: MinterLog, deltaZat: bigint): Promise<void> {
  return updateCollateral(context, event.block.number, (row) => ({
    positionCollateralZat: row.positionCollateralZat + deltaZat,
  }));
}

ponder.on("StableMinter:PositionOpened", async ({ event, context }) => {
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

ponder.on("StableMinter:PositionToppedUp", async ({ event, context }) => {
  const { positionId, nullifierHash, amountZat } = event.args;
  await positionChanged(context, event, positionId, (r) => ({ collateralZat: r.collateralZat + amountZat }), {
    kind: "toppedUp",
    amountZat,
    nullifierHash,
  });
  await positionCollateral(context, event, amountZat);
});

ponder.on("StableMinter:PositionRepaid", async ({ event, context }) => {
  const { positionId, payer, amount, debtLeft } = event.args;
  await positionChanged(context, event, positionId, () => ({ debt: debtLeft }), {
    kind: "repaid",
    account: payer,
    amount,
  });
});

// After a withdrawal, a liquidation (the seized part) or a close (everything):
// the only way ZEC leaves a position.
ponder.on("StableMinter:CollateralReleased", async ({ event, context }) => {
  const { positionId, amountZat, payoutId, noteIndex, collateralLeft } = event.args;
  const toNote = payoutId === 0n;
  await positionChanged(context, event, positionId, () => ({ collateralZat: collateralLeft }), {
    kind: "released",
    amountZat,
    payoutId: toNote ? null : payoutId,
    noteIndex: toNote ? noteIndex : null,
  });
  await positionCollateral(context, event, -amountZat);
});

// The collateral it had leaves with the CollateralReleased that follows.
ponder.on("StableMinter:PositionClosed", async ({ event, context }) => {
  const { positionId, debtRepaid, collateralZat } = event.args;
  await positionChanged(context, event, positionId, () => ({ status: "closed", collateralZat: 0n, debt: 0n }), {
    kind: "closed",
    amount: debtRepaid,
    amountZat: collateralZat,
  });
});

// The seized part leaves with the CollateralReleased that follows; the surplus stays the owner's.
ponder.on("StableMinter:PositionLiquidated", async ({ event, context }) => {
  const { positionId, liquidator, debt, seizedZat, surplusZat, price } = event.args;
  await positionChanged(
    context,
    event,
    positionId,
    () => ({ status: "liquidated", collateralZat: surplusZat, debt: 0n }),
    { kind: "liquidated", account: liquidator, amount: debt, amountZat: seizedZat, price },
  );
});

ponder.on("StableMinter:RedeemedFromPositions", async ({ event, context }) => {
  await positionCollateral(context, event, -event.args.zatTaken);
});

ponder.on("StableMinter:RedemptionRestored", async ({ event, context }) => {
  await positionCollateral(context, event, event.args.zat);
});

ponder.on("StableMinter:NoteWithdrawn", async ({ event, context }) => {
  const { nullifierHash, amountZat, payoutId } = event.args;
  await context.db.insert(noteWithdrawal).values({
    nullifierHash,
    amountZat,
    payoutId,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
});
