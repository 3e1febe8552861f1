// What is checked after every step: each position against the step's prediction, the chain's totals
// against the model and against each other, and (after price and risk moves) which positions the
// contracts would let a keeper liquidate or redistribute.
import { maxUint256 } from "viem";
import { expect } from "vitest";
import { stableMinterAbi } from "@zsd/sdk/abis";
import { BPS, PAYOUT, PROBE, SAPLING, SLACK_PER_POSITION, STATUS, abs, max } from "./constants.ts";
import type { Context } from "./context.ts";
import { type Chain, queueChain, settles, simulate, value } from "./chain.ts";
import { type Expected, type Model, spreadable } from "./model.ts";
import { count, stats } from "./stats.ts";

export function checkPositions(
  before: Chain,
  after: Chain,
  expected: Map<bigint, Expected>,
  label: string,
  debtSlack: bigint,
) {
  expect(after.positions.length >= before.positions.length, `${label}: position count`).toBe(true);
  for (const [i, p] of after.positions.entries()) {
    const id = BigInt(i + 1);
    const e = expected.get(id);
    if (!e) {
      // Everything a step does not name stays exactly as it was (a failed payout moves no position),
      // but for a few wei of debt: a read is capped at totalDebt, and totalDebt falls by the others'
      // rounded-up debts as they leave, so the last position's debt can read up to one wei per
      // position less (or more again when the cap lifts), and what redistributions scaled of that
      // rounding (the model's debt slack).
      const was = before.positions[i]!;
      const debtors = (c: Chain) => c.positions.filter((q) => q.debt > 0n).length;
      const capped = after.debt !== before.debt || debtors(after) !== debtors(before);
      const drift = p.debt !== was.debt && p.debt > 0n && was.debt > 0n && abs(p.debt - was.debt);
      const debt = capped && drift && drift <= BigInt(after.positions.length) + debtSlack ? was.debt : p.debt;
      if (debt !== p.debt) count("debt read moved by the totalDebt cap");
      expect({ ...p, debt }, `${label}: position ${id} unchanged`).toEqual(was);
      continue;
    }
    const where = `${label}: position ${id}${e.why ? ` (${e.why})` : ""}`;
    expect(p.status, `${where} status`).toBe(e.status);
    if (e.owner) expect(p.owner, `${where} owner`).toBe(e.owner);
    const errC = abs(p.collateralZat - e.collateral);
    const errD = abs(p.debt - e.debt);
    if (e.tolC !== undefined) {
      stats.maxCollateralError = max(stats.maxCollateralError, errC);
      stats.maxDebtError = max(stats.maxDebtError, errD);
    }
    expect(errC <= (e.tolC ?? 0n), `${where} collateral ${p.collateralZat}, model ${e.collateral}`).toBe(true);
    expect(errD <= (e.tolD ?? 0n), `${where} debt ${p.debt}, model ${e.debt}`).toBe(true);
  }
}

export async function checkInvariants({ s }: Context, m: Model, c: Chain, label: string) {
  // ZEC held = unminted notes + positions (backing and free) + owed payouts, exactly.
  expect(c.held, `${label}: held = unminted + backing + free + pending`).toBe(
    c.unminted + c.backing + c.free + c.pending,
  );
  // The model's totals: deposits in, spends and payouts out, nothing else.
  expect(c.held, `${label}: totalCollateralZat (model)`).toBe(m.held);
  expect(c.unminted, `${label}: unmintedZat (model)`).toBe(m.unminted);
  expect(c.pending, `${label}: pendingZatDue (model)`).toBe(m.pending);
  expect(c.payoutCount, `${label}: payoutCount (model)`).toBe(m.payoutCount);
  expect(c.price, `${label}: price`).toBe(m.price);
  expect(c.frozen, `${label}: price frozen`).toBe(m.frozen);
  // Every fetch of the step (a keeper's, or a mint's or liquidation's own) left the reference where
  // the model's fetches did: none but a walk's came a window after the last move of it.
  expect(c.reference, `${label}: reference price`).toEqual(m.feeds.ref);
  expect(c.epoch, `${label}: epoch (model)`).toBe(m.epoch);
  expect(c.params, `${label}: parameters`).toEqual(m.params);
  expect(c.supply, `${label}: totalSupply = totalDebt`).toBe(c.debt);
  // Change waits in the queue, in the order spent, until someone inserts it.
  expect([c.queuedCount, c.insertedCount], `${label}: queued and inserted (model)`).toEqual([
    BigInt(m.queued.length),
    BigInt(m.head),
  ]);
  expect(c.pendingCount, `${label}: pendingCount`).toBe(c.queuedCount - c.insertedCount);
  expect(c.chainTip, `${label}: chainAt(queuedCount) (model)`).toBe(queueChain(m.queued));
  expect(c.supply, `${label}: totalSupply (model)`).toBe(m.supply);

  const n = BigInt(c.positions.length);
  let debts = 0n;
  let collateral = 0n;
  expect(c.positions.length, `${label}: positions (model)`).toBe(m.positions.length);
  for (const [i, p] of c.positions.entries()) {
    const mp = m.positions[i]!;
    expect({ owner: p.owner, status: p.status }, `${label}: position ${i + 1} owner and status (model)`).toEqual(mp);
    if (p.status !== STATUS.Open) expect(p.debt, `${label}: position ${i + 1} not open owes nothing`).toBe(0n);
    if (p.status === STATUS.Closed) expect(p.collateralZat, `${label}: position ${i + 1} closed`).toBe(0n);
    debts += p.debt;
    collateral += p.collateralZat;
  }
  // Debt rounds up per position, by at most one wei each, plus what redistributions multiplied
  // of the others' rounding (total / rest each, tracked in the model).
  const excess = debts - c.debt;
  stats.maxDebtExcess = max(stats.maxDebtExcess, excess);
  if (c.debt === 0n) m.debtSlack = 0n;
  expect(
    excess >= 0n && excess <= n + m.debtSlack,
    `${label}: Σ debt ${debts} within [totalDebt ${c.debt}, + ${n} + redistribution slack ${m.debtSlack}]`,
  ).toBe(true);
  // Collateral rounds down per position: the totals hold at least the sum, and little more.
  const slack = c.backing + c.free - collateral;
  stats.maxSlack = max(stats.maxSlack, slack);
  if (n > 0n) stats.maxSlackPerPosition = Math.max(stats.maxSlackPerPosition, Number(slack) / Number(n));
  expect(slack >= 0n, `${label}: Σ collateral ${collateral} <= backing + free ${c.backing + c.free}`).toBe(true);
  expect(
    slack <= SLACK_PER_POSITION * n,
    `${label}: backing + free exceeds Σ collateral by ${slack} zat (> ${SLACK_PER_POSITION} per position)`,
  ).toBe(true);

  // Owed payouts are the model's requested and failed ones, and each record is as the model says.
  let owed = 0n;
  for (const p of m.payouts.values()) if (p.status === PAYOUT.Requested || p.status === PAYOUT.Failed) owed += p.zatDue;
  expect(owed, `${label}: Σ owed payouts (model) = pendingZatDue`).toBe(c.pending);
  for (const id of m.touched) {
    const r = await s.read.redemptions.read.getPayout([id]);
    const mp = m.payouts.get(id)!;
    expect(
      { owner: r.owner, status: Number(r.status), zatDue: BigInt(r.zatDue) },
      `${label}: payout ${id} (model)`,
    ).toEqual({ owner: mp.owner, status: mp.status, zatDue: mp.zatDue });
  }
  m.touched.clear();
}

/** Liquidation possible exactly under the liquidation ratio; redistribution exactly under 100% and a redemption's margin. */
export async function probe({ s }: Context, c: Chain, label: string) {
  const checks = c.positions.map(async (p, i) => {
    if (p.status !== STATUS.Open) return;
    const id = BigInt(i + 1);
    const v = value(c, p.collateralZat);
    const to = { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n };
    const liquidatable = p.debt !== 0n && v * BPS < p.debt * c.params.liquidationRatioBps;
    // A paused minter stops both before anything (its modifier), and a frozen price moves nobody's collateral.
    const frozen = c.paused ? "EnforcedPause" : c.frozen ? "PriceFrozen" : undefined;
    const liquidation = await simulate(() =>
      s.publicClient.simulateContract({
        address: s.read.minter.address,
        abi: stableMinterAbi,
        functionName: "liquidate",
        args: [id, { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n }, to],
        account: PROBE,
      }),
    );
    // Past the ratio check the burn refuses the probe, which holds no ZSD.
    expect(liquidation, `${label}: liquidation probe of position ${id} (${v} vs debt ${p.debt})`).toBe(
      frozen ?? (liquidatable ? "ERC20InsufficientBalance" : "PositionNotLiquidatable"),
    );
    const expected = !settles(c, p.collateralZat, p.debt)
      ? "PositionNotUnderwater"
      : !spreadable(p.debt, c.debt)
        ? "NoDebtToRedistributeTo"
        : null;
    const redistribution = await simulate(() =>
      s.publicClient.simulateContract({
        address: s.read.minter.address,
        abi: stableMinterAbi,
        functionName: "redistribute",
        args: [id, to],
        account: PROBE,
      }),
    );
    expect(redistribution, `${label}: redistribution probe of position ${id}`).toBe(frozen ?? expected);
    // The view keepers go by says what the call does.
    expect(
      await s.read.positions.read.redistributable([id]),
      `${label}: redistributable(${id}) against the probe (${redistribution})`,
    ).toBe(redistribution === null);
  });
  await Promise.all(checks);
}
