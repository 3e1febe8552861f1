// The ZEC/USD price a mint or redemption will be judged at. The contracts
// refuse to act on a frozen price (PriceFrozen: neither feed trusted, so the
// last good price stands); the relay refuses first, before anything is queued,
// rather than answer "queued" and fail seconds later.
import type { Chain } from "../../adapters/chain.ts";
import { DomainError } from "../errors.ts";

/** A relayed transaction lands this long after the check, at most in the usual case. */
const MARGIN_SECONDS = 30n;

export async function freshPrice(chain: Chain, what: "mints" | "redemptions"): Promise<bigint> {
  const { price, frozen, ageSeconds, maxAgeSeconds } = await chain.priceState();
  if (!frozen && price > 0n && ageSeconds + MARGIN_SECONDS <= maxAgeSeconds) return price;
  const age = `The ZEC/USD price is ${ageSeconds.toLocaleString("en")} s old`;
  const need = `${what} need one under ${maxAgeSeconds.toLocaleString("en")} s`;
  let detail = `${age}; ${need}. Retry once the oracle is updated.`;
  if (frozen) {
    // Stale, broken, beyond the reference alone, or the two disagreeing: say which, the fix differs.
    const feeds = await chain.feedConditions();
    const why = feeds.bothAnswer ? ", and the two disagree" : "";
    detail =
      `${age}; ${need} from a trusted feed, and it is frozen at its last good value: ` +
      `the primary feed is ${feeds.primary}, the second ${feeds.secondary}${why}. Retry once a feed is updated.`;
  }
  throw new DomainError("unavailable", "price_stale", "Price stale", detail, {
    retryAfter: 60,
    priceAgeSeconds: Number(ageSeconds),
    maxPriceAgeSeconds: Number(maxAgeSeconds),
  });
}
