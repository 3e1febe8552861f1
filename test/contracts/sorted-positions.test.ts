// A crowd of positions in one bucket of the ratio order: a write that takes its caller's hint costs
// what it costs in an empty bucket, and a hint that is wrong, stale, another bucket's, the position's
// own or no position at all only lengthens the walk; every write still files the position where its
// ratio puts it. The crowd is filed through contracts/mocks/DirectMinter.sol on a PositionManager of
// its own (a proof per position would take minutes); the real minter passes hints the same way.
import { parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { releaseProver } from "@zsd/sdk";
import {
  type Crowd,
  type System,
  ZEC,
  ZSD,
  accounts,
  crowdedWriteGas,
  deployCrowd,
  deploySystem,
} from "../helpers/fixtures.ts";

const { deployer } = accounts;
/** 10 ZEC at $50 against 307-315 ZSD: 159-163%, one bucket (keys 3.169e6-3.268e6 zatoshi per ZSD). */
const COLLATERAL = 10n * ZEC;
const CROWD = 500;
const FIRST_DEBT = 307n * ZSD;
const DEBT_STEP = (7n * ZSD) / BigInt(CROWD);
/** Above every position of the crowd, in its bucket: where a fresh mint lands. */
const FRESH_DEBT = 306n * ZSD + ZSD / 2n;
/** Gas of one step of a walk through the bucket: two cold reads. */
const STEP_GAS = 4_000n;

describe("the ratio order under a crowd in one bucket", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  afterAll(releaseProver);

  async function gasOf(c: Crowd, send: () => Promise<`0x${string}`>) {
    return (await s.receipt(await send())).gasUsed;
  }

  async function openOne(c: Crowd, debt: bigint, hint = 0n) {
    const receipt = await s.receipt(await c.minter.write.open([deployer.address, COLLATERAL, debt, hint]));
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    return { id: opened!.args.positionId!, gas: receipt.gasUsed };
  }

  it("a hinted mint, repay and top-up into a bucket of 500 cost within 5% of the same into an empty one; unhinted, the mint walks the crowd", async () => {
    const empty = await crowdedWriteGas(s, 0);
    const crowded = await crowdedWriteGas(s, CROWD);
    for (const op of ["mint", "repay", "topUp"] as const) {
      // At most 5% more; less is the rule (an empty bucket's first position pays for its head slot).
      expect(crowded[op], `${op}: crowded ${crowded[op]}, empty ${empty[op]}`).toBeLessThanOrEqual(
        (empty[op] * 105n) / 100n,
      );
    }
    expect(crowded.mintUnhinted! - crowded.mint).toBeGreaterThan(BigInt(CROWD) * STEP_GAS);
  });

  it("files every position by its ratio whatever hint each write takes", async () => {
    const id = await s.snapshot();
    try {
      const c = await deployCrowd(s);
      const elsewhere = await openOne(c, 320n * ZSD); // 156%: the next bucket's only position
      const count = 60;
      await c.fill(deployer.address, COLLATERAL, FIRST_DEBT, (7n * ZSD) / BigInt(count), count);
      const ids = Array.from({ length: count }, (_, i) => elsewhere.id + 1n + BigInt(i));
      const closed = await openOne(c, 310n * ZSD);
      await s.receipt(await c.minter.write.repay([closed.id, 310n * ZSD, 0n]));

      let seed = 20261129;
      const random = (n: number) => {
        // Park and Miller's generator: exact in a double, and no short cycle in its low digits.
        seed = (seed * 48_271) % 2_147_483_647;
        return seed % n;
      };
      const kinds = ["none", "exact", "random", "own", "closed", "elsewhere", "absent", "huge"] as const;
      const drawn = new Map<string, number>();
      for (let step = 0; step < 80; step++) {
        const target = ids[random(ids.length)]!;
        const p = await c.positions.read.getPosition([target]);
        const op = random(3);
        // Small moves that keep every ratio in the crowd's bucket: 159-163%.
        const repayAmount = BigInt(random(ZSD_HUNDREDTHS)) * (ZSD / 100n) + 1n;
        const topUpZat = BigInt(random(1_000)) * 10_000n + 1n;
        const inBucket = (collateralZat: bigint, debt: bigint) => collateralZat * 10n ** 18n < debt * BUCKET_TOP;
        const canRepay = inBucket(p.collateralZat, p.debt - repayAmount);
        const canTopUp = inBucket(p.collateralZat + topUpZat, p.debt);
        const after =
          op === 0 && canRepay
            ? { collateralZat: p.collateralZat, debt: p.debt - repayAmount }
            : op === 1 && canTopUp
              ? { collateralZat: p.collateralZat + topUpZat, debt: p.debt }
              : undefined;
        const kind = kinds[random(kinds.length)]!;
        const hint =
          kind === "none"
            ? 0n
            : kind === "exact"
              ? await c.hintFor(
                  after ? { positionId: target, ...after } : { collateralZat: COLLATERAL, debt: FRESH_DEBT },
                )
              : kind === "random"
                ? ids[random(ids.length)]!
                : kind === "own"
                  ? target
                  : kind === "closed"
                    ? closed.id
                    : kind === "elsewhere"
                      ? elsewhere.id
                      : kind === "absent"
                        ? 1_000_000n
                        : 2n ** 40n;
        drawn.set(kind, (drawn.get(kind) ?? 0) + 1);
        if (after && op === 0) await s.receipt(await c.minter.write.repay([target, repayAmount, hint]));
        else if (after) await s.receipt(await c.minter.write.topUp([target, topUpZat, hint]));
        else ids.push((await openOne(c, FRESH_DEBT + BigInt(random(1_000_000)) * 1_000n, hint)).id);
      }
      expect(drawn.size).toBe(kinds.length);

      // The order as the contract walks it: each position's riskier neighbour is the one before it by ratio.
      const held = await Promise.all(ids.map(async (id) => ({ id, ...(await c.positions.read.getPosition([id])) })));
      // collateral / debt ascending, compared exactly.
      held.sort((a, b) => {
        const lhs = a.collateralZat * b.debt;
        const rhs = b.collateralZat * a.debt;
        return lhs < rhs ? -1 : lhs > rhs ? 1 : 0;
      });
      for (let i = 0; i < held.length; i++) {
        const p = held[i]!;
        const [prev, found] = await c.positions.read.findInsertHint([0n, p.collateralZat, p.debt, 0n, 10_000n]);
        expect(found).toBe(true);
        expect(prev, `position ${p.id}, ${i}th by ratio`).toBe(i === 0 ? 0n : held[i - 1]!.id);
      }
    } finally {
      await s.revert(id);
    }
  });

  it("finds a hint a bounded walk at a time: calls of 7 steps end where one unbounded call does", async () => {
    const id = await s.snapshot();
    try {
      const c = await deployCrowd(s);
      await c.fill(deployer.address, COLLATERAL, FIRST_DEBT, DEBT_STEP, 100);
      const args = { collateralZat: COLLATERAL, debt: FRESH_DEBT } as const;
      const [whole, wholeFound] = await c.positions.read.findInsertHint([
        0n,
        args.collateralZat,
        args.debt,
        0n,
        10_000n,
      ]);
      expect(wholeFound).toBe(true);
      // The tail of the crowd: the first position filed, least risky of all.
      expect(whole).toBe(1n);
      let from = 0n;
      let calls = 0;
      for (;;) {
        calls++;
        const [hint, found] = await c.positions.read.findInsertHint([0n, args.collateralZat, args.debt, from, 7n]);
        from = hint;
        if (found) break;
      }
      expect(from).toBe(whole);
      expect(calls).toBe(Math.ceil(100 / 7));
      expect(await c.hintFor(args)).toBe(whole);
      // A position's own place, found for a write to it, passes over the position itself.
      const [own] = await c.positions.read.findInsertHint([50n, COLLATERAL, FIRST_DEBT + 49n * DEBT_STEP, 0n, 10_000n]);
      expect(own).toBe(51n);
      const [nothing, none] = await c.positions.read.findInsertHint([0n, COLLATERAL, 0n, 0n, 0n]);
      expect([nothing, none]).toEqual([0n, true]);
    } finally {
      await s.revert(id);
    }
  });
});

const ZSD_HUNDREDTHS = 150;
/** The bucket's keys end under 3,268,162 zatoshi per ZSD (a key's top 24 bits). */
const BUCKET_TOP = 3_268_000n;
