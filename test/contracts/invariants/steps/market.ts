// Steps on the market and governance: price moves, crashes and recoveries (on both feeds), prices set
// exactly at a position's liquidation ratio or 100% (and one unit under), one feed breaking (stale,
// zero, reverting, dated in the future), jumping, drifting away from the other, walked by its updater
// round after round (in one go or a window apart) or mending, and the timelock's parameter changes.
import { maxUint256 } from "viem";
import { expect } from "vitest";
import { positionManagerAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk/abis";
import {
  BASE_PRICE,
  BPS,
  MIN_PRICE,
  PROBE,
  SAPLING,
  SETTLE_MARGIN_ZAT,
  STATUS,
  ZAT_PRICE_TO_USD18,
  carol,
  ceilDiv,
  guardian,
  pauser,
  max,
} from "../constants.ts";
import type { Context } from "../context.ts";
import { type Dating, type FeedModel, WINDOW, judge, next, passWindow, post, record } from "../feeds.ts";
import { expectOutcome, send, simulate } from "../chain.ts";
import { type Model, spreadable } from "../model.ts";
import { count } from "../stats.ts";
import { Step, type World, pick } from "../world.ts";

/** Both feeds post `price`, fresh (mended first if down), and a keeper records it: they agree, so it is the price. */
async function postBoth(ctx: Context, m: Model, price: bigint) {
  const { p, q } = m.feeds;
  m.feeds.p = next(p, price, "fresh");
  m.feeds.q = next(q, price, "fresh");
  await post(ctx, "p", m.feeds.p, p);
  await post(ctx, "q", m.feeds.q, q);
  await record(ctx, m);
  expect(m.frozen, `both feeds at ${price}: trusted`).toBe(false);
}

export interface PriceOptions {
  kind: "move" | "crash" | "recover";
  /**
   * In bps: the change from the price now for "move" and "crash" (negative: a fall), or the new price
   * as a share of the base price for "recover".
   */
  bps: bigint;
}

export class Price extends Step<PriceOptions> {
  toString() {
    const { kind, bps } = this.options;
    return `Price(${kind}, ${bps})`;
  }
  async run(m: Model, w: World) {
    const { kind, bps } = this.options;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        let next = kind === "recover" ? (BASE_PRICE * bps) / BPS : (c.price * (BPS + bps)) / BPS;
        next = max(next, MIN_PRICE);
        await postBoth(w.ctx, m, next);
        count(`Price: ${kind}`);
        return new Map();
      },
      true,
    );
  }
}

export interface EdgeOptions {
  /** The position, riskiest first (modulo the positions there are). */
  index: number;
  /** The ratio the price is set at: the position's liquidation ratio, or 100% (a par redemption's margin). */
  ratio: "liquidation" | "100%";
  /** One unit of price under it rather than at it. */
  below: boolean;
}

/** The price at a position's liquidation ratio or at 100%, or one unit under it: the probes then check both sides. */
export class Edge extends Step<EdgeOptions> {
  toString() {
    const { index, ratio, below } = this.options;
    return `Edge(${index}, ${ratio}, ${below ? "below" : "at"})`;
  }
  async run(m: Model, w: World) {
    const { index, ratio, below } = this.options;
    const { s } = w.ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const id = pick(c, index, true);
        const p = c.positions[Number(id) - 1]!;
        if (p.status !== STATUS.Open || p.debt === 0n || p.collateralZat === 0n) {
          count("Edge: no position with debt");
          return new Map();
        }
        if (ratio === "100%" && p.collateralZat <= SETTLE_MARGIN_ZAT) {
          count("Edge: dust within the margin at any price");
          return new Map();
        }
        // The lowest price at which collateral × price × 100 × BPS >= debt × the liquidation ratio; for 100%, the
        // lowest at which a par redemption would not settle it first ((collateral − 4) × price × 100 >= debt + 1 ppm).
        const at =
          ratio === "liquidation"
            ? ceilDiv(p.debt * c.params.liquidationRatioBps, p.collateralZat * ZAT_PRICE_TO_USD18 * BPS)
            : ceilDiv(p.debt + p.debt / 1_000_000n, (p.collateralZat - SETTLE_MARGIN_ZAT) * ZAT_PRICE_TO_USD18);
        const next = below ? at - 1n : at;
        if (next <= 0n) return new Map();
        await postBoth(w.ctx, m, next);
        count(`Edge: ${ratio}`);
        const error = await simulate(() =>
          s.publicClient.simulateContract({
            address: s.read.minter.address,
            abi: stableMinterAbi,
            account: PROBE,
            ...(ratio === "liquidation"
              ? {
                  functionName: "liquidate",
                  args: [
                    id,
                    { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n },
                    { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n },
                  ],
                }
              : {
                  functionName: "redistribute",
                  args: [id, { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n }],
                }),
          }),
        );
        const possible = ratio === "liquidation" ? "ERC20InsufficientBalance" : null;
        const refused = ratio === "liquidation" ? "PositionNotLiquidatable" : "PositionNotUnderwater";
        // Under 100% while the others hold under a millionth of its debt there is no one to redistribute to.
        const alone = ratio === "100%" && !spreadable(p.debt, c.debt);
        expect(error, `${this.toString()}: position ${id} at price ${next}`).toBe(
          c.paused ? "EnforcedPause" : below ? (alone ? "NoDebtToRedistributeTo" : possible) : refused,
        );
        return new Map();
      },
      true,
    );
  }
}

export interface PauseOptions {
  /** The pauser (the whole minter) or the guardian (new mints alone). */
  who: "pauser" | "guardian";
  /** Stop, else resume. */
  stop: boolean;
}

/**
 * The pauser stops or resumes the minter (note spends, withdrawals, liquidations and redistributions;
 * repayments and closes go on), or the guardian stops or resumes new mints alone. A stop is drawn half
 * as often as a resume, so that a run does not spend most of its steps paused.
 */
export class Pause extends Step<PauseOptions> {
  toString() {
    const { who, stop } = this.options;
    return `Pause(${who}, ${stop ? "stop" : "resume"})`;
  }
  async run(m: Model, w: World) {
    const { who, stop } = this.options;
    const { s } = w.ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const now = who === "guardian" ? c.mintsPaused : c.paused;
        if (now === stop) {
          count(`Pause: ${who} already ${now ? "stopped" : "running"}`);
          return new Map();
        }
        const outcome = await send(w.ctx, () => {
          if (who === "guardian") return s.as(guardian).minter.write.setMintsPaused([stop, "fuzz"]);
          return stop ? s.as(pauser).minter.write.pause() : s.as(pauser).minter.write.unpause();
        });
        expectOutcome(this.toString(), outcome, null);
        count(`Pause: ${who} ${stop ? "stopped" : "resumed"}`);
        return new Map();
      },
      true,
    );
  }
}

export type FeedKind = "stale" | "zero" | "down" | "future" | "jump" | "drift" | "walk" | "mend";
/** The most a run's walks move the clock on: well under a day, the age a superseded root stays valid. */
const MAX_ADVANCE = 12n * 3_600n;

export interface FeedOptions {
  /** The primary feed (p) or the second (q). */
  which: "p" | "q";
  kind: FeedKind;
  /** In bps: the jump, the drift, or each round of the walk, from the base it starts from; unused otherwise. */
  bps: bigint;
  /** Rounds posted, each followed by a fetch (1 unless given; a walk draws 2 to 6). */
  rounds?: number;
  /** A window of the reference passes before each round (a walk only). */
  windows?: boolean;
}

/**
 * One feed misbehaves or mends, and a keeper records the price: stale, zero, reverting or dated in the
 * future (broken); a jump of `bps` from its last answer (suspect beyond 50%); a drift of `bps` (apart
 * from the other feed, within the jump bound); a walk, its updater's `rounds` rounds each `bps` from
 * the last good price with a fetch after each (a window apart when `windows`, so that the reference
 * moves between them); or a fresh round at the other feed's answer (mended).
 */
export class Feed extends Step<Required<FeedOptions>> {
  constructor({ rounds = 1, windows = false, ...options }: FeedOptions) {
    super({ ...options, rounds, windows });
  }
  toString() {
    const { which, kind, bps, rounds, windows } = this.options;
    const feed = which === "p" ? "primary" : "second";
    const walk = kind === "walk" ? `, ${rounds}${windows ? ", a window apart" : ""}` : "";
    return `Feed(${feed}, ${kind}, ${bps}${walk})`;
  }
  async run(m: Model, w: World) {
    const { which, kind, bps, rounds, windows } = this.options;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const wasFrozen = m.frozen;
        for (let round = 0; round < rounds; round++) {
          if (windows) {
            if (m.feeds.advanced + WINDOW > MAX_ADVANCE) count("Feed: walk, no more windows this run");
            else {
              await passWindow(w.ctx, m);
              count("Feed: walk, a window passed");
            }
          }
          const before = m.feeds[which];
          const other = m.feeds[which === "p" ? "q" : "p"];
          const base = before.answer > 0n ? before.answer : c.price;
          let f: FeedModel;
          const moved = (from: bigint, by: bigint) => max((from * (BPS + by)) / BPS, MIN_PRICE);
          const dated = (dating: Dating) => next(before, base, dating);
          switch (kind) {
            case "stale":
            case "future":
              f = dated(kind);
              break;
            case "zero":
              f = next(before, 0n, "fresh");
              break;
            case "down":
              f = { ...before, dating: "down" };
              break;
            case "jump":
            case "drift":
              f = next(before, moved(base, bps), "fresh");
              break;
            case "walk":
              // The updater's best aim: a step from the price the system uses, not from its own round.
              f = next(before, moved(m.feeds.last, bps), "fresh");
              break;
            case "mend":
              f = next(before, other.answer > 0n ? other.answer : c.price, "fresh");
              break;
          }
          m.feeds[which] = f;
          const reference = m.feeds.ref.price;
          await post(w.ctx, which, f, before);
          await record(w.ctx, m);
          if (m.feeds.ref.price !== reference) count(`Feed: ${kind} moved the reference`);
          const { p, q, ref } = m.feeds;
          count(`Feed: ${kind} → primary ${judge(p, ref.price)}, second ${judge(q, ref.price)}`);
          const from = m.frozen ? "frozen" : m.price === p.answer ? "primary" : "second";
          count(`Feed: ${kind}, price ${from}`);
        }
        if (wasFrozen !== m.frozen) count(`Feed: ${m.frozen ? "froze" : "thawed"}`);
        return new Map();
      },
      true,
    );
  }
}

export const GOVERNED = {
  setLiquidationBonus: { field: "liquidationBonusBps", lo: 0n, hi: 2_000n },
  setRedemptionFee: { field: "redemptionFeeBps", lo: 0n, hi: 1_000n },
  setSystemFloorRatio: { field: "systemFloorRatioBps", lo: 10_000n, hi: 100_000n },
  setRedistributionReward: { field: "redistributionRewardBps", lo: 0n, hi: 500n },
  setKeeperRewardFloor: { field: "keeperRewardFloorZat", lo: 0n, hi: 10_000_000n },
  setLiquidationRatio: { field: "liquidationRatioBps", lo: 10_000n, hi: 100_000n },
} as const;
export type Setter = keyof typeof GOVERNED;

export interface GovernOptions {
  setter: Setter;
  /** The new value, in the setter's unit: bps, or zatoshi for the keeper floor (out of its bounds: refused). */
  value: bigint;
}

export class Govern extends Step<GovernOptions> {
  toString() {
    const { setter, value } = this.options;
    return `Govern(${setter}, ${value})`;
  }
  async run(m: Model, w: World) {
    const { setter, value } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const g = GOVERNED[setter];
        let expected: string | null = value < g.lo || value > g.hi ? "InvalidParameter" : null;
        if (setter === "setLiquidationRatio" && value > c.params.minCollateralRatioBps) {
          expected = "InvalidParameter";
        }
        const wallet = s.as(carol).wallet;
        const outcome = await send(ctx, () => {
          const common = { account: ctx.timelock, chain: wallet.chain } as const;
          const positions = s.read.positions.address;
          switch (setter) {
            case "setRedemptionFee":
              return wallet.writeContract({
                ...common,
                address: s.read.redemptions.address,
                abi: redemptionsAbi,
                functionName: "setRedemptionFee",
                args: [value],
              });
            case "setLiquidationBonus":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setLiquidationBonus",
                args: [value],
              });
            case "setSystemFloorRatio":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setSystemFloorRatio",
                args: [value],
              });
            case "setRedistributionReward":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setRedistributionReward",
                args: [value],
              });
            case "setKeeperRewardFloor":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setKeeperRewardFloor",
                args: [value],
              });
            case "setLiquidationRatio":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setLiquidationRatio",
                args: [value],
              });
          }
        });
        if (expectOutcome(this.toString(), outcome, expected)) m.params = { ...m.params, [g.field]: value };
        return new Map();
      },
      true,
    );
  }
}
