// A breaker per agent. A receiver that never answers holds one of the
// worker's slots for a whole timeout at every attempt; its share of the pool
// (WEBHOOK_AGENT_CONCURRENCY) keeps that from reaching anyone else, and the
// breaker keeps it from costing the machine forever: after `timeouts` attempts
// in a row without an answer, the agent is paused (nothing is claimed for it),
// then given one attempt at a time until one is answered. Its deliveries stay
// pending meanwhile, their attempts unspent. The state is in the database, so
// that a restart or another replica taking the lease keeps the pause.
import type { Queryable } from "../../adapters/db/index.ts";
import { countTimeout, lockBreaker, openBreaker, resetBreaker } from "../../domain/agents/store.ts";

export interface BreakerSettings {
  /** Attempts in a row without an answer within the timeout that open the breaker. */
  timeouts: number;
  /** The first pause; each opening after it, with no answer in between, doubles it. */
  cooldownMs: number;
  maxCooldownMs: number;
}

/** The pause after the breaker's `trips`th opening in a row: cooldown × 2^(trips−1), at most the maximum. */
export function breakerPauseMs(trips: number, settings: BreakerSettings): number {
  return Math.min(settings.cooldownMs * 2 ** Math.min(Math.max(trips - 1, 0), 30), settings.maxCooldownMs);
}

/**
 * Records an attempt's outcome on its agent's breaker, in the transaction that
 * records the attempt. `sawOpenedAt` is the breaker's last opening as the
 * claim read it (`opened_at` as text, exact to the microsecond; null if it had
 * none): a timeout of an attempt whose claim did not see the breaker's latest
 * opening was in flight then, and that opening already counted it. A clock
 * cannot say this: a claim can start after the opening's time was taken and
 * still read the breaker closed, until the opening commits.
 */
export async function recordOnBreaker(
  tx: Queryable,
  attempt: { agentId: string; webhookUrl: string; sawOpenedAt: string | null; timedOut: boolean },
  settings: BreakerSettings,
): Promise<void> {
  const { agentId, webhookUrl } = attempt;
  if (!attempt.timedOut) {
    // It answered, whatever it said, or failed at once: either way it does not hold slots.
    await resetBreaker(tx, agentId);
    return;
  }
  // The row first, then locked: attempts of one agent finishing together count one after another.
  const row = await lockBreaker(tx, agentId, webhookUrl, attempt.sawOpenedAt);
  if (!row) return;
  const same = row.webhook_url === webhookUrl;
  if (same && row.counted) return;
  const timeouts = (same ? Number(row.timeouts) : 0) + 1;
  let trips = same ? Number(row.trips) : 0;
  // Once open, the breaker lets one attempt through after the pause: its timeout opens it again at once.
  if (trips === 0 && timeouts < settings.timeouts) {
    await countTimeout(tx, agentId, webhookUrl, timeouts);
    return;
  }
  trips += 1;
  // The clock, not the transaction's start: the pause runs from when the lock was had.
  await openBreaker(tx, agentId, webhookUrl, trips, breakerPauseMs(trips, settings));
}
