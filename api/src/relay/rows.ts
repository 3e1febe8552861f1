import type { Queryable } from "../adapters/db/index.ts";

export type RelayTable =
  | "mints"
  | "redemption_requests"
  | "governance_votes"
  | "governance_delegations"
  | "position_actions"
  | "payout_redirects";

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
  guard?: { column: "status" | "relay_status"; value: string },
): Promise<boolean> {
  const keys = Object.keys(fields);
  const assignments = keys.map((k, i) => `${k} = $${i + 2}`).join(", ");
  const where = guard ? ` AND ${guard.column} = $${keys.length + 2}` : "";
  const rows = await db.query(
    `UPDATE ${table} SET ${assignments}, updated_at = now() WHERE id = $1${where} RETURNING id`,
    [id, ...keys.map((k) => fields[k]), ...(guard ? [guard.value] : [])],
  );
  return rows.length > 0;
}
