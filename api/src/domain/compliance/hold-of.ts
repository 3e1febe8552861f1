// The hold that keeps a mint, a redemption or a position action from moving,
// as its answers show it: a held one otherwise looks merely slow ("queued" for
// ever), and its owner cannot tell a review from a stuck relay.
import type { Queryable } from "../../adapters/db/index.ts";
import type { HoldableType } from "./types.ts";
import { liveHoldOf } from "./store.ts";

export interface HoldView {
  /** held: an alert holds it until a screener releases or rejects it; awaiting_verdict: screening is required. */
  state: "held" | "awaiting_verdict";
  /** The alert that placed it (none while a verdict is awaited). */
  alertId: string | null;
  /** Who placed it: an agent's id, or "rules" / "payouts" for the built-in ones. */
  by: string | null;
  since: string;
}

/**
 * The hold in force on a mint, a redemption or a position action, or null. A redemption is also
 * held while a payout it was redirected to waits for review (a hold of the
 * payout, filed under the redemption).
 */
export async function holdOf(db: Queryable, type: HoldableType, id: string): Promise<HoldView | null> {
  const row = await liveHoldOf(db, type, id);
  if (!row) return null;
  return {
    state: row.state,
    alertId: row.alert_id,
    by: row.raised_by,
    since: new Date(row.updated_at).toISOString(),
  };
}
