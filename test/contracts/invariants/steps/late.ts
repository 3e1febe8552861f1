// Signatures carried late: a keeper signs a bounded liquidation at what it reads now, and the relayer sends
// it only after something moved the position (the price, a redemption, a redistribution onto it). The
// bounds say what the signer accepted: the outcome is predicted from the state the call meets.
import { parseEventLogs } from "viem";
import { expect } from "vitest";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { liquidateTypedData } from "@zsd/sdk";
import { BPS, STATUS, carol, relayer } from "../constants.ts";
import { deadline, expectOutcome, gather, minterDomain, pauseError, read, seizedAt, send, value } from "../chain.ts";
import { type Dest, type Model, destination, released } from "../model.ts";
import { count } from "../stats.ts";
import { Step, type World, pick } from "../world.ts";
import { Price } from "./market.ts";
import { Redistribute, RedistributeMany } from "./positions.ts";
import { Redeem } from "./redemptions.ts";

/** What moves between the signature and its sending: the price, a redemption, or a redistribution onto the position. */
export type Late = "price" | "redeem" | "redistribute";

export interface LateLiquidationOptions {
  /** The position signed for, riskiest first (modulo the positions there are). */
  index: number;
  late: Late;
  /**
   * How far it moves, in bps: the price's fall after "price", the redemption's share of the supply
   * after "redeem" (as `bps % 500 + 1`, small enough to go through); unused after "redistribute".
   */
  bps: bigint;
  /** Where the seized ZEC goes. */
  dest: Dest;
}

/**
 * A keeper (carol) signs a liquidation bounded at what it reads now; something moves the position, then a
 * relayer sends the signature: it goes through within the bounds or is refused.
 */
export class LateLiquidation extends Step<LateLiquidationOptions> {
  toString() {
    const { index, late, bps, dest } = this.options;
    return `LateLiquidation(${index}, after ${late} ${bps}bps, ${dest})`;
  }
  async run(m: Model, w: World) {
    const { index, late, bps, dest } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    const label = this.toString();
    // Signed at what the keeper reads now: the debt it sees, the ZEC that buys, and no loss on the debt.
    const c0 = await read(ctx);
    const id = pick(c0, index, true);
    const p0 = c0.positions[Number(id) - 1]!;
    const bounds = {
      maxDebt: p0.debt,
      minSeizedZat: p0.debt === 0n ? 0n : seizedAt(c0, p0),
      minSeizedValue: p0.debt,
    };
    const to = destination(ctx, dest, carol.address);
    const typed = liquidateTypedData(minterDomain(ctx), {
      positionId: id,
      ...bounds,
      ...to,
      nonce: await s.read.minter.read.nonces([carol.address]),
      deadline: await deadline(ctx),
    });
    const signature = await carol.signTypedData(typed);
    // Something moves first.
    if (late === "price") await new Price({ kind: "move", bps: -bps }).run(m, w);
    else if (late === "redeem") {
      await new Redeem({ size: "small", raw: (bps % 500n) + 1n, redeemer: 0, dest: "address", splitBps: 0n }).run(m, w);
    } else await new Redistribute({ index: 0, dest: "address" }).run(m, w);
    await w.step(
      m,
      `${label}, sent`,
      async (c) => {
        const p = c.positions[Number(id) - 1]!;
        let expected: string | null = null;
        if (p.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (c.frozen) expected = "PriceFrozen";
        else if (p.debt === 0n || value(c, p.collateralZat) * BPS >= p.debt * c.params.liquidationRatioBps) {
          expected = "PositionNotLiquidatable";
        }
        const seized = expected === null ? seizedAt(c, p) : 0n;
        if (expected === null) {
          if (seized < bounds.minSeizedZat) expected = "ZatOutBelowMinimum";
          else if (p.debt > bounds.maxDebt) expected = "DebtAboveMaximum";
          else if (value(c, seized) < bounds.minSeizedValue) expected = "SeizedValueBelowMinimum";
        }
        expected = pauseError(c, "pausable") ?? expected;
        if (expected === null) await gather(ctx, carol.address, p.debt);
        const outcome = await send(ctx, () =>
          s
            .as(relayer)
            .minter.write.liquidateWithSig([id, carol.address, bounds, to, typed.message.deadline, signature]),
        );
        count(`LateLiquidation after ${late}: ${outcome.ok ? "ok" : outcome.error}`);
        if (!expectOutcome(label, outcome, expected)) return new Map();
        const [event] = parseEventLogs({
          abi: positionManagerAbi,
          logs: outcome.receipt.logs,
          eventName: "PositionLiquidated",
        });
        expect(event!.args).toMatchObject({ debt: p.debt, seizedZat: seized, surplusZat: p.collateralZat - seized });
        // The signer never got less than it accepted.
        expect(seized >= bounds.minSeizedZat && p.debt <= bounds.maxDebt, `${label}: within its bounds`).toBe(true);
        m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
        released(ctx, m, carol.address, seized, to);
        m.supply -= p.debt;
        return new Map([[id, { status: STATUS.Liquidated, collateral: p.collateralZat - seized, debt: 0n }]]);
      },
      true,
    );
  }
}

export interface CrashThenClearOptions {
  /** The price's fall, in bps. */
  bps: bigint;
  /** The most positions the keeper names, riskiest first. */
  count: number;
  /** Where the keeper's reward goes. */
  dest: Dest;
}

/** A fall that puts the thinner positions under 100%, and a keeper clearing what it can in one call. */
export class CrashThenClear extends Step<CrashThenClearOptions> {
  toString() {
    const { bps, count, dest } = this.options;
    return `CrashThenClear(${bps}bps, ${count}, ${dest})`;
  }
  async run(m: Model, w: World) {
    const { bps, count, dest } = this.options;
    await new Price({ kind: "move", bps: -bps }).run(m, w);
    await new RedistributeMany({ count, dest }).run(m, w);
  }
}
