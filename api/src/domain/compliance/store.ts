// Compliance's tables (holds, alerts, the deny list): the statements the hold
// desk, the alert book and the rules agent read and write them with, and the
// pieces of SQL with which the relays and the payouts ask whether a subject
// may move, put inside their own queries (a held mint is skipped by the query
// that picks the next batch, not filtered afterwards).
import type { Queryable } from "../../adapters/db/index.ts";
import { notedRejected } from "../payouts/sql.ts";
import type { HoldState, HoldableType } from "./types.ts";

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
