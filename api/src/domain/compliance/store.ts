// Compliance's tables (holds, alerts, the deny list): the statements the hold
// desk, the alert book and the rules agent read and write them with, and the
// pieces of SQL with which the relays and the payouts ask whether a subject
// may move, put inside their own queries (a held mint is skipped by the query
// that picks the next batch, not filtered afterwards).
import type { Queryable } from "../../adapters/db/index.ts";
import { notedRejected } from "../payouts/sql.ts";
import type {
  AlertFilters,
  AlertStatus,
  HistoryEntry,
  HoldState,
  HoldableType,
  Severity,
  Subject,
  SubjectType,
} from "./types.ts";

/**
 * SQL: true when the payout `idColumn` (numeric, its on-chain id) was refused
 * by compliance — its redemption's hold or its own hold (a redirected payout)
 * rejected, or failed by the payouts for that reason. A redirect of it to an
 * address must be screened again.
 */
export const refusedByCompliance = (idColumn: string) =>
  `(EXISTS (SELECT 1 FROM redemption_requests r JOIN compliance_holds h
       ON h.subject_type = 'redemption' AND h.subject_id = r.id
     WHERE r.redemption_id::numeric = ${idColumn} AND h.state = 'rejected')
   OR EXISTS (SELECT 1 FROM compliance_holds h
     WHERE h.subject_type = 'payout' AND h.subject_id = (${idColumn})::text AND h.state = 'rejected')
   OR ${notedRejected(idColumn)})`;

/** Whether compliance refused the payout `payoutId` (see refusedByCompliance). */
export async function isRefusedByCompliance(db: Queryable, payoutId: bigint): Promise<boolean> {
  const [row] = await db.query(`SELECT 1 WHERE ${refusedByCompliance("$1::numeric")}`, [payoutId.toString()]);
  return row !== undefined;
}

/** The states in which a mint, a redemption or a position action does not move. */
export const BLOCKING_STATES = ["awaiting_verdict", "held", "rejected"] as const;

/** SQL: true when the subject `idColumn` of `type` is not kept from moving by a hold. */
export const notHeld = (type: HoldableType, idColumn: string) =>
  `NOT EXISTS (SELECT 1 FROM compliance_holds h WHERE h.subject_type = '${type}' AND h.subject_id = ${idColumn}
     AND h.state IN ('awaiting_verdict', 'held', 'rejected'))`;

/**
 * SQL: the compliance hold of a payout's redemption request, or of the payout
 * itself (one redirected from a payout compliance refused), is in one of `states`.
 */
export const holdIn = (states: string) =>
  `(EXISTS (SELECT 1 FROM redemption_requests r JOIN compliance_holds h
     ON h.subject_type = 'redemption' AND h.subject_id = r.id
     WHERE r.redemption_id::numeric = payouts.redemption_id AND h.state IN (${states}))
   OR EXISTS (SELECT 1 FROM compliance_holds h WHERE h.subject_type = 'payout'
     AND h.subject_id = payouts.redemption_id::text AND h.state IN (${states})))`;

/** Those of `ids` (subjects of `type`) a hold keeps from moving. */
export async function heldAmong(tx: Queryable, type: HoldableType, ids: readonly string[]): Promise<string[]> {
  const held = await tx.query<{ id: string }>(
    `SELECT u.id FROM unnest($1::text[]) AS u(id) WHERE NOT ${notHeld(type, "u.id")}`,
    [ids],
  );
  return held.map((row) => row.id);
}

/** Whether no hold keeps the subject `id` of `type` from moving. */
export async function isFree(tx: Queryable, type: HoldableType, id: string): Promise<boolean> {
  const [free] = await tx.query<{ free: boolean }>(`SELECT ${notHeld(type, "$1")} AS free`, [id]);
  return free?.free === true;
}

/** A hold's subject: a mint, a redemption, a position action, or a payout. */
interface HoldSubject {
  type: string;
  id: string;
}

/**
 * The account's hold on payout `payoutId`, locked, with the payout's status
 * (null before the payouts have seen it).
 */
export async function lockPayoutHold(
  tx: Queryable,
  accountId: string,
  payoutId: string,
): Promise<{ status: string | null } | undefined> {
  const [hold] = await tx.query<{ status: string | null }>(
    `SELECT p.status FROM compliance_holds h LEFT JOIN payouts p ON p.redemption_id::text = h.subject_id
     WHERE h.subject_type = 'payout' AND h.subject_id = $1 AND h.account_id = $2 FOR UPDATE OF h`,
    [payoutId, accountId],
  );
  return hold;
}

/** The subject's hold state, if it was ever held. */
export async function holdStateOf(tx: Queryable, subject: HoldSubject): Promise<{ state: HoldState } | undefined> {
  const [previous] = await tx.query<{ state: HoldState }>(
    "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2",
    [subject.type, subject.id],
  );
  return previous;
}

/** The subject's hold, locked, if any. */
export async function lockHoldState(tx: Queryable, subject: HoldSubject): Promise<{ state: HoldState } | undefined> {
  const [hold] = await tx.query<{ state: HoldState }>(
    "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 FOR UPDATE",
    [subject.type, subject.id],
  );
  return hold;
}

/** Holds the subject (or holds it again), keeping an alert already attached when none is given. */
export async function writeHold(
  tx: Queryable,
  accountId: string,
  subject: HoldSubject,
  state: "held" | "awaiting_verdict",
  alertId: string | null,
  deadline: Date | null,
): Promise<void> {
  await tx.query(
    `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state, alert_id, verdict_deadline)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (subject_type, subject_id) DO UPDATE SET state = EXCLUDED.state,
       alert_id = coalesce(EXCLUDED.alert_id, compliance_holds.alert_id), updated_at = now()`,
    [subject.type, subject.id, accountId, state, alertId, deadline],
  );
}

/** Holds a redirected payout, filed under its redemption request; false when it already was. */
export async function insertPayoutHold(
  tx: Queryable,
  accountId: string,
  payout: { id: string; redemptionRequestId: string },
): Promise<boolean> {
  const [placed] = await tx.query(
    `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state, redemption_request_id)
     VALUES ('payout', $1, $2, 'held', $3) ON CONFLICT (subject_type, subject_id) DO NOTHING RETURNING 1`,
    [payout.id, accountId, payout.redemptionRequestId],
  );
  return placed !== undefined;
}

/** Names the alert that holds a redirected payout. */
export async function attachAlertToPayoutHold(tx: Queryable, payoutId: string, alertId: string): Promise<void> {
  await tx.query("UPDATE compliance_holds SET alert_id = $2 WHERE subject_type = 'payout' AND subject_id = $1", [
    payoutId,
    alertId,
  ]);
}

/** Up to 50 holds whose verdict is overdue, oldest deadline first. */
export function overdueVerdicts(
  db: Queryable,
): Promise<{ subject_type: HoldableType; subject_id: string; account_id: string }[]> {
  return db.query<{ subject_type: HoldableType; subject_id: string; account_id: string }>(
    `SELECT subject_type, subject_id, account_id FROM compliance_holds
     WHERE state = 'awaiting_verdict' AND verdict_deadline <= now() ORDER BY verdict_deadline LIMIT 50`,
  );
}

/** Locks the subject's hold if it still waits for a verdict; false when a verdict came meanwhile. */
export async function lockAwaitingHold(tx: Queryable, subject: HoldSubject): Promise<boolean> {
  const [still] = await tx.query(
    `SELECT 1 FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 AND state = 'awaiting_verdict'
     FOR UPDATE`,
    [subject.type, subject.id],
  );
  return still !== undefined;
}

/** Releases the subject's hold, saying who decided. */
export async function releaseHold(tx: Queryable, subject: HoldSubject, by: string): Promise<void> {
  await tx.query(
    `UPDATE compliance_holds SET state = 'released', decided_by = $3, updated_at = now()
     WHERE subject_type = $1 AND subject_id = $2`,
    [subject.type, subject.id, by],
  );
}

/** Rejects the subject's hold, saying who decided and why (a reason code). */
export async function rejectHold(tx: Queryable, subject: HoldSubject, by: string, reasonCode: string): Promise<void> {
  await tx.query(
    `UPDATE compliance_holds SET state = 'rejected', decided_by = $3, reason_code = $4, updated_at = now()
     WHERE subject_type = $1 AND subject_id = $2`,
    [subject.type, subject.id, by, reasonCode],
  );
}

/** Decides a redirected payout's hold; the redemption request it is filed under. */
export async function decidePayoutHold(
  tx: Queryable,
  payoutId: string,
  state: "released" | "rejected",
  by: string,
  reasonCode: string | null,
): Promise<{ redemption_request_id: string } | undefined> {
  const [hold] = await tx.query<{ redemption_request_id: string }>(
    `UPDATE compliance_holds SET state = $2, decided_by = $3, reason_code = $4, updated_at = now()
     WHERE subject_type = 'payout' AND subject_id = $1 RETURNING redemption_request_id`,
    [payoutId, state, by, reasonCode],
  );
  return hold;
}

/**
 * The hold in force on a subject, with who placed it: a redemption's own, or
 * that of a payout it was redirected to (filed under the redemption).
 */
export async function liveHoldOf(
  db: Queryable,
  type: HoldableType,
  id: string,
): Promise<
  | { state: "held" | "awaiting_verdict"; alert_id: string | null; raised_by: string | null; updated_at: Date | string }
  | undefined
> {
  const [row] = await db.query<{
    state: "held" | "awaiting_verdict";
    alert_id: string | null;
    raised_by: string | null;
    updated_at: Date | string;
  }>(
    `SELECT h.state, h.alert_id, a.raised_by, h.updated_at FROM compliance_holds h
     LEFT JOIN compliance_alerts a ON a.id = h.alert_id
     WHERE ((h.subject_type = $1 AND h.subject_id = $2)
         OR ($1 = 'redemption' AND h.subject_type = 'payout' AND h.redemption_request_id = $2))
       AND h.state IN ('held', 'awaiting_verdict')
     ORDER BY h.updated_at DESC LIMIT 1`,
    [type, id],
  );
  return row;
}

/** Why the deny list names `address` (lower case), if it does. */
export async function denyListed(tx: Queryable, address: string): Promise<{ reason: string } | undefined> {
  const [listed] = await tx.query<{ reason: string }>("SELECT reason FROM compliance_deny_list WHERE address = $1", [
    address,
  ]);
  return listed;
}

// The alert book's statements (alerts.ts).

export interface AlertRow {
  id: string;
  raised_by: string;
  subject_type: SubjectType;
  subject_id: string;
  severity: Severity;
  category: string;
  reason: string;
  action: "none" | "hold";
  status: AlertStatus;
  close_reason: string | null;
  history: HistoryEntry[] | string;
  hold_state: HoldState | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const SELECT_ALERT = `SELECT a.*, h.state AS hold_state FROM compliance_alerts a
  LEFT JOIN compliance_holds h ON h.alert_id = a.id AND h.subject_type = a.subject_type AND h.subject_id = a.subject_id`;

/** Writes an open alert; `history` is its first line, as JSON. */
export async function insertAlert(
  tx: Queryable,
  alert: {
    id: string;
    accountId: string;
    environment: string;
    raisedBy: string;
    subject: Subject;
    severity: Severity;
    category: string;
    reason: string;
    action: "none" | "hold";
    history: string;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO compliance_alerts (id, account_id, environment, raised_by, subject_type, subject_id, severity,
         category, reason, action, status, history)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11)`,
    [
      alert.id,
      alert.accountId,
      alert.environment,
      alert.raisedBy,
      alert.subject.type,
      alert.subject.id,
      alert.severity,
      alert.category,
      alert.reason,
      alert.action,
      alert.history,
    ],
  );
}

/**
 * The account's alerts in `environment` that match every filter given, with
 * their holds' states, newest first, at most `limit`; `startingAfter` (an
 * alert's id) starts after that alert.
 */
export function listAlerts(
  db: Queryable,
  accountId: string,
  environment: string,
  filters: AlertFilters,
): Promise<AlertRow[]> {
  const where = ["a.account_id = $1", "a.environment = $2"];
  const values: unknown[] = [accountId, environment];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace("?", `$${values.length}`));
  };
  if (filters.status) add("a.status = ?", filters.status);
  if (filters.severity) add("a.severity = ?", filters.severity);
  if (filters.subjectType) add("a.subject_type = ?", filters.subjectType);
  if (filters.subjectId) add("a.subject_id = ?", filters.subjectId);
  if (filters.raisedBy) add("a.raised_by = ?", filters.raisedBy);
  if (filters.startingAfter) {
    add("(a.created_at, a.id) < (SELECT created_at, id FROM compliance_alerts WHERE id = ?)", filters.startingAfter);
  }
  values.push(filters.limit);
  return db.query<AlertRow>(
    `${SELECT_ALERT} WHERE ${where.join(" AND ")} ORDER BY a.created_at DESC, a.id DESC LIMIT $${values.length}`,
    values,
  );
}

/** The account's alert, with its hold's state. */
export async function findAlert(
  db: Queryable,
  alertId: string,
  accountId: string,
  environment: string,
): Promise<AlertRow | undefined> {
  const [row] = await db.query<AlertRow>(
    `${SELECT_ALERT} WHERE a.id = $1 AND a.account_id = $2 AND a.environment = $3`,
    [alertId, accountId, environment],
  );
  return row;
}

/** The account's alert, locked for a change (no hold state: the row alone). */
export async function lockAlert(
  tx: Queryable,
  alertId: string,
  accountId: string,
  environment: string,
): Promise<AlertRow | undefined> {
  const [row] = await tx.query<AlertRow>(
    `SELECT * FROM compliance_alerts WHERE id = $1 AND account_id = $2 AND environment = $3 FOR UPDATE`,
    [alertId, accountId, environment],
  );
  return row;
}

/** Appends `entries` (JSON) to the alert's history and, when `status` is given, moves it with its close reason. */
export async function appendAlertHistory(
  tx: Queryable,
  alertId: string,
  entries: string,
  status: AlertStatus | null,
  closeReason: string | null,
): Promise<void> {
  await tx.query(
    `UPDATE compliance_alerts SET history = history || $2::jsonb, status = coalesce($3, status),
         close_reason = CASE WHEN $3::text IS NULL THEN close_reason ELSE $4 END, updated_at = now()
       WHERE id = $1`,
    [alertId, entries, status, closeReason],
  );
}
