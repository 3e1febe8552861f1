// The two price feeds the suite drives (breakable mock aggregators behind the deployed PriceFeed) and
// the model of what PriceFeed makes of them, written from its rule and not from its code: two feeds
// that answer must agree, and then the primary's answer is the price and the reference; a feed alone
// is the price only within the jump bound of the reference; otherwise the last good price, frozen.
// The reference moves without the feeds' agreement only once a window (see `roll`), so the model
// keeps it, and the time of every fetch it predicts.
import { BPS } from "./constants.ts";
import type { Context } from "./context.ts";
import { MODE } from "../../helpers/mock-aggregator.ts";
import { DEFAULT_PARAMETERS } from "../../../scripts/deploy.ts";

/** The bounds the suite deploys with (scripts/deploy.ts's defaults). */
export const MAX_JUMP_BPS = DEFAULT_PARAMETERS.maxPriceJumpBps;
export const MAX_DEVIATION_BPS = DEFAULT_PARAMETERS.maxPriceDeviationBps;
export const WINDOW = DEFAULT_PARAMETERS.priceReferenceWindow;
/** Far from the 1-hour age bound either way, so that no judgement depends on the seconds a step takes. */
const FAR = 7_200n;

/** How a feed's latest round was written: fresh, two hours old, two hours ahead, or the feed reverting. */
export type Dating = "fresh" | "stale" | "future" | "down";
export interface FeedModel {
  answer: bigint;
  dating: Dating;
}
export type Condition = "healthy" | "suspect" | "broken";
/** What a lone feed is held to (PriceFeed.referencePrice): the reference, the pending price, and since when it waits. */
export interface Reference {
  price: bigint;
  pending: bigint;
  since: bigint;
}
export interface PriceModel {
  p: FeedModel;
  q: FeedModel;
  last: bigint;
  ref: Reference;
  /** Seconds the walk has moved the chain's clock on in this run (kept under a day, the roots' age). */
  advanced: bigint;
}

const within = (a: bigint, b: bigint, bps: bigint) => {
  const [hi, lo] = a > b ? [a, b] : [b, a];
  return lo !== 0n && (hi - lo) * BPS <= bps * lo;
};
const answers = (f: FeedModel) => f.dating === "fresh" && f.answer > 0n;

export function judge(f: FeedModel, reference: bigint): Condition {
  if (!answers(f)) return "broken";
  return within(f.answer, reference, MAX_JUMP_BPS) ? "healthy" : "suspect";
}

/**
 * The reference a fetch at `now` decides against: once a window has passed since the pending price was
 * taken, the pending price, with the last good price pending from now.
 */
export function roll(m: PriceModel, now: bigint): Reference {
  return now >= m.ref.since + WINDOW ? { price: m.ref.pending, pending: m.last, since: now } : m.ref;
}

/** The price PriceFeed gives at `now`, whether it is frozen (the last good one), and the reference it leaves. */
export function decide(m: PriceModel, now: bigint): { price: bigint; frozen: boolean; ref: Reference } {
  const ref = roll(m, now);
  if (answers(m.p) && answers(m.q)) {
    if (!within(m.p.answer, m.q.answer, MAX_DEVIATION_BPS)) return { price: m.last, frozen: true, ref };
    const price = m.p.answer;
    return { price, frozen: false, ref: { price, pending: price, since: ref.since } };
  }
  if (judge(m.p, ref.price) === "healthy") return { price: m.p.answer, frozen: false, ref };
  if (judge(m.q, ref.price) === "healthy") return { price: m.q.answer, frozen: false, ref };
  return { price: m.last, frozen: true, ref };
}

/** Writes a round on one feed as `f` says (answer, dated as said), and the model's view of it. */
export async function post(ctx: Context, which: "p" | "q", f: FeedModel, before: FeedModel) {
  const { s } = ctx;
  const mock = which === "p" ? ctx.feeds.primary : ctx.feeds.secondary;
  if (f.dating === "down") {
    await s.receipt(await mock.write.setMode([MODE.Reverting]));
    return;
  }
  if (before.dating === "down") await s.receipt(await mock.write.setMode([MODE.Normal]));
  const now = (await s.publicClient.getBlock()).timestamp;
  const at = f.dating === "stale" ? now - FAR : f.dating === "future" ? now + FAR : now;
  await s.receipt(await mock.write.pushRound([f.answer, at]));
}

/** A new round on a feed. */
export const next = (_f: FeedModel, answer: bigint, dating: Dating): FeedModel => ({ answer, dating });

/**
 * Moves the chain's clock on by a window, then writes every feed's round again as it was dated (a
 * fresh one fresh, a future one ahead), so that only the reference sees the time pass.
 */
export async function passWindow(ctx: Context, m: { feeds: PriceModel }) {
  await ctx.s.increaseTime(Number(WINDOW));
  m.feeds.advanced += WINDOW;
  for (const which of ["p", "q"] as const) {
    const f = m.feeds[which];
    if (f.dating !== "down") await post(ctx, which, f, f);
  }
}

/**
 * Anyone records the price (a keeper), so that the last good price is the one the feeds give now, and
 * the reference is what that fetch, at its block's time, leaves.
 */
export async function record(ctx: Context, m: { feeds: PriceModel; price: bigint; frozen: boolean }) {
  const { s } = ctx;
  const receipt = await s.receipt(await s.read.priceFeed.write.fetchPrice());
  const { timestamp } = await s.publicClient.getBlock({ blockNumber: receipt.blockNumber });
  const { price, frozen, ref } = decide(m.feeds, timestamp);
  if (!frozen) m.feeds.last = price;
  m.feeds.ref = ref;
  m.price = price;
  m.frozen = frozen;
}
