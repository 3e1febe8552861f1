import type { Context } from "ponder:registry";
import { collateral } from "ponder:schema";

type Row = typeof collateral.$inferSelect;

const EMPTY = {
  depositedZat: 0n,
  paidOutZat: 0n,
  outstandingZat: 0n,
  pendingRedemptionZat: 0n,
  heldPayoutZat: 0n,
  deposits: 0,
  unmintedZat: 0n,
  positionCollateralZat: 0n,
  backingCollateralZat: 0n,
  freeCollateralZat: 0n,
  price: 0n,
  priceUpdatedAt: 0n,
};

/** Applies `change` to the single collateral row, creating it on first use. */
export async function updateCollateral(
  context: Context,
  blockNumber: bigint,
  change: (row: Row) => Partial<Omit<Row, "id" | "updatedAtBlock">>,
): Promise<void> {
  const current = (await context.db.find(collateral, { id: "ZEC" })) ?? {
    id: "ZEC",
    updatedAtBlock: blockNumber,
    ...EMPTY,
  };
  await context.db
    .insert(collateral)
    .values({ ...current, ...change(current), updatedAtBlock: blockNumber })
    .onConflictDoUpdate({ ...change(current), updatedAtBlock: blockNumber });
}
