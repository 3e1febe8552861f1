// Steps on redemptions and their payouts: redeeming every size against the model of the
// redemption map (par, pro rata, or out of one stuck position), envelopes replayed, copied and
// front-run, and custody paying, failing and redirecting what it owes.
import { type Address, type Hex, type LocalAccount, getAddress, parseEventLogs } from "viem";
import { expect } from "vitest";
import { positionManagerAbi, redemptionsAbi } from "@zsd/sdk/abis";
import { redirectTypedData } from "@zsd/sdk";
import {
  BPS,
  PAYOUT,
  SAPLING,
  SCALE,
  STATUS,
  TOL_C,
  UNPAYABLE,
  ZAT_PRICE_TO_USD18,
  abs,
  alice,
  custody,
  bob,
  carol,
  ceilDiv,
  max,
  min,
  relayer,
} from "../constants.ts";
import { type Context, keyOf, seal } from "../context.ts";
import { type Chain, deadline, expectOutcome, gather, read, send, value } from "../chain.ts";
import {
  type Caller,
  type Envelope,
  type Exact,
  type Model,
  type RedirectDest,
  borderline,
  destination,
  endEpoch,
  exactOf,
  expectedOf,
  payout,
  redistributedInModel,
  released,
  setMap,
  spread,
  spreadable,
  underwater,
} from "../model.ts";
import { count, stats } from "../stats.ts";
import { Step, type World } from "../world.ts";

/** How much a redemption asks for: a few wei, a small or large share of the supply, all of it, or a wei more. */
export type Size = "tiny" | "small" | "large" | "whole" | "over";

export interface RedeemOptions {
  size: Size;
  /**
   * The amount in wei for "tiny", the share of the supply in bps for "small" and "large" (unused for
   * "whole" and "over"); it also picks which earlier envelope a replay or a copy takes.
   */
  raw: bigint;
  /** Alice, bob or carol (for "frontrun", the attacker: the next of them is the victim). */
  redeemer: 0 | 1 | 2;
  /** The envelope sent for the payout. */
  dest: Envelope;
  /**
   * When not 0, the same amount is first redeemed in two parts, split here (in bps), on a snapshot
   * reverted after: the parts together must not be paid more than the whole.
   */
  splitBps: bigint;
}

/** ZSD redeemed for ZEC, a payout to the redeemer, checked against the model of the redemption map. */
export class Redeem extends Step<RedeemOptions> {
  toString() {
    const { size, raw, redeemer, dest, splitBps } = this.options;
    return `Redeem(${size}, ${raw}, ${redeemer}, ${dest}, split ${splitBps})`;
  }
  amount(c: Chain) {
    const { size, raw } = this.options;
    switch (size) {
      case "tiny":
        return raw;
      case "small":
      case "large":
        return max(1n, (c.debt * raw) / BPS);
      case "whole":
        return c.debt;
      case "over":
        return c.debt + 1n;
    }
  }
  /** The envelope the redeemer sends: fresh, or one already on the chain (its own, or another owner's). */
  envelope(ctx: Context, m: Model, redeemer: Address): Hex {
    const { raw, dest, splitBps } = this.options;
    if (dest === "replay" || dest === "foreign") {
      const mine = dest === "replay";
      const on = [...m.payouts.values()].filter((p) => (p.owner === getAddress(redeemer)) === mine);
      if (on.length > 0) return on[Number((raw + splitBps) % BigInt(on.length))]!.envelope;
      count(`Redeem: no envelope to ${dest}, a fresh one`);
    }
    return seal(ctx, dest === "unpayable" ? UNPAYABLE : SAPLING, redeemer);
  }
  async run(m: Model, w: World) {
    const { redeemer: who, dest } = this.options;
    const ctx = w.ctx;
    const redeemer = [alice, bob, carol][who]!;
    if (dest !== "frontrun") return this.redeem(m, w, redeemer, this.envelope(ctx, m, redeemer.address), "");
    // The victim's request seen in the mempool: its envelope copied onto the attacker's
    // redemption, mined first; then the victim's own lands.
    const victim = [alice, bob, carol][(who + 1) % 3]!;
    const envelope = seal(ctx, SAPLING, victim.address);
    const before = m.payoutCount;
    await this.redeem(m, w, redeemer, envelope, ", the copy");
    const copy = m.payoutCount > before ? m.payoutCount : undefined;
    await this.redeem(m, w, victim, envelope, ", its owner's");
    const own = m.payoutCount > (copy ?? before) ? m.payoutCount : undefined;
    // Custody settles both: the copy fails for the one who sent it, the owner's own is paid.
    for (const id of [copy, own])
      if (id !== undefined) await settle(m, w, id, false, `${this.toString()}, settle ${id}`);
    if (copy !== undefined) expect(m.payouts.get(copy)!.status, `${this.toString()}: the copy`).toBe(PAYOUT.Failed);
    if (own !== undefined) {
      expect(m.payouts.get(own)!.status, `${this.toString()}: the owner's own`).toBe(PAYOUT.Completed);
      if (copy !== undefined) count("Redeem: front-run copy failed, the owner's own paid");
    }
  }
  async redeem(m: Model, w: World, redeemer: LocalAccount, address: Hex, part: string) {
    const { size, splitBps } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    const label = `${this.toString()}${part}`;
    await w.step(
      m,
      label,
      async (c) => {
        const amount = this.amount(c);
        const fee = c.params.redemptionFeeBps;
        // The quote, from the contract's formula: par less a fee rounded up while the
        // positions are worth their debt, pro rata without a fee when they are not.
        const quote = (a: bigint, backing: bigint, debt: bigint) => {
          const solvent = value(c, backing) >= debt;
          if (!solvent) return { zatDue: (a * backing) / debt, feeZat: 0n, solvent };
          const gross = a / (c.price * ZAT_PRICE_TO_USD18);
          const feeZat = ceilDiv(gross * fee, BPS);
          return { zatDue: gross - feeZat, feeZat, solvent };
        };
        // What a position's debt may read as, from the model (exact but for its tolerance).
        const n = BigInt(c.positions.length);
        const debtRange = (x: Exact) => [
          max(0n, x.d / SCALE - x.tolD - n),
          min(c.debt, ceilDiv(x.d, SCALE) + x.tolD + n),
        ];
        const spreadability = (x: Exact): "yes" | "no" | "maybe" => {
          const [lo, hi] = debtRange(x);
          if (spreadable(hi, c.debt)) return "yes";
          if (!spreadable(lo, c.debt)) return "no";
          return "maybe";
        };
        // A redemption out of one stuck position alone: refused past its debt, too small at 0 zatoshi.
        const stuckOutcomes = (x: Exact, a: bigint): Set<string | null> => {
          const [lo, hi] = debtRange(x);
          const out = new Set<string | null>();
          if (a > lo) out.add("RedemptionExceedsDebt");
          if (a <= hi) {
            const cLo = max(0n, x.c / SCALE - TOL_C);
            const cHi = x.c / SCALE + TOL_C;
            if (hi > 0n && (cHi * a) / max(lo, 1n) >= 1n) out.add(null);
            if (hi > 0n && (cLo * a) / hi === 0n) out.add("RedemptionTooSmall");
          }
          return out;
        };
        /**
         * The settle walk of a solvent redemption on the model, riskiest first: stops at the first
         * safe position, redistributes an unsafe spreadable one, sticks at an unsafe unspreadable one
         * that heads the order, and refuses (`UnderwaterPositionsPending`) at one its own
         * redistributions reached, which the quote could not foresee. Ambiguous when a decision is
         * within the chain's rounding of the model.
         */
        const settleWalk = (): { stuck?: Exact; pending?: boolean; ambiguous: boolean; heavy?: Exact } => {
          const ys = exactOf(c);
          for (let i = 0; i <= 24; i++) {
            const live = ys.filter((x) => x.d > 0n);
            const heavy = live.find((x) => spreadability(x) !== "yes");
            if (live.length === 0) return { ambiguous: false };
            const r = live.reduce((a, b) => (b.c * a.d < a.c * b.d ? b : a));
            const under = underwater(r, c.price);
            const edge = borderline(r, c.price);
            if (!under && !edge) return { ambiguous: false };
            const sp = spreadability(r);
            if (edge || sp === "maybe") return { ambiguous: true, heavy };
            if (sp === "no") return i === 0 ? { stuck: r, ambiguous: false } : { pending: true, ambiguous: false };
            spread(ys, r.id, c.debt, 0n);
          }
          return { ambiguous: true, heavy: ys.find((x) => x.d > 0n && spreadability(x) !== "yes") };
        };
        const debtors = BigInt(c.positions.filter((p) => p.debt > 0n).length);
        let allowed = new Set<string | null>([null]);
        let walk: ReturnType<typeof settleWalk> = { ambiguous: false };
        let q = { zatDue: 0n, feeZat: 0n, solvent: true };
        if (amount === 0n) allowed = new Set(["InvalidAmount"]);
        else if (c.frozen) allowed = new Set(["PriceFrozen"]);
        else if (amount > c.debt) allowed = new Set(["RedemptionExceedsDebt"]);
        else if (amount !== c.debt && c.debt - amount < debtors) {
          // Every position with debt owes at least a wei: no redemption may leave fewer wei than debtors.
          allowed = new Set(["RedemptionExceedsDebt"]);
          stats.dustGuards++;
          count("Redeem: dust guard (fewer wei left than debtors)");
        } else {
          q = quote(amount, c.backing, c.debt);
          if (q.zatDue === 0n) allowed = new Set(["RedemptionTooSmall"]);
          else if (q.solvent) {
            walk = settleWalk();
            if (!walk.ambiguous && walk.stuck) allowed = stuckOutcomes(walk.stuck, amount);
            else if (!walk.ambiguous && walk.pending) {
              allowed = new Set(["UnderwaterPositionsPending"]);
              count("Redeem: refused, its walk would stick at a position it spread others onto");
            } else if (walk.ambiguous) {
              allowed = new Set<string | null>([null]);
              if (walk.heavy)
                for (const o of [...stuckOutcomes(walk.heavy, amount), "UnderwaterPositionsPending"]) allowed.add(o);
            }
          }
        }
        const sure = allowed.size === 1;
        const expected = sure ? [...allowed][0]! : null;
        if (allowed.has(null)) await gather(ctx, redeemer.address, amount);
        const redeem = (a: bigint) => send(ctx, () => s.as(redeemer).redemptions.write.redeem([a, address]));

        // Splitting never pays more: two redemptions of the parts, then back to before them.
        let splitPaid: bigint | undefined;
        if (sure && expected === null && splitBps > 0n && size !== "whole") {
          const first = max(1n, (amount * splitBps) / BPS);
          const snapshot = await s.snapshot();
          splitPaid = 0n;
          for (const part of [first, amount - first]) {
            if (part === 0n) continue;
            const o = await redeem(part);
            if (o.ok) {
              const [e] = parseEventLogs({
                abi: redemptionsAbi,
                logs: o.receipt.logs,
                eventName: "PayoutRequested",
              });
              splitPaid += e!.args.zatDue!;
            } else {
              expect(o.error, `${label}: a part of the split`).toBe("RedemptionTooSmall");
            }
          }
          await s.revert(snapshot);
        }

        // What the contract promises: the quote read now is what the redemption pays, to the zatoshi.
        const quoted = await s.read.redemptions.read.quote([amount]).catch(() => undefined);
        const outcome = await redeem(amount);
        if (
          outcome.ok === false &&
          outcome.error === "UnderwaterPositionsPending" &&
          !allowed.has("UnderwaterPositionsPending")
        ) {
          // Allowed only when a bounded walk could not settle them all.
          const k = exactOf(c).length;
          expect(k * k > 24, `${label}: UnderwaterPositionsPending with ${k} positions`).toBe(true);
          count("Redeem: UnderwaterPositionsPending");
          return new Map();
        }
        if (!sure) {
          stats.ambiguousRedemptions++;
          const got = outcome.ok ? null : outcome.error;
          count(`Redeem: ambiguous walk: ${got ?? "ok"}`);
          expect(allowed.has(got), `${label}: outcome ${got} not in ${[...allowed].join(", ")}`).toBe(true);
          if (!outcome.ok) return new Map();
        } else {
          if (!outcome.ok && walk.stuck && outcome.error !== "RedemptionTooSmall") stats.stuckRefused++;
          if (!expectOutcome(label, outcome, expected)) return new Map();
        }
        if (!outcome.ok) return new Map();
        const [event] = parseEventLogs({
          abi: redemptionsAbi,
          logs: outcome.receipt.logs,
          eventName: "PayoutRequested",
        });
        const paid = event!.args.zatDue!;
        expect(event!.args.price, `${label}: price`).toBe(c.price);
        expect(quoted, `${label}: a quote before it`).toBeDefined();
        expect([paid, event!.args.feeZat], `${label}: paid what it was quoted`).toEqual([quoted![0], quoted![1]]);

        // The model of the map: positions under 100% redistributed first (par only), lowest ratio first.
        const xs = exactOf(c);
        const redistributed = parseEventLogs({
          abi: positionManagerAbi,
          logs: outcome.receipt.logs,
          eventName: "PositionRedistributed",
        });
        if (!q.solvent) expect(redistributed, `${label}: no redistribution when pro rata`).toEqual([]);
        for (const r of redistributed) {
          stats.inlineRedistributions++;
          const x = xs.find((y) => y.id === r.args.positionId);
          const where = `${label}: inline redistribution of position ${r.args.positionId}`;
          expect(x && x.d > 0n, `${where} (has debt)`).toBe(true);
          expect(underwater(x!, c.price) || borderline(x!, c.price), `${where} (under 100%)`).toBe(true);
          expect(abs(r.args.debt! * SCALE - x!.d) <= x!.tolD * SCALE, `${where}: debt`).toBe(true);
          expect(abs(r.args.collateralZat! * SCALE - x!.c) <= TOL_C * SCALE, `${where}: collateral`).toBe(true);
          expect(r.args.rewardZat, `${where}: no reward`).toBe(0n);
          expect(spreadable(r.args.debt!, c.debt), `${where}: spreadable`).toBe(true);
          spread(xs, x!.id, c.debt, 0n);
          redistributedInModel(m, c.debt, r.args.debt!, n);
          m.positions[Number(x!.id) - 1]!.status = STATUS.Liquidated;
        }
        const withDebt = xs.filter((x) => x.d > 0n);
        const debtAfter = c.debt - amount;

        // Which path the chain took: par over everyone, or pro rata out of one stuck position. The
        // stuck position's read before is its read after plus what it paid (written at the current map).
        let stuck: Exact | undefined;
        const stuckFits = (x: Exact) => {
          const p = after0.positions[Number(x.id) - 1]!;
          const cRead = p.collateralZat + paid;
          const dRead = p.debt + amount;
          return (
            event!.args.feeZat === 0n &&
            paid === (cRead * amount) / dRead &&
            abs(cRead * SCALE - x.c) <= TOL_C * SCALE &&
            abs(dRead * SCALE - x.d) <= (x.tolD + n) * SCALE
          );
        };
        const after0 = await read(ctx);
        const parFits = paid === q.zatDue && event!.args.feeZat === q.feeZat;
        if (q.solvent && !walk.ambiguous && walk.stuck) {
          stuck = xs.find((x) => x.id === walk.stuck!.id);
          expect(stuck && stuck.d > 0n, `${label}: stuck position ${walk.stuck.id} still has debt`).toBe(true);
        } else if (q.solvent && walk.ambiguous) {
          const heavy = withDebt.find((x) => spreadability(x) !== "yes");
          const others = withDebt.filter((x) => x !== heavy);
          const untouched = others.every(
            (x) => abs(after0.positions[Number(x.id) - 1]!.collateralZat * SCALE - x.c) <= TOL_C * SCALE,
          );
          if (heavy && stuckFits(heavy) && (!parFits || untouched)) stuck = heavy;
        }
        if (stuck) {
          // Under 100% and holding all but a millionth of the debt: it alone pays, pro rata, no fee.
          const where = `${label}: pro rata out of stuck position ${stuck.id}`;
          expect(stuckFits(stuck), `${where} (paid ${paid}, fee ${event!.args.feeZat})`).toBe(true);
          expect(spreadability(stuck) !== "yes", `${where}: unspreadable`).toBe(true);
          expect(underwater(stuck, c.price) || borderline(stuck, c.price), `${where}: under 100%`).toBe(true);
          stats.stuckRedemptions++;
          count(`Redeem: stuck, pro rata from one position${debtAfter === 0n ? ", whole supply (new epoch)" : ""}`);
          stuck.c -= paid * SCALE;
          stuck.d -= amount * SCALE;
          if (stuck.d < 0n) stuck.d = 0n;
          if (debtAfter === 0n) endEpoch(m);
        } else {
          expect(
            { zatDue: paid, feeZat: event!.args.feeZat },
            `${label}: ${q.solvent ? "par" : "pro rata"} quote`,
          ).toEqual({ zatDue: q.zatDue, feeZat: q.feeZat });
          count(`Redeem: ${q.solvent ? "par" : "pro rata"}${amount === c.debt ? ", whole supply (new epoch)" : ""}`);
          if (q.solvent && withDebt.length > 1) {
            for (const x of withDebt) {
              expect(
                !underwater(x, c.price) || borderline(x, c.price),
                `${label}: position ${x.id} left under 100% to pay at par`,
              ).toBe(true);
            }
          }
          for (const x of withDebt) {
            if (q.solvent) x.c -= (q.zatDue * x.d) / c.debt;
            else x.c = (x.c * (c.backing - q.zatDue)) / c.backing;
            x.d = (x.d * debtAfter) / c.debt;
          }
          const a = q.solvent ? m.mapA : (m.mapA * (c.backing - q.zatDue)) / c.backing;
          const f = ceilDiv(m.mapF * debtAfter, c.debt);
          m.debtSlack = ceilDiv(m.debtSlack * debtAfter, c.debt);
          if (debtAfter === 0n) endEpoch(m);
          else setMap(m, a, f);
        }
        if (splitPaid !== undefined) {
          stats.splitChecks++;
          stats.maxSplitShortfall = max(stats.maxSplitShortfall, paid - splitPaid);
          expect(
            splitPaid <= paid,
            `${label}: split paid ${splitPaid} > whole ${paid} (${stuck ? "stuck" : q.solvent ? "par" : "pro rata"})`,
          ).toBe(true);
        }
        payout(ctx, m, redeemer.address, paid, address);
        m.supply -= amount;
        return expectedOf(
          xs,
          stuck ? "stuck redemption" : q.solvent ? "par redemption" : "pro rata redemption",
          debtAfter,
        );
      },
      true,
    );
  }
}

/**
 * Custody settles payout `id` (one not pending is refused): it fails what it could not open to a
 * payable address (its verdict, reached from the chain when the payout was made), and pays the
 * rest unless `refuse` (its wallet refusing an address it could open).
 */
async function settle(m: Model, w: World, id: bigint, refuse: boolean, label: string) {
  const ctx = w.ctx;
  const { s } = ctx;
  await w.step(m, label, async () => {
    const p = m.payouts.get(id);
    const verdict = m.custody.get(id);
    const unreadable = verdict !== undefined && !("address" in verdict);
    const fail = refuse || unreadable;
    const expected = p?.status === PAYOUT.Requested ? null : "PayoutNotPending";
    const outcome = await send(ctx, () =>
      fail
        ? s.as(custody).redemptions.write.failPayout([id, unreadable ? "unreadable_address" : "address refused"])
        : s.as(custody).redemptions.write.completePayout([id, `0x${"ab".repeat(32)}`]),
    );
    if (!expectOutcome(`${fail ? "Fail" : "Complete"}(${id})`, outcome, expected)) return new Map();
    m.touched.add(id);
    if (fail) {
      // Held for its owner: nothing moves, no position changes.
      p!.status = PAYOUT.Failed;
    } else {
      p!.status = PAYOUT.Completed;
      m.pending -= p!.zatDue;
      m.held -= p!.zatDue;
    }
    return new Map();
  });
}

export interface SettleOptions {
  /** The payout, among those pending (or among the others, when `stale`), modulo their count; none: one not made yet. */
  index: number;
  /** Custody's wallet refuses the address it opened: the payout fails, held for its owner. */
  fail: boolean;
  /** A payout no longer pending (refused: PayoutNotPending). */
  stale: boolean;
}

/** Custody settles a payout: it pays it, or fails what it could not open to a payable address. */
export class Settle extends Step<SettleOptions> {
  toString() {
    const { index, fail, stale } = this.options;
    return `Settle(${index}, ${fail ? "fail" : "pay"}${stale ? ", stale" : ""})`;
  }
  async run(m: Model, w: World) {
    const { index, fail, stale } = this.options;
    const ids = [...m.payouts.entries()].filter(([, p]) => (p.status === PAYOUT.Requested) !== stale).map(([id]) => id);
    const id = ids.length ? ids[index % ids.length]! : m.payoutCount + 1n;
    await settle(m, w, id, fail, this.toString());
  }
}

export interface RedirectOptions {
  /** The payout, among those failed (or among the others, when `stale`), modulo their count. */
  index: number;
  /** Where the held ZEC goes: a new payout (a fresh envelope, or the failed one's again) or a note. */
  dest: RedirectDest;
  /** Who asks: the payout's owner or a stranger, each directly or by a signature a relayer sends. */
  by: Caller;
  /** A payout not failed (refused: PayoutNotFailed). */
  stale: boolean;
}

/** A failed payout's owner sends its ZEC elsewhere, whole: a new payout of theirs, or a note. */
export class Redirect extends Step<RedirectOptions> {
  toString() {
    const { index, dest, by, stale } = this.options;
    return `Redirect(${index}, ${dest}, ${by}${stale ? ", stale" : ""})`;
  }
  async run(m: Model, w: World) {
    const { index, dest, by, stale } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async () => {
      const ids = [...m.payouts.entries()].filter(([, p]) => (p.status === PAYOUT.Failed) !== stale).map(([id]) => id);
      if (ids.length === 0) {
        count("Redirect: nothing failed");
        return new Map();
      }
      const id = ids[index % ids.length]!;
      const p = m.payouts.get(id)!;
      const owner = keyOf(ctx, p.owner);
      const stranger = p.owner === carol.address ? alice : carol;
      const to = dest === "same" ? { sealedAddress: p.envelope, noteCommitment: 0n } : destination(ctx, dest, p.owner);
      let expected: string | null = null;
      if (by === "strangerSig") expected = "InvalidSignature";
      else if (p.status !== PAYOUT.Failed) expected = "PayoutNotFailed";
      else if (by === "stranger") expected = "NotPayoutOwner";
      const outcome = await send(ctx, async () => {
        if (by === "owner") return s.as(owner).redemptions.write.redirect([id, to.sealedAddress, to.noteCommitment]);
        if (by === "stranger") {
          return s.as(stranger).redemptions.write.redirect([id, to.sealedAddress, to.noteCommitment]);
        }
        const signer = by === "ownerSig" ? owner : stranger;
        const message = {
          id,
          sealedAddress: to.sealedAddress,
          noteCommitment: to.noteCommitment,
          nonce: await s.read.redemptions.read.nonces([p.owner]),
          deadline: await deadline(ctx),
        };
        const signature = await signer.signTypedData(
          redirectTypedData({ chainId: s.chainId, verifyingContract: s.read.redemptions.address }, message),
        );
        return s
          .as(relayer)
          .redemptions.write.redirectWithSig([id, to.sealedAddress, to.noteCommitment, message.deadline, signature]);
      });
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      if (dest === "same") count("Redirect: to the failed payout's own envelope again");
      // The held ZEC moves whole: to a new payout of the same owner, or into a note.
      p.status = PAYOUT.Redirected;
      m.touched.add(id);
      m.pending -= p.zatDue;
      released(ctx, m, p.owner, p.zatDue, to);
      const [event] = parseEventLogs({
        abi: redemptionsAbi,
        logs: outcome.receipt.logs,
        eventName: "PayoutRedirected",
      });
      expect(event!.args.newId, `${this.toString()}: new payout`).toBe(dest === "note" ? 0n : m.payoutCount);
      return new Map();
    });
  }
}
