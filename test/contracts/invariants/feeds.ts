// The two price feeds the suite drives (breakable mock aggregators behind the deployed PriceFeed) and
// the model of what PriceFeed makes of them, written from its rule and not from its code: a healthy
// primary is the price; a suspect one gives way to a second that answers and agrees with it; a broken
// one to a healthy second within a jump of the last good price; otherwise the last good price, frozen.
import { BPS } from "./constants.ts";
import type { Context } from "./context.ts";
import { MODE } from "../../helpers/mock-aggregator.ts";

/** The bounds the suite deploys with (scripts/deploy.ts's defaults). */
export const MAX_JUMP_BPS = 5_000n;
export const MAX_DEVIATION_BPS = 500n;
/** Far from the 1-hour age bound either way, so that no judgement depends on the seconds a step takes. */
const FAR = 7_200n;

/** How a feed's latest round was written: fresh, two hours old, two hours ahead, or the feed reverting. */
export type Dating = "fresh" | "stale" | "future" | "down";
export interface FeedModel {
  answer: bigint;
  /** The round before's answer; 0 when there is none or it is not positive (the jump is then measured from the last good price). */
  prev: bigint;
  dating: Dating;
}
export type Condition = "healthy" | "suspect" | "broken";
export interface PriceModel {
  p: FeedModel;
  q: FeedModel;
  last: bigint;
}

const within = (a: bigint, b: bigint, bps: bigint) => {
  const [hi, lo] = a > b ? [a, b] : [b, a];
  return lo !== 0n && (hi - lo) * BPS <= bps * lo;
};

export function judge(f: FeedModel, last: bigint): Condition {
  if (f.dating !== "fresh" || f.answer <= 0n) return "broken";
  const from = f.prev > 0n ? f.prev : last;
  return from !== 0n && !within(f.answer, from, MAX_JUMP_BPS) ? "suspect" : "healthy";
}

/** The price PriceFeed gives, and whether it is frozen (the last good one). */
export function decide(m: PriceModel): { price: bigint; frozen: boolean } {
  const p = judge(m.p, m.last);
  if (p === "healthy") return { price: m.p.answer, frozen: false };
  const q = judge(m.q, m.last);
  const second =
    p === "suspect"
      ? q !== "broken" && within(m.p.answer, m.q.answer, MAX_DEVIATION_BPS)
      : q === "healthy" && within(m.q.answer, m.last, MAX_JUMP_BPS);
  return second ? { price: m.q.answer, frozen: false } : { price: m.last, frozen: true };
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

/** A new round on a feed: its predecessor is the feed's latest round (unusable if not positive). */
export const next = (f: FeedModel, answer: bigint, dating: Dating): FeedModel => ({
  answer,
  prev: f.answer > 0n ? f.answer : 0n,
  dating,
});

/**
 * Anyone records the price (a keeper), so that the last good price is the one the feeds give now. Twice:
 * a recorded price can change the judgement it came from (a primary whose round before is unusable is
 * judged from the last good price, so once the second feed's agreeing answer is recorded, the primary
 * is within a jump of it and is the price again); the second recording is where both settle.
 */
export async function record(ctx: Context, m: { feeds: PriceModel; price: bigint; frozen: boolean }) {
  const { s } = ctx;
  for (let i = 0; i < 2; i++) {
    await s.receipt(await s.read.priceFeed.write.fetchPrice());
    const { price, frozen } = decide(m.feeds);
    if (!frozen) m.feeds.last = price;
    m.price = price;
    m.frozen = frozen;
  }
}
