// A relay job's row, for any of the job tables: the jobs in a state, the lock
// a send takes, and the update guarded by the state a pass read. It knows no
// table, only how a job queue's rows move: the store that owns a job table
// binds these to it (jobRows), and the relays move its rows through that.
import type { Queryable } from "./index.ts";

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
async function updateRow(
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

/** The jobs of `table` in `status` (and `where`, a condition the kind adds), oldest first, at most 50. */
function jobsIn<Row>(db: Queryable, table: RelayTable, status: string, where = ""): Promise<Row[]> {
  return db.query<Row>(`SELECT * FROM ${table} WHERE status = $1${where} ORDER BY created_at LIMIT 50`, [status]);
}

/** Locks job `id` of `table` if it is still queued; false when it is not. */
async function lockQueuedJob(tx: Queryable, table: RelayTable, id: string): Promise<boolean> {
  const [queued] = await tx.query(`SELECT 1 FROM ${table} WHERE id = $1 AND status = 'queued' FOR UPDATE`, [id]);
  return queued !== undefined;
}

/** Whether `condition` (SQL over a job's id, `$1`) holds for job `id`. */
export async function holdsFor(tx: Queryable, condition: (id: string) => string, id: string): Promise<boolean> {
  const [row] = await tx.query<{ free: boolean }>(`SELECT ${condition("$1")} AS free`, [id]);
  return row?.free === true;
}

/** The job-row operations of one table, as its owning store hands them to the relays. */
export interface JobRows {
  /** The table's id column, qualified: for a condition a relay adds to the queue's query (`where`). */
  readonly idColumn: string;
  /** Updates job `id`, optionally only while `guard` still holds; false if no row was updated. */
  update(db: Queryable, id: string, fields: Record<string, unknown>, guard?: RowGuard | RowGuard[]): Promise<boolean>;
  /** The jobs in `status` (and `where`), oldest first, at most 50. */
  jobsIn<Row>(db: Queryable, status: string, where?: string): Promise<Row[]>;
  /** Locks job `id` if it is still queued; false when it is not. */
  lockQueued(tx: Queryable, id: string): Promise<boolean>;
}

/** The job-row operations bound to `table`: for its owning store alone to call. */
export function jobRows(table: RelayTable): JobRows {
  return {
    idColumn: `${table}.id`,
    update: (db, id, fields, guard) => updateRow(db, table, id, fields, guard),
    jobsIn: <Row>(db: Queryable, status: string, where?: string) => jobsIn<Row>(db, table, status, where),
    lockQueued: (tx, id) => lockQueuedJob(tx, table, id),
  };
}
