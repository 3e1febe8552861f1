// The positions' books, read from the contracts: what every contract test that
// moves ZEC or ZSD checks after each step.
import { expect } from "vitest";
import { positionManagerAbi } from "@zsd/sdk/abis";
import type { System } from "@zsd/testkit";

/**
 * How far the positions' debts, read one by one, may sum above the total: each read rounds up (under
 * a wei a position), and a redistribution of `debt` out of `total` scales every other position's
 * debt, its rounding included, by total / (total − debt), so the excess grows with each one:
 * bound' = (bound + positions) · ⌈total / rest⌉. A redemption scales it down by what it leaves,
 * and one of the whole supply clears it. Read from the chain's events, so it holds across snapshots.
 */
async function debtExcessBound(s: System, count: bigint): Promise<bigint> {
  const [redistributed, redeemed] = await Promise.all(
    (["PositionRedistributed", "RedeemedFromPositions"] as const).map((eventName) =>
      s.publicClient.getContractEvents({
        address: s.read.positions.address,
        abi: positionManagerAbi,
        eventName,
        fromBlock: 0n,
      }),
    ),
  );
  const events = [...redistributed!, ...redeemed!].sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
  let bound = 0n;
  for (const event of events) {
    if (event.eventName === "RedeemedFromPositions") {
      const { amount, totalDebt: after } = event.args as { amount: bigint; totalDebt: bigint };
      bound = after === 0n ? 0n : (bound * after + after + amount - 1n) / (after + amount);
    } else {
      // One transaction a block: the total before the block is the total the redistribution kept.
      const total = await s.read.positions.read.totalDebt({ blockNumber: event.blockNumber - 1n });
      const rest = total - (event.args as { debt: bigint }).debt;
      bound = (bound + count) * ((total + rest - 1n) / rest);
    }
  }
  return bound;
}

/**
 * ZEC held = unminted notes + positions (backing and free) + pending payouts,
 * exactly; supply = total debt, exactly; and the positions, read one by one,
 * sum to the totals within their rounding: debts at or above the total by at
 * most a wei a position plus what redistributions scaled (`debtExcessBound`),
 * collateral at or under the totals by under 2 zatoshi a position, so the
 * positions never claim more than the totals hold.
 */
export async function checkBooks(s: System) {
  const [held, unminted, backing, free, pending, supply, debt, count] = await Promise.all([
    s.read.registry.read.totalCollateralZat(),
    s.read.registry.read.unmintedZat(),
    s.read.positions.read.backingCollateralZat(),
    s.read.positions.read.freeCollateralZat(),
    s.read.redemptions.read.pendingZatDue(),
    s.read.token.read.totalSupply(),
    s.read.positions.read.totalDebt(),
    s.read.positions.read.positionCount(),
  ]);
  expect(held).toBe(unminted + backing + free + pending);
  expect(supply).toBe(debt);
  let debts = 0n;
  let collateral = 0n;
  for (let id = 1n; id <= count; id++) {
    const p = await s.read.positions.read.getPosition([id]);
    debts += p.debt;
    collateral += p.collateralZat;
  }
  const bound = count + (await debtExcessBound(s, count));
  expect(debts - debt >= 0n && debts - debt <= bound, `Σ debts ${debts} vs total ${debt} (+ ${bound})`).toBe(true);
  // A read rounds its kept collateral down and its charge up: under 2 zatoshi each.
  const slack = backing + free - collateral;
  expect(slack >= 0n && slack <= 2n * count, `Σ collateral ${collateral} vs totals ${backing + free}`).toBe(true);
}
