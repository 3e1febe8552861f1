// Steps on the market and governance: price moves, crashes and recoveries, prices set exactly at
// a position's liquidation ratio or 100% (and one unit under), and the timelock's parameter changes.
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
  max,
  oracleUpdater,
} from "../constants.ts";
import { expectOutcome, send, simulate } from "../chain.ts";
import { type Model, spreadable } from "../model.ts";
import { count } from "../stats.ts";
import { Step, type World, pick } from "../world.ts";

export class Price extends Step {
  constructor(
    readonly kind: "move" | "crash" | "recover",
    readonly bps: bigint,
  ) {
    super();
  }
  toString() {
    return `Price(${this.kind}, ${this.bps})`;
  }
  async run(m: Model, w: World) {
    const { s } = w.ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        let next = this.kind === "recover" ? (BASE_PRICE * this.bps) / BPS : (c.price * (BPS + this.bps)) / BPS;
        next = max(next, MIN_PRICE);
        await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([next]));
        count(`Price: ${this.kind}`);
        m.price = next;
        return new Map();
      },
      true,
    );
  }
}

/** The price at a position's liquidation ratio or at 100%, or one unit under it: the probes then check both sides. */
export class Edge extends Step {
  constructor(
    readonly index: number,
    readonly ratio: "liquidation" | "100%",
    readonly below: boolean,
  ) {
    super();
  }
  toString() {
    return `Edge(${this.index}, ${this.ratio}, ${this.below ? "below" : "at"})`;
  }
  async run(m: Model, w: World) {
    const { s } = w.ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const id = pick(c, this.index, true);
        const p = c.positions[Number(id) - 1]!;
        if (p.status !== STATUS.Open || p.debt === 0n || p.collateralZat === 0n) {
          count("Edge: no position with debt");
          return new Map();
        }
        if (this.ratio === "100%" && p.collateralZat <= SETTLE_MARGIN_ZAT) {
          count("Edge: dust within the margin at any price");
          return new Map();
        }
        // The lowest price at which collateral × price × 100 × BPS >= debt × the liquidation ratio; for 100%, the
        // lowest at which a par redemption would not settle it first ((collateral − 4) × price × 100 >= debt + 1 ppm).
        const at =
          this.ratio === "liquidation"
            ? ceilDiv(p.debt * c.params.liquidationRatioBps, p.collateralZat * ZAT_PRICE_TO_USD18 * BPS)
            : ceilDiv(p.debt + p.debt / 1_000_000n, (p.collateralZat - SETTLE_MARGIN_ZAT) * ZAT_PRICE_TO_USD18);
        const next = this.below ? at - 1n : at;
        if (next <= 0n) return new Map();
        await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([next]));
        count(`Edge: ${this.ratio}`);
        m.price = next;
        const error = await simulate(() =>
          s.publicClient.simulateContract({
            address: s.read.minter.address,
            abi: stableMinterAbi,
            functionName: this.ratio === "liquidation" ? "liquidate" : "redistribute",
            args: [id, { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n }],
            account: PROBE,
          }),
        );
        const possible = this.ratio === "liquidation" ? "ERC20InsufficientBalance" : null;
        const refused = this.ratio === "liquidation" ? "PositionNotLiquidatable" : "PositionNotUnderwater";
        // Under 100% while the others hold under a millionth of its debt there is no one to redistribute to.
        const alone = this.ratio === "100%" && !spreadable(p.debt, c.debt);
        expect(error, `${this.toString()}: position ${id} at price ${next}`).toBe(
          this.below ? (alone ? "NoDebtToRedistributeTo" : possible) : refused,
        );
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
  setLiquidationRatio: { field: "liquidationRatioBps", lo: 10_000n, hi: 100_000n },
} as const;
export type Setter = keyof typeof GOVERNED;

export class Govern extends Step {
  constructor(
    readonly setter: Setter,
    readonly v: bigint,
  ) {
    super();
  }
  toString() {
    return `Govern(${this.setter}, ${this.v})`;
  }
  async run(m: Model, w: World) {
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const g = GOVERNED[this.setter];
        let expected: string | null = this.v < g.lo || this.v > g.hi ? "InvalidParameter" : null;
        if (this.setter === "setLiquidationRatio" && this.v > c.params.minCollateralRatioBps) {
          expected = "InvalidParameter";
        }
        const wallet = s.as(carol).wallet;
        const outcome = await send(ctx, () => {
          const common = { account: ctx.timelock, chain: wallet.chain } as const;
          const positions = s.read.positions.address;
          switch (this.setter) {
            case "setRedemptionFee":
              return wallet.writeContract({
                ...common,
                address: s.read.redemptions.address,
                abi: redemptionsAbi,
                functionName: "setRedemptionFee",
                args: [this.v],
              });
            case "setLiquidationBonus":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setLiquidationBonus",
                args: [this.v],
              });
            case "setSystemFloorRatio":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setSystemFloorRatio",
                args: [this.v],
              });
            case "setRedistributionReward":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setRedistributionReward",
                args: [this.v],
              });
            case "setLiquidationRatio":
              return wallet.writeContract({
                ...common,
                address: positions,
                abi: positionManagerAbi,
                functionName: "setLiquidationRatio",
                args: [this.v],
              });
          }
        });
        if (expectOutcome(this.toString(), outcome, expected)) m.params = { ...m.params, [g.field]: this.v };
        return new Map();
      },
      true,
    );
  }
}
