// The positions' books, read from the contracts: what every contract test that
// moves ZEC or ZSD checks after each step.
import { expect } from "vitest";
import type { System } from "@zsd/testkit";

/**
 * ZEC held = unminted notes + positions (backing and free) + pending payouts,
 * exactly; supply = total debt, exactly; and the positions, read one by one,
 * sum to the totals within their rounding: each rounds its debt up (under a
 * wei) and its collateral down (under 2 zatoshi), so the positions never claim
 * more than the totals hold.
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
  expect(debts - debt >= 0n && debts - debt <= count, `Σ debts ${debts} vs total ${debt}`).toBe(true);
  // A read rounds its kept collateral down and its charge up: under 2 zatoshi each.
  const slack = backing + free - collateral;
  expect(slack >= 0n && slack <= 2n * count, `Σ collateral ${collateral} vs totals ${backing + free}`).toBe(true);
}
