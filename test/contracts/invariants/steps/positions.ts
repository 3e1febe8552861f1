// Steps on positions: opening them (one mint or a batch), topping up, repaying, withdrawing and
// closing (by the owner, by signature, or refused to a stranger), and the keepers' liquidations and
// redistributions of the riskiest.
import { parseEventLogs } from "viem";
import { expect } from "vitest";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { closeTypedData, repayTypedData, withdrawCollateralTypedData } from "@zsd/sdk";
import { BPS, MIN_DEBT, SCALE, STATUS, alice, bob, carol, relayer, max, min } from "../constants.ts";
import { keyOf } from "../context.ts";
import {
  deadline,
  exitError,
  expectOutcome,
  gather,
  type HintKind,
  hintOf,
  minterDomain,
  pauseError,
  seizedAt,
  send,
  settles,
  value,
} from "../chain.ts";
import {
  type Caller,
  type Dest,
  type Expected,
  type Model,
  destination,
  exactOf,
  expectedOf,
  keeperReward,
  redistributedInModel,
  borderline,
  released,
  shareKeeperCost,
  spread,
  underwater,
  spreadable,
} from "../model.ts";
import { count, stats } from "../stats.ts";
import { Step, type World, pick } from "../world.ts";

export interface MintOptions {
  /** Which of the mints proved at set-up (context.ts's `mints`). */
  k: number;
  /** The hint the relayer sends with the write (it changes gas only: the same outcome for each). */
  hint: HintKind;
}

/** A note spent into a new position, with the collateral, debt and owner proved at set-up. */
export class Mint extends Step<MintOptions> {
  toString() {
    const { k, hint } = this.options;
    return `Mint(${k}${hint === "none" ? "" : `, hint ${hint}`})`;
  }
  async run(m: Model, w: World) {
    const { k, hint: hintKind } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const p = ctx.mints[k]!;
      const v = value(c, p.floorZat);
      const systemValue = value(c, c.backing + p.floorZat);
      // The minter spends the nullifier and checks the proof before PositionManager.open checks the ratios.
      let expected: string | null = null;
      if (m.spent.has(`mint${k}`)) expected = "NullifierAlreadySpent";
      else if (c.frozen) expected = "PriceFrozen";
      else if (v * BPS < p.mint * c.params.minCollateralRatioBps) expected = "InsufficientCollateralValue";
      else if (
        systemValue * BPS < (c.debt + p.mint) * c.params.systemFloorRatioBps &&
        v * BPS < p.mint * c.params.systemFloorRatioBps
      ) {
        expected = "SystemRatioTooLow";
      }
      if (
        m.spent.has(`mint${k}`) &&
        (v * BPS < p.mint * c.params.minCollateralRatioBps ||
          (systemValue * BPS < (c.debt + p.mint) * c.params.systemFloorRatioBps &&
            v * BPS < p.mint * c.params.systemFloorRatioBps))
      ) {
        count("Mint: spent and under a ratio (NullifierAlreadySpent first)");
      }
      expected = pauseError(c, "mint") ?? expected;
      // The hint is not bound by the proof: the relayer picks it.
      const hint = await hintOf(ctx, c, hintKind, { collateralZat: p.floorZat, debt: p.mint });
      const outcome = await send(ctx, () => s.as(relayer).minter.write.mint([p.proof, { ...p.request, hint }]));
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      m.spent.add(`mint${k}`);
      m.unminted -= p.floorZat;
      m.supply += p.mint;
      if (p.request.changeLeaf !== 0n) m.queued.push(p.request.changeLeaf);
      m.positions.push({ owner: p.owner.address, status: STATUS.Open });
      const id = BigInt(c.positions.length + 1);
      return new Map([[id, { status: STATUS.Open, owner: p.owner.address, collateral: p.floorZat, debt: p.mint }]]);
    });
  }
}

export interface MintBatchOptions {
  /** Which of the mints proved at set-up, in the order sent (a k twice is a replay). */
  ks: number[];
}

/**
 * Several mints in one mintBatch (a k twice is a replay): every nullifier is
 * checked before any proof, then each item is minted in order as Mint is,
 * against the totals the earlier items left; one refusal refuses them all.
 */
export class MintBatch extends Step<MintBatchOptions> {
  toString() {
    const { ks } = this.options;
    return `MintBatch(${ks.join(", ")})`;
  }
  async run(m: Model, w: World) {
    const { ks } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const items = ks.map((k) => ctx.mints[k]!);
      let expected: string | null = null;
      if (ks.some((k, j) => m.spent.has(`mint${k}`) || ks.indexOf(k) !== j)) {
        expected = "NullifierAlreadySpent";
      } else if (c.frozen) expected = "PriceFrozen";
      let [backing, debt] = [c.backing, c.debt];
      for (const p of items) {
        if (expected) break;
        const v = value(c, p.floorZat);
        if (v * BPS < p.mint * c.params.minCollateralRatioBps) expected = "InsufficientCollateralValue";
        else if (
          value(c, backing + p.floorZat) * BPS < (debt + p.mint) * c.params.systemFloorRatioBps &&
          v * BPS < p.mint * c.params.systemFloorRatioBps
        ) {
          expected = "SystemRatioTooLow";
        }
        [backing, debt] = [backing + p.floorZat, debt + p.mint];
      }
      expected = pauseError(c, "mint") ?? expected;
      const outcome = await send(ctx, () =>
        s.as(relayer).minter.write.mintBatch([items.map((p) => p.proof), items.map((p) => p.request)]),
      );
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      const changes = new Map<bigint, Expected>();
      for (const [j, p] of items.entries()) {
        m.spent.add(`mint${ks[j]}`);
        m.unminted -= p.floorZat;
        m.supply += p.mint;
        if (p.request.changeLeaf !== 0n) m.queued.push(p.request.changeLeaf);
        m.positions.push({ owner: p.owner.address, status: STATUS.Open });
        changes.set(BigInt(c.positions.length + 1 + j), {
          status: STATUS.Open,
          owner: p.owner.address,
          collateral: p.floorZat,
          debt: p.mint,
        });
      }
      return changes;
    });
  }
}

export interface TopUpOptions {
  /** Which of the top-ups proved at set-up (context.ts's `topUps`): top-up k is bound to position k + 1. */
  k: number;
  /** The hint the relayer sends with the write (it changes gas only: the same outcome for each). */
  hint: HintKind;
}

/** A note spent into the position its proof names. */
export class TopUp extends Step<TopUpOptions> {
  toString() {
    const { k, hint } = this.options;
    return `TopUp(${k}${hint === "none" ? "" : `, hint ${hint}`})`;
  }
  async run(m: Model, w: World) {
    const { k, hint: hintKind } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const p = ctx.topUps[k]!;
      const id = BigInt(k + 1);
      const position = c.positions[k];
      // The proof names the position, so the spend is checked before PositionManager.topUp looks at it.
      let expected: string | null = null;
      if (m.spent.has(`topUp${k}`)) expected = "NullifierAlreadySpent";
      else if (position?.status !== STATUS.Open) expected = "PositionNotOpen";
      if (m.spent.has(`topUp${k}`) && position?.status !== STATUS.Open) {
        count("TopUp: spent and not open (NullifierAlreadySpent first)");
      }
      expected = pauseError(c, "pausable") ?? expected;
      const hint = position
        ? await hintOf(ctx, c, hintKind, {
            positionId: id,
            collateralZat: position.collateralZat + p.floorZat,
            debt: position.debt,
          })
        : 0n;
      const outcome = await send(ctx, () => s.as(bob).minter.write.topUp([p.proof, p.spend, id, hint]));
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      m.spent.add(`topUp${k}`);
      m.unminted -= p.floorZat;
      if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
      return new Map([
        [id, { status: STATUS.Open, collateral: position!.collateralZat + p.floorZat, debt: position!.debt }],
      ]);
    });
  }
}

export interface RepayOptions {
  /** The position, by id (modulo the positions there are). */
  index: number;
  /** How much: all but `leaveWei` when given, else the whole debt when `whole`, else `fractionBps` of it. */
  whole: boolean;
  fractionBps: bigint;
  /** Repays all but this much ZSD (in wei, 18 decimals): either side of the least debt a position may keep. */
  leaveWei?: bigint;
  /** Bob repays by a signature a relayer sends (else alice repays herself). */
  bySig: boolean;
  /** The hint the relayer sends with the write (it changes gas only: the same outcome for each). */
  hint: HintKind;
}

/** ZSD repaid into a position, by anyone: the debt falls, the collateral stays. */
export class Repay extends Step<RepayOptions> {
  toString() {
    const { index, whole, fractionBps, bySig, leaveWei, hint } = this.options;
    const how = leaveWei !== undefined ? `all but ${leaveWei}` : whole ? "whole" : `${fractionBps}bps`;
    return `Repay(${index}, ${how}${bySig ? ", sig" : ""}${hint === "none" ? "" : `, hint ${hint}`})`;
  }
  async run(m: Model, w: World) {
    const { index, whole, fractionBps, bySig, leaveWei, hint: hintKind } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const id = pick(c, index);
      const p = c.positions[Number(id) - 1]!;
      const amount =
        leaveWei !== undefined ? max(1n, p.debt - leaveWei) : whole ? p.debt : max(1n, (p.debt * fractionBps) / BPS);
      // A signed repayment burns at most what it names, and the whole debt when that is less.
      const paid = bySig ? min(amount, p.debt) : amount;
      let expected: string | null = null;
      if (p.status !== STATUS.Open) expected = "PositionNotOpen";
      else if (paid === 0n || paid > p.debt) expected = "InvalidRepayAmount";
      else if (paid === p.debt) expected = exitError(c, p.collateralZat, p.debt, BPS);
      else if (p.debt - paid < MIN_DEBT && p.debt >= MIN_DEBT) expected = "DebtBelowMinimum";
      const payer = bySig ? bob : alice;
      if (expected === null) await gather(ctx, payer.address, paid);
      const hint = await hintOf(ctx, c, hintKind, {
        positionId: id,
        collateralZat: p.collateralZat,
        debt: paid <= p.debt ? p.debt - paid : p.debt,
      });
      const outcome = await send(ctx, async () => {
        if (!bySig) return s.as(alice).minter.write.repay([id, amount, hint]);
        const typed = repayTypedData(minterDomain(ctx), {
          positionId: id,
          maxAmount: amount,
          payer: bob.address,
          nonce: await s.read.minter.read.nonces([bob.address]),
          deadline: await deadline(ctx),
        });
        const signature = await bob.signTypedData(typed);
        return s
          .as(relayer)
          .minter.write.repayWithSig([id, amount, bob.address, typed.message.deadline, signature, hint]);
      });
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      m.supply -= paid;
      return new Map([[id, { status: STATUS.Open, collateral: p.collateralZat, debt: p.debt - paid }]]);
    });
  }
}

export interface WithdrawOptions {
  /** The position, by id (modulo the positions there are). */
  index: number;
  /** The share of its collateral taken out, in bps. */
  fractionBps: bigint;
  /** Where the ZEC goes. */
  dest: Dest;
  /** Who asks: the owner or a stranger, each directly or by a signature a relayer sends. */
  caller: Caller;
  /** The hint the relayer sends with the write (it changes gas only: the same outcome for each). */
  hint: HintKind;
}

/** Collateral withdrawn from a position, to a payout or a new note. */
export class Withdraw extends Step<WithdrawOptions> {
  toString() {
    const { index, fractionBps, dest, caller, hint } = this.options;
    return `Withdraw(${index}, ${fractionBps}bps, ${dest}, ${caller}${hint === "none" ? "" : `, hint ${hint}`})`;
  }
  async run(m: Model, w: World) {
    const { index, fractionBps, dest, caller, hint: hintKind } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const id = pick(c, index);
      const p = c.positions[Number(id) - 1]!;
      const owner = keyOf(ctx, p.owner);
      const amount = max(1n, (p.collateralZat * fractionBps) / BPS);
      const left = p.collateralZat - amount;
      let expected: string | null = null;
      if (caller === "strangerSig") expected = "InvalidSignature";
      else if (p.status !== STATUS.Open) expected = "PositionNotOpen";
      else if (caller === "stranger") expected = "NotPositionOwner";
      else if (amount > p.collateralZat) expected = "InvalidWithdrawAmount";
      else if (p.debt !== 0n && c.frozen) expected = "PriceFrozen";
      else if (p.debt !== 0n && value(c, left) * BPS < p.debt * c.params.minCollateralRatioBps) {
        expected = "PositionUndercollateralized";
      } else if (p.debt !== 0n) expected = exitError(c, amount, 0n, c.params.systemFloorRatioBps);
      expected = pauseError(c, "pausable") ?? expected;
      const to = destination(ctx, dest, p.owner);
      const hint =
        amount <= p.collateralZat
          ? await hintOf(ctx, c, hintKind, { positionId: id, collateralZat: left, debt: p.debt })
          : 0n;
      const outcome = await send(ctx, async () => {
        if (caller === "owner") return s.as(owner).minter.write.withdrawCollateral([id, amount, to, hint]);
        if (caller === "stranger") return s.as(carol).minter.write.withdrawCollateral([id, amount, to, hint]);
        const signer = caller === "ownerSig" ? owner : carol;
        const typed = withdrawCollateralTypedData(minterDomain(ctx), {
          positionId: id,
          amountZat: amount,
          ...to,
          nonce: await s.read.minter.read.nonces([p.owner]),
          deadline: await deadline(ctx),
        });
        const signature = await signer.signTypedData(typed);
        return s
          .as(relayer)
          .minter.write.withdrawCollateralWithSig([id, amount, to, typed.message.deadline, signature, hint]);
      });
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      released(ctx, m, p.owner, amount, to);
      return new Map([[id, { status: STATUS.Open, collateral: left, debt: p.debt }]]);
    });
  }
}

export interface CloseOptions {
  /** The position, by id (modulo the positions there are). */
  index: number;
  /** Where its collateral goes. */
  dest: Dest;
  /** Who asks: the owner or a stranger, each directly or by a signature a relayer sends. */
  caller: Caller;
}

/** A position closed: its debt repaid whole, its collateral released (a liquidated one's surplus too). */
export class Close extends Step<CloseOptions> {
  toString() {
    const { index, dest, caller } = this.options;
    return `Close(${index}, ${dest}, ${caller})`;
  }
  async run(m: Model, w: World) {
    const { index, dest, caller } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const id = pick(c, index);
      const p = c.positions[Number(id) - 1]!;
      const owner = keyOf(ctx, p.owner);
      let expected: string | null = null;
      if (caller === "strangerSig") expected = "InvalidSignature";
      else if (p.status !== STATUS.Open && p.status !== STATUS.Liquidated) expected = "PositionNotOpen";
      else if (caller === "stranger") expected = "NotPositionOwner";
      else if (p.debt !== 0n) expected = exitError(c, p.collateralZat, p.debt, BPS);
      if (expected === null) await gather(ctx, p.owner, p.debt);
      const to = destination(ctx, dest, p.owner);
      const outcome = await send(ctx, async () => {
        if (caller === "owner") return s.as(owner).minter.write.close([id, to]);
        if (caller === "stranger") return s.as(carol).minter.write.close([id, to]);
        const signer = caller === "ownerSig" ? owner : carol;
        // Bounded at what the owner reads: the step lands before anything else can change it.
        const bounds = { maxDebt: p.debt, minZatOut: p.collateralZat };
        const typed = closeTypedData(minterDomain(ctx), {
          positionId: id,
          ...bounds,
          ...to,
          nonce: await s.read.minter.read.nonces([p.owner]),
          deadline: await deadline(ctx),
        });
        const signature = await signer.signTypedData(typed);
        return s
          .as(relayer)
          .minter.write.closeWithSig([id, bounds.maxDebt, bounds.minZatOut, to, typed.message.deadline, signature]);
      });
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      m.positions[Number(id) - 1]!.status = STATUS.Closed;
      m.supply -= p.debt;
      released(ctx, m, p.owner, p.collateralZat, to);
      return new Map([[id, { status: STATUS.Closed, collateral: 0n, debt: 0n }]]);
    });
  }
}

export interface LiquidateOptions {
  /** The position, riskiest first (modulo the positions there are). */
  index: number;
  /** Where the seized ZEC goes. */
  dest: Dest;
}

/** A keeper (carol) liquidates a position under its liquidation ratio, bounded at exactly what the model predicts. */
export class Liquidate extends Step<LiquidateOptions> {
  toString() {
    const { index, dest } = this.options;
    return `Liquidate(${index}, ${dest})`;
  }
  async run(m: Model, w: World) {
    const { index, dest } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const id = pick(c, index, true);
        const p = c.positions[Number(id) - 1]!;
        let expected: string | null = null;
        if (p.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (c.frozen) expected = "PriceFrozen";
        else if (p.debt === 0n || value(c, p.collateralZat) * BPS >= p.debt * c.params.liquidationRatioBps) {
          expected = "PositionNotLiquidatable";
        }
        expected = pauseError(c, "pausable") ?? expected;
        if (expected === null) await gather(ctx, carol.address, p.debt);
        const to = destination(ctx, dest, carol.address);
        const seized = expected === null ? seizedAt(c, p) : 0n;
        // Bounded at exactly what the model predicts: a zatoshi off either way would revert.
        const outcome = await send(ctx, () =>
          s.as(carol).minter.write.liquidate([id, { maxDebt: p.debt, minSeizedZat: seized, minSeizedValue: 0n }, to]),
        );
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        const [event] = parseEventLogs({
          abi: positionManagerAbi,
          logs: outcome.receipt.logs,
          eventName: "PositionLiquidated",
        });
        expect(event!.args).toMatchObject({ debt: p.debt, seizedZat: seized, surplusZat: p.collateralZat - seized });
        m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
        released(ctx, m, carol.address, seized, to);
        m.supply -= p.debt;
        return new Map([[id, { status: STATUS.Liquidated, collateral: p.collateralZat - seized, debt: 0n }]]);
      },
      true,
    );
  }
}

export interface RedistributeOptions {
  /** The position, riskiest first (modulo the positions there are). */
  index: number;
  /** Where the keeper's reward goes. */
  dest: Dest;
}

/** A keeper (bob) spreads a position under 100% over the others, for its reward. */
export class Redistribute extends Step<RedistributeOptions> {
  toString() {
    const { index, dest } = this.options;
    return `Redistribute(${index}, ${dest})`;
  }
  async run(m: Model, w: World) {
    const { index, dest } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(
      m,
      this.toString(),
      async (c) => {
        const id = pick(c, index, true);
        const p = c.positions[Number(id) - 1]!;
        let expected: string | null = null;
        if (p.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (c.frozen) expected = "PriceFrozen";
        else if (!settles(c, p.collateralZat, p.debt)) expected = "PositionNotUnderwater";
        else if (!spreadable(p.debt, c.debt)) {
          expected = "NoDebtToRedistributeTo";
          if (p.debt < c.debt) stats.unspreadableRefusals++;
        }
        expected = pauseError(c, "pausable") ?? expected;
        const to = destination(ctx, dest, bob.address);
        const outcome = await send(ctx, () => s.as(bob).minter.write.redistribute([id, to]));
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        const [event] = parseEventLogs({
          abi: positionManagerAbi,
          logs: outcome.receipt.logs,
          eventName: "PositionRedistributed",
        });
        const { own, owed } = keeperReward(c, p.collateralZat);
        expect(event!.args).toMatchObject({
          positionId: id,
          caller: bob.address,
          debt: p.debt,
          collateralZat: p.collateralZat,
          rewardZat: own,
        });
        const xs = exactOf(c);
        spread(xs, id, c.debt, own);
        redistributedInModel(m, c.debt, p.debt, BigInt(c.positions.length));
        m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
        const [release] = parseEventLogs({
          abi: stableMinterAbi,
          logs: outcome.receipt.logs,
          eventName: "CollateralReleased",
        });
        const shared = shareKeeperCost(c, xs, owed, (release?.args.amountZat ?? 0n) - own, this.toString());
        const reward = own + shared;
        released(ctx, m, bob.address, reward, to);
        return expectedOf(xs, "redistribution", c.debt);
      },
      true,
    );
  }
}

export interface RedistributeManyOptions {
  /** The most positions the keeper names, riskiest first. */
  count: number;
  /** Where the keeper's reward goes. */
  dest: Dest;
}

/**
 * A keeper clears up to `count` positions in one call, riskiest first as it would name them: each that
 * `redistribute` would take (under 100% or within a redemption's margin, someone to spread it over) is
 * spread in turn, the others skipped; one payout carries their rewards and the floors' rest the positions
 * left give once the cleared ones are gone.
 */
export class RedistributeMany extends Step<RedistributeManyOptions> {
  toString() {
    const { count: upTo, dest } = this.options;
    return `RedistributeMany(${upTo}, ${dest})`;
  }
  async run(m: Model, w: World) {
    const { count: upTo, dest } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    const label = this.toString();
    await w.step(
      m,
      label,
      async (c) => {
        const risk = (i: number) => {
          const p = c.positions[i]!;
          return p.status !== STATUS.Open || p.debt === 0n
            ? Number.POSITIVE_INFINITY
            : Number(value(c, p.collateralZat)) / Number(p.debt);
        };
        const ids = c.positions
          .map((_, i) => i)
          .sort((a, b) => risk(a) - risk(b))
          .slice(0, upTo)
          .map((i) => BigInt(i + 1));
        // Which it clears, on a copy of the model: unsure when one is within the chain's rounding of 100%.
        let sure = true;
        const predicted: bigint[] = [];
        const copy = exactOf(c);
        for (const id of ids) {
          const x = copy.find((y) => y.id === id && y.d > 0n);
          if (!x) continue;
          if (borderline(x, c.price)) {
            sure = false;
            break;
          }
          if (!underwater(x, c.price) || !spreadable(x.d / SCALE, c.debt)) continue;
          predicted.push(id);
          spread(copy, id, c.debt, keeperReward(c, x.c / SCALE).own);
        }
        let allowed = new Set<string | null>(
          c.frozen
            ? ["PriceFrozen"]
            : sure
              ? [predicted.length === 0 ? "NothingToRedistribute" : null]
              : [null, "NothingToRedistribute"],
        );
        const paused = pauseError(c, "pausable");
        if (paused) allowed = new Set([paused]);
        const to = destination(ctx, dest, bob.address);
        const outcome = await send(ctx, () => s.as(bob).minter.write.redistributeMany([ids, to]));
        const got = outcome.ok ? null : outcome.error;
        count(`RedistributeMany: ${got ?? "ok"}${sure ? "" : " (unsure)"}`);
        expect(allowed.has(got), `${label}: outcome ${got} not in ${[...allowed].join(", ")}`).toBe(true);
        if (!outcome.ok) return new Map();
        const events = parseEventLogs({
          abi: positionManagerAbi,
          logs: outcome.receipt.logs,
          eventName: "PositionRedistributed",
        });
        if (sure)
          expect(
            events.map((e) => e.args.positionId),
            `${label}: cleared`,
          ).toEqual(predicted);
        const xs = exactOf(c);
        const n = BigInt(c.positions.length);
        let own = 0n;
        let owed = 0n;
        for (const e of events) {
          const id = e.args.positionId!;
          const x = xs.find((y) => y.id === id)!;
          const where = `${label}: position ${id}`;
          expect(x && x.d > 0n, `${where} had debt`).toBe(true);
          expect(underwater(x, c.price) || borderline(x, c.price), `${where} under 100%`).toBe(true);
          expect(ids, `${where} named`).toContain(id);
          const reward = keeperReward(c, e.args.collateralZat!);
          expect(e.args.rewardZat, `${where}: its own part of the reward`).toBe(reward.own);
          spread(xs, id, c.debt, reward.own);
          redistributedInModel(m, c.debt, e.args.debt!, n);
          m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
          own += reward.own;
          owed += reward.owed;
        }
        count(`RedistributeMany: cleared ${events.length} of ${ids.length}`);
        const [release] = parseEventLogs({
          abi: stableMinterAbi,
          logs: outcome.receipt.logs,
          eventName: "CollateralReleased",
        });
        if (release) expect(release.args.positionId, `${label}: one payout, position 0`).toBe(0n);
        const shared = shareKeeperCost(c, xs, owed, (release?.args.amountZat ?? 0n) - own, label);
        released(ctx, m, bob.address, own + shared, to);
        return expectedOf(xs, "batch redistribution", c.debt);
      },
      true,
    );
  }
}
