// The ZEC/USD price a mint or redemption will be judged at. The contracts
// refuse a stale price (StalePrice); the relay refuses first, before anything
// is queued, rather than answer "queued" and fail seconds later.
import type { Chain } from "../adapters/chain.ts";
import { DomainError } from "./errors.ts";

/** A relayed transaction lands this long after the check, at most in the usual case. */
const MARGIN_SECONDS = 30n;

export async function freshPrice(chain: Chain, what: "mints" | "redemptions"): Promise<bigint> {
  const { price, ageSeconds, maxAgeSeconds } = await chain.priceState();
  if (price <= 0n || ageSeconds + MARGIN_SECONDS > maxAgeSeconds) {
    throw new DomainError(
      "unavailable",
      "price_stale",
      "Price stale",
      `The ZEC/USD price is ${ageSeconds.toLocaleString("en")} s old; ${what} need one under ${maxAgeSeconds.toLocaleString("en")} s. Retry once the oracle is updated.`,
      { retryAfter: 60, priceAgeSeconds: Number(ageSeconds), maxPriceAgeSeconds: Number(maxAgeSeconds) },
    );
  }
  return price;
}
