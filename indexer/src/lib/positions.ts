// What a position's events do to its row and to the system totals: shared by
// the position manager's handlers and the minter's CollateralReleased.
import type { Context } from "ponder:registry";
import { position, positionEvent } from "ponder:schema";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { updateCollateral } from "./collateral";

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

export interface PositionLog {
  id: string;
  block: { number: bigint; timestamp: bigint };
  log: { logIndex: number; address: `0x${string}` };
  transaction: { hash: `0x${string}` };
}

/** Applies `change` to position `id` and records the event with the row it left. */
export async function positionChanged(
  context: Context,
  event: PositionLog,
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

export async function recordEvent(
  context: Context,
  event: PositionLog,
  row: PositionRow,
  detail: Detail,
): Promise<void> {
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
export async function positionCollateral(context: Context, event: PositionLog, deltaZat: bigint): Promise<void> {
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
