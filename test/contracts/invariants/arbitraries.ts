// What fast-check draws a sequence from: every step with the ranges of its arguments. A step listed
// twice is drawn twice as often.
import fc from "fast-check";
import { ZEC } from "../../helpers/fixtures.ts";
import { MIN_DEBT, MINTS, TOP_UPS, WITHDRAWALS } from "./constants.ts";
import type { Caller, Dest, Envelope, RedirectDest } from "./model.ts";
import type { HintKind } from "./chain.ts";
import type { Step } from "./world.ts";
import { Deposit, DepositBatch, InsertPending, SpendBatch, type Tamper, WithdrawNote } from "./steps/notes.ts";
import {
  Close,
  Liquidate,
  Mint,
  MintBatch,
  Redistribute,
  RedistributeMany,
  Repay,
  TopUp,
  Withdraw,
} from "./steps/positions.ts";
import { Redeem, Redirect, Settle, type Size } from "./steps/redemptions.ts";
import { CrashThenClear, type Late, LateLiquidation } from "./steps/late.ts";
import { Edge, Feed, type FeedKind, GOVERNED, Govern, Pause, Price, type Setter } from "./steps/market.ts";

const index = fc.nat({ max: 7 });
/** Keepers go for the riskiest positions. */
const riskiest = fc.nat({ max: 2 });
const dest = fc.constantFrom<Dest>("note", "address", "unpayable");
const caller = fc.constantFrom<Caller>("owner", "owner", "ownerSig", "stranger", "strangerSig");
const rarely = fc.nat({ max: 4 }).map((n) => n === 0);
const bps = (lo: number, hi: number) => fc.integer({ min: lo, max: hi }).map(BigInt);
/** A position write's hint: what it changes is gas, so the model predicts the same outcome for each. */
const hint = fc.constantFrom<HintKind>("none", "found", "other");
export const steps: fc.Arbitrary<Step>[] = [
  fc.bigInt(1n, 50n * ZEC).map((amountZat) => new Deposit({ amountZat })),
  fc
    .tuple(fc.array(fc.bigInt(1n, 50n * ZEC), { minLength: 1, maxLength: 5 }), rarely)
    .map(([amountsZat, repeat]) => new DepositBatch({ amountsZat, repeat })),
  fc.tuple(fc.nat({ max: MINTS.length - 1 }), hint).map(([k, hint]) => new Mint({ k, hint })),
  fc.tuple(fc.nat({ max: MINTS.length - 1 }), hint).map(([k, hint]) => new Mint({ k, hint })),
  fc.array(fc.nat({ max: MINTS.length - 1 }), { minLength: 1, maxLength: 4 }).map((ks) => new MintBatch({ ks })),
  fc.tuple(fc.nat({ max: TOP_UPS.length - 1 }), hint).map(([k, hint]) => new TopUp({ k, hint })),
  fc
    .array(
      fc.oneof(
        fc.nat({ max: TOP_UPS.length - 1 }).map((k) => ({ topUp: true, k })),
        fc.nat({ max: WITHDRAWALS.length - 1 }).map((k) => ({ topUp: false, k })),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((picks) => new SpendBatch({ picks })),
  fc
    .tuple(index, fc.boolean(), bps(1, 9_999), fc.boolean(), hint)
    .map(([index, whole, fractionBps, bySig, hint]) => new Repay({ index, whole, fractionBps, bySig, hint })),
  // All but a little: either side of the least debt a position may keep (PositionManager's minDebt).
  fc
    .tuple(
      index,
      fc.boolean(),
      fc.oneof(fc.constant(MIN_DEBT - 1n), fc.constant(MIN_DEBT), fc.bigInt(1n, 2n * MIN_DEBT)),
    )
    .map(
      ([index, bySig, leaveWei]) => new Repay({ index, whole: false, fractionBps: 0n, leaveWei, bySig, hint: "none" }),
    ),
  fc
    .tuple(index, fc.oneof(bps(1, 2_000), bps(1, 10_000)), dest, caller, hint)
    .map(([index, fractionBps, dest, caller, hint]) => new Withdraw({ index, fractionBps, dest, caller, hint })),
  fc.tuple(index, dest, caller).map(([index, dest, caller]) => new Close({ index, dest, caller })),
  fc.tuple(riskiest, dest).map(([index, dest]) => new Liquidate({ index, dest })),
  fc.tuple(riskiest, dest).map(([index, dest]) => new Redistribute({ index, dest })),
  // A signed liquidation sent after the price fell, a redemption or a redistribution onto its target.
  fc
    .tuple(riskiest, fc.constantFrom<Late>("price", "redeem", "redistribute"), bps(100, 4_000), dest)
    .map(([index, late, bps, dest]) => new LateLiquidation({ index, late, bps, dest })),
  fc
    .tuple(bps(3_500, 6_000), fc.integer({ min: 2, max: 8 }), dest)
    .map(([bps, count, dest]) => new CrashThenClear({ bps, count, dest })),
  // A keeper clearing many at once, riskiest first (and past them, healthy ones it skips).
  fc.tuple(fc.integer({ min: 1, max: 8 }), dest).map(([count, dest]) => new RedistributeMany({ count, dest })),
  fc
    .oneof(
      fc.tuple(fc.constant<Size>("tiny"), fc.bigInt(1n, 10n ** 13n)),
      fc.tuple(fc.constant<Size>("small"), bps(1, 500)),
      fc.tuple(fc.constant<Size>("large"), bps(2_000, 9_000)),
      fc.tuple(fc.constant<Size>("whole"), fc.constant(0n)),
      fc.tuple(fc.constant<Size>("over"), fc.constant(0n)),
    )
    .chain(([size, raw]) =>
      fc
        .tuple(
          fc.constantFrom<0 | 1 | 2>(0, 1, 2),
          fc.constantFrom<Envelope>("address", "unpayable", "address", "replay", "foreign", "frontrun"),
          fc.oneof(fc.constant(0n), bps(1_000, 9_000)),
        )
        .map(([redeemer, dest, splitBps]) => new Redeem({ size, raw, redeemer, dest, splitBps })),
    ),
  fc
    .tuple(fc.constantFrom<Size>("small", "large"), bps(1, 9_000), fc.constantFrom<0 | 1 | 2>(0, 1, 2))
    .map(
      ([size, raw, redeemer]) =>
        new Redeem({ size, raw: size === "small" ? (raw % 500n) + 1n : raw, redeemer, dest: "address", splitBps: 0n }),
    ),
  // Envelopes replayed by their owner or copied onto another's redemption (after the owner's, or
  // front-running it), on redemptions small enough to go through.
  fc
    .tuple(bps(1, 500), fc.constantFrom<0 | 1 | 2>(0, 1, 2), fc.constantFrom<Envelope>("replay", "foreign", "frontrun"))
    .map(([raw, redeemer, dest]) => new Redeem({ size: "small", raw, redeemer, dest, splitBps: 0n })),
  fc.tuple(index, fc.boolean(), rarely).map(([index, fail, stale]) => new Settle({ index, fail, stale })),
  fc.tuple(index, fc.boolean()).map(([index, fail]) => new Settle({ index, fail, stale: false })),
  fc.tuple(index, dest, caller, rarely).map(([index, dest, by, stale]) => new Redirect({ index, dest, by, stale })),
  fc
    .tuple(
      index,
      fc.constantFrom<RedirectDest>("note", "address", "unpayable", "same"),
      fc.constantFrom<Caller>("owner", "ownerSig"),
    )
    .map(([index, dest, by]) => new Redirect({ index, dest, by, stale: false })),
  fc
    .tuple(fc.nat({ max: WITHDRAWALS.length - 1 }), fc.boolean())
    .map(([k, wrongOwner]) => new WithdrawNote({ k, wrongOwner })),
  // Twice: change is queued by four kinds of step, and inserting it is how it becomes spendable.
  ...[0, 1].map(() =>
    fc
      .tuple(bps(1, 10_000), fc.constantFrom<Tamper>("none", "none", "stale", "stale", "leaf", "gap", "empty"))
      .map(([shareBps, tamper]) => new InsertPending({ shareBps, tamper })),
  ),
  fc.oneof(
    bps(-2_500, 2_500).map((bps) => new Price({ kind: "move", bps })),
    bps(6_000, 8_000).map((b) => new Price({ kind: "crash", bps: -b })),
    bps(8_000, 13_000).map((bps) => new Price({ kind: "recover", bps })),
  ),
  fc
    .tuple(riskiest, fc.constantFrom<"liquidation" | "100%">("liquidation", "100%"), fc.boolean())
    .map(([index, ratio, below]) => new Edge({ index, ratio, below })),
  // One feed breaks, jumps, drifts from the other, is walked by its updater or mends (three times: a
  // broken feed stays until mended or both feeds move, and the price freezes when both are out, they
  // disagree, or the one left strays beyond the reference).
  ...[0, 1, 2].map(() =>
    fc
      .tuple(
        fc.constantFrom<"p" | "q">("p", "q"),
        fc.constantFrom<FeedKind>("stale", "zero", "down", "future", "jump", "drift", "walk", "mend", "mend"),
      )
      .chain(([which, kind]) => {
        if (kind === "walk") {
          // Rounds up to +60% or down to −40% from the last good price (either side of the jump
          // bound, 50% of the smaller), in one go or a window apart.
          return fc
            .tuple(fc.oneof(bps(-4_000, -100), bps(100, 6_000)), fc.integer({ min: 2, max: 6 }), fc.boolean())
            .map(([bps, rounds, windows]) => new Feed({ which, kind, bps, rounds, windows }));
        }
        return (
          kind === "jump"
            ? fc.oneof(bps(-9_000, -3_400), bps(5_100, 20_000))
            : kind === "drift"
              ? fc.oneof(bps(-3_000, -600), bps(600, 4_000))
              : fc.constant(0n)
        ).map((bps) => new Feed({ which, kind, bps }));
      }),
  ),
  // The minter stopped or resumed by its pauser, or new mints alone by the guardian.
  fc
    .tuple(fc.constantFrom<"pauser" | "guardian">("pauser", "guardian"), fc.nat({ max: 2 }))
    .map(([who, n]) => new Pause({ who, stop: n === 0 })),
  // Falls that put the thinner positions under 100% and leave the thicker ones above.
  bps(-5_000, -3_000).map((bps) => new Price({ kind: "move", bps })),
  fc
    .constantFrom<Setter>(
      "setLiquidationBonus",
      "setRedemptionFee",
      "setSystemFloorRatio",
      "setRedistributionReward",
      "setKeeperRewardFloor",
      "setLiquidationRatio",
    )
    .chain((setter) => {
      const g = GOVERNED[setter];
      const hi = setter === "setSystemFloorRatio" ? 25_000n : setter === "setLiquidationRatio" ? 16_000n : g.hi;
      return fc.bigInt(g.lo === 0n ? 0n : g.lo - 1_000n, hi + hi / 4n).map((value) => new Govern({ setter, value }));
    }),
];
