import type { Queryable } from "../../adapters/db/index.ts";

export type RelayTable =
  | "mints"
  | "redemption_requests"
  | "governance_votes"
  | "governance_delegations"
  | "governance_proposal_actions"
  | "position_actions"
  | "payout_redirects";

/** A column the row must still hold for an update to apply: its state, or the transaction a pass read. */
export interface RowGuard {
  column: "status" | "relay_status" | "tx_hash";
  value: string;
}

/**
 * Updates a relay job's row, optionally only while `guard` still holds (so a
 * pass never overwrites a state another pass reached first). False if no row
 * was updated.
 */
export async function updateRow(
  db: Queryable,
  table: RelayTable,
  id: string,
  fields: Record<string, unknown>,
  guard?: RowGuard | RowGuard[],
): Promise<boolean> {
  const keys = Object.keys(fields);
  const assignments = keys.map((k, i) => `${k} = $${i + 2}`).join(", ");
  const guards = guard === undefined ? [] : Array.isArray(guard) ? guard : [guard];
  const where = guards.map((g, i) => ` AND ${g.column} = $${keys.length + 2 + i}`).join("");
  const rows = await db.query(
    `UPDATE ${table} SET ${assignments}, updated_at = now() WHERE id = $1${where} RETURNING id`,
    [id, ...keys.map((k) => fields[k]), ...guards.map((g) => g.value)],
  );
  return rows.length > 0;
}
