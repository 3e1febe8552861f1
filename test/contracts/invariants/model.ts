// What the test expects, kept apart from the chain: its totals and payouts, what it meant by each
// envelope it sent, and the redemption map (the position manager's factors and each position's exact share).
import { type Address, type Hex, getAddress } from "viem";
import { createNote, depositLeaf, noteCommitment } from "@zsd/sdk";
import { expect } from "vitest";
import {
  BPS,
  FRAME_CEILING,
  FRAME_FLOOR,
  ONE,
  PAYOUT,
  SAPLING,
  SCALE,
  SPREAD_PPM,
  STATUS,
  TOL_C,
  UNPAYABLE,
  ZAT_PRICE_TO_USD18,
  abs,
  ceilDiv,
  max,
  min,
} from "./constants.ts";
import { type Context, lower, seal } from "./context.ts";
import type { Chain, Params } from "./chain.ts";
import type { FeedModel, PriceModel, Reference } from "./feeds.ts";
import { count, stats } from "./stats.ts";

/**
 * What the test meant a payout's envelope to be, from what it sealed and for whom: its owner's
 * payable address, its owner's unpayable one, another owner's envelope copied onto this payout,
 * or an envelope its owner already used on an earlier payout.
 */
export type Meant = "payable" | "unpayable" | "foreign" | "replay";
export interface ModelPayout {
  owner: Address;
  zatDue: bigint;
  status: number;
  /** The envelope the step sent (custody reads its own copy from the chain). */
  envelope: Hex;
  meant: Meant;
}
/** Custody's decision on a payout, reached as the payouts relay reaches it: the address it pays, or why it fails it. */
export type Verdict = { address: string } | { why: "unreadable" | "invalid_address" | "replay" | "missing_key" };
/** What the test expects, kept apart from the chain and compared with it after every step. */
export interface Model {
  held: bigint;
  supply: bigint;
  unminted: bigint;
  pending: bigint;
  /** The price the price feed gives now, whether it is frozen, and the two feeds and last good price behind it. */
  price: bigint;
  frozen: boolean;
  feeds: PriceModel;
  params: Params;
  positions: { owner: Address; status: number }[];
  payouts: Map<bigint, ModelPayout>;
  payoutCount: bigint;
  /** Proofs spent in this run. */
  spent: Set<string>;
  /** Payouts a step created or moved: their records are read back. */
  touched: Set<bigint>;
  /** The position manager's epoch and its map's factors a and f (exact: the chain's own integer steps). */
  epoch: bigint;
  mapA: bigint;
  mapF: bigint;
  /**
   * How far Σ debts may exceed totalDebt beyond a wei per position: each redistribution multiplies
   * the others' rounding by ceil(total / rest) (≤ 1e6), a par redemption scales it down with the debt.
   */
  debtSlack: bigint;
  /** Custody's side: its verdict on each payout discovered (ids up to `discovered`), and the envelopes that opened. */
  custody: Map<bigint, Verdict>;
  opened: Set<Hex>;
  discovered: bigint;
  /** Every leaf ever queued, change and released notes (index: its sequence), and the head: sequences below it left the queue. */
  queued: bigint[];
  head: number;
}

/**
 * The model at the start of a run. `at` is the chain as the snapshot every run reverts to left it (read
 * once, before the first run); `start` is what the run posted and read before its first step: the round
 * both feeds were given (agreeing, so it is the price and the last good one) and the reference that left.
 * Nothing is spent, paid out, touched or discovered by the run yet, the queue is the snapshot's, and the
 * redemption map is at the snapshot's epoch with both factors at one.
 */
export function initialModel(ctx: Context, at: Chain, start: { feed: FeedModel; reference: Reference }): Model {
  const { feed, reference } = start;
  return {
    held: at.held,
    supply: at.supply,
    unminted: at.unminted,
    pending: at.pending,
    price: feed.answer,
    frozen: false,
    feeds: { p: feed, q: feed, last: feed.answer, ref: { ...reference }, advanced: 0n },
    params: { ...at.params },
    positions: at.positions.map((p) => ({ owner: p.owner, status: p.status })),
    payouts: new Map(),
    payoutCount: at.payoutCount,
    spent: new Set(),
    touched: new Set(),
    epoch: at.epoch,
    mapA: ONE,
    mapF: ONE,
    debtSlack: 0n,
    custody: new Map(),
    opened: new Set(),
    discovered: at.payoutCount,
    queued: [...ctx.initialQueue],
    head: 0,
  };
}

export interface Expected {
  status: number;
  collateral: bigint;
  debt: bigint;
  owner?: Address;
  /** Tolerances (the model of a redemption or redistribution is exact; the chain rounds). */
  tolC?: bigint;
  tolD?: bigint;
  why?: string;
}

export type Dest = "note" | "address" | "unpayable";
/** A redirect may also name the failed payout's own envelope again (a wallet retrying as it was). */
export type RedirectDest = Dest | "same";
/** A redemption's envelope: fresh, one of the redeemer's earlier payouts, another owner's, or one about to be front-run. */
export type Envelope = "address" | "unpayable" | "replay" | "foreign" | "frontrun";
export type Caller = "owner" | "ownerSig" | "stranger" | "strangerSig";

/** Where released ZEC goes; an address is sealed for the payout's owner, as a wallet would. */
export function destination(ctx: Context, dest: Dest, owner: Address): { sealedAddress: Hex; noteCommitment: bigint } {
  if (dest === "note") return { sealedAddress: "0x", noteCommitment: noteCommitment(createNote()) };
  return { sealedAddress: seal(ctx, dest === "address" ? SAPLING : UNPAYABLE, owner), noteCommitment: 0n };
}

/** What the test meant by sending `envelope` for a new payout of `owner`, from its own records only. */
export function meant(ctx: Context, m: Model, owner: Address, envelope: Hex): Meant {
  const sealed = ctx.sealedFor.get(lower(envelope));
  if (!sealed) throw new Error(`an envelope the test did not seal: ${envelope}`);
  if (sealed.owner !== getAddress(owner)) return "foreign";
  if (sealed.plaintext !== SAPLING) return "unpayable";
  // The first payout of its owner with it was payable: any later one of theirs is the replay.
  for (const p of m.payouts.values()) {
    if (p.owner === getAddress(owner) && lower(p.envelope) === lower(envelope)) return "replay";
  }
  return "payable";
}

/** The model side of a new payout of `zatDue` to `owner`, to `envelope`. */
export function payout(ctx: Context, m: Model, owner: Address, zatDue: bigint, envelope: Hex) {
  const intent = meant(ctx, m, owner, envelope);
  const id = ++m.payoutCount;
  m.payouts.set(id, { owner: getAddress(owner), zatDue, status: PAYOUT.Requested, envelope, meant: intent });
  m.pending += zatDue;
  m.touched.add(id);
}

/** The model side of released ZEC: a payout to `owner`, or a note (unminted again, its leaf queued like change). */
export function released(
  ctx: Context,
  m: Model,
  owner: Address,
  amountZat: bigint,
  to: { sealedAddress: Hex; noteCommitment: bigint },
) {
  if (amountZat === 0n) return;
  if (to.noteCommitment !== 0n) {
    m.unminted += amountZat;
    m.queued.push(depositLeaf(amountZat, to.noteCommitment));
    return;
  }
  payout(ctx, m, owner, amountZat, to.sealedAddress);
}

// ------------------------------------------------ model of the redemption map

/** Whether the others hold at least a millionth of a position's debt (PositionManager's _spreadable). */
export const spreadable = (debt: bigint, totalDebt: bigint) => (totalDebt - debt) * SPREAD_PPM >= debt;

/** The map after a step: a new frame (an epoch that keeps the debt) once a factor leaves its range. */
export function setMap(m: Model, a: bigint, f: bigint) {
  if (a >= FRAME_FLOOR && f >= FRAME_FLOOR && f <= FRAME_CEILING) {
    m.mapA = a;
    m.mapF = f;
    return;
  }
  stats.frames++;
  count("frame: new epoch keeping the debt");
  m.epoch++;
  m.mapA = ONE;
  m.mapF = ONE;
}
/** All debt redeemed: a new epoch, nothing carried. */
export function endEpoch(m: Model) {
  m.epoch++;
  m.mapA = ONE;
  m.mapF = ONE;
  m.debtSlack = 0n;
}
/** A redistribution of `debt` (as read) out of `total`, among `n` positions. */
export function redistributedInModel(m: Model, total: bigint, debt: bigint, n: bigint) {
  const rest = total - debt;
  m.debtSlack = (m.debtSlack + n) * ceilDiv(total, rest);
  stats.maxDebtSlack = max(stats.maxDebtSlack, m.debtSlack);
  setMap(m, m.mapA, ceilDiv(m.mapF * total, rest));
}

export interface Exact {
  id: bigint;
  c: bigint;
  d: bigint;
  tolD: bigint;
  status: number;
}

/** Positions with debt now, in exact (scaled) arithmetic. */
export function exactOf(c: Chain): Exact[] {
  return c.positions.flatMap((p, i) =>
    p.status === STATUS.Open && p.debt > 0n
      ? [{ id: BigInt(i + 1), c: p.collateralZat * SCALE, d: p.debt * SCALE, tolD: 2n, status: STATUS.Open }]
      : [],
  );
}

/** Spreads position `id`'s debt and its collateral less `reward` over the others in proportion to debt. */
export function spread(xs: Exact[], id: bigint, totalDebt: bigint, reward: bigint) {
  const t = xs.find((x) => x.id === id)!;
  const rest = totalDebt * SCALE - t.d;
  const give = t.c - reward * SCALE;
  for (const x of xs) {
    if (x === t || x.d === 0n) continue;
    x.c += (give * x.d) / rest;
    x.tolD = ceilDiv(x.tolD * totalDebt * SCALE, rest) + 1n;
    x.d = (x.d * totalDebt * SCALE) / rest;
  }
  t.c = 0n;
  t.d = 0n;
  t.status = STATUS.Liquidated;
}

export const underwater = (x: Exact, price: bigint) => x.c * price * ZAT_PRICE_TO_USD18 < x.d;
/**
 * Within a few units of 100% (5 zatoshi of value, a millionth of the debt): the chain's rounding
 * may put it on either side, and a redemption may settle such a position to be safe from its reads.
 */
export const borderline = (x: Exact, price: bigint) =>
  abs(x.c * price * ZAT_PRICE_TO_USD18 - x.d) <= (5n * price * ZAT_PRICE_TO_USD18 + x.tolD) * SCALE + x.d / 1_000_000n;

export function expectedOf(xs: Exact[], why: string, totalDebt: bigint): Map<bigint, Expected> {
  const out = new Map<bigint, Expected>();
  const n = BigInt(xs.length);
  for (const x of xs) {
    if (x.c < -TOL_C * SCALE) {
      throw new Error(`${why}: position ${x.id} would be charged beyond its collateral (${x.c / SCALE} zat)`);
    }
    out.set(x.id, {
      status: x.status,
      collateral: x.c < 0n ? 0n : x.c / SCALE,
      // A read is capped at totalDebt (less a wei for each other debtor): the last debtor owes what is left.
      debt: min(x.d / SCALE, totalDebt),
      tolC: TOL_C,
      tolD: x.tolD + n,
      why,
    });
  }
  return out;
}

/** A keeper's reward for clearing a position (PositionManager's _clear): its share of the collateral, at least the floor. */
export function keeperReward(c: Chain, collateral: bigint) {
  const full = max((collateral * c.params.redistributionRewardBps) / BPS, c.params.keeperRewardFloorZat);
  return { own: min(full, collateral), owed: full - min(full, collateral) };
}

/**
 * The rest of the keepers' floors, taken from every position with debt in proportion to it once the cleared ones
 * are gone (PositionManager's _shareKeeperCost), when the riskiest holds its share; else nothing. Where the model's
 * rounding cannot tell, the chain's `actual` (0 or `owed`) is taken. Applies the charge to `xs`; returns it.
 */
export function shareKeeperCost(c: Chain, xs: Exact[], owed: bigint, actual: bigint, label: string) {
  if (owed === 0n) {
    expect(actual, `${label}: nothing owed, nothing shared`).toBe(0n);
    return 0n;
  }
  const debt = c.debt;
  const n = BigInt(xs.length);
  const live = xs.filter((x) => x.d > 0n);
  // Whether a position holds its share: yes, no, or within the reads' rounding.
  const covers = (x: Exact): "yes" | "no" | "maybe" => {
    const needHi = ceilDiv((ceilDiv(x.d, SCALE) + x.tolD + n) * owed, debt);
    const needLo = ceilDiv(max(0n, x.d / SCALE - x.tolD - n) * owed, debt);
    if (x.c / SCALE - TOL_C >= needHi) return "yes";
    if (x.c / SCALE + TOL_C < needLo) return "no";
    return "maybe";
  };
  let expected: bigint | undefined;
  if (live.length === 0) expected = 0n;
  else if (live.every((x) => covers(x) === "yes")) expected = owed;
  else if (covers(live.reduce((a, b) => (b.c * a.d < a.c * b.d ? b : a))) === "no") expected = 0n;
  if (expected === undefined) {
    count("Keeper floor: the others' cover within rounding");
    expect([0n, owed], `${label}: shared ${actual} of ${owed}`).toContain(actual);
    expected = actual;
  } else {
    count(`Keeper floor: ${expected === 0n ? "not shared (the riskiest cannot give)" : "the rest from the others"}`);
    expect(actual, `${label}: shared of ${owed}`).toBe(expected);
  }
  if (expected !== 0n) for (const x of live) x.c -= (expected * SCALE * x.d) / (debt * SCALE);
  return expected;
}
