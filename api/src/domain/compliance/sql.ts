// The SQL with which the relays and the payouts ask compliance whether a
// subject may move, put inside their own queries (a held mint is skipped by the
// query that picks the next batch, not filtered afterwards). Apart from the
// service because these are strings and a lookup, read by modules that never
// raise, hold or decide anything.
import type { Queryable } from "../../adapters/db/index.ts";
import type { HoldableType } from "./types.ts";

/** How the payouts note on a payout's row that compliance refused it (relay/payouts.ts). */
export const REJECTED_ROW = "Rejected by compliance: ";

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
   OR EXISTS (SELECT 1 FROM payouts p WHERE p.redemption_id = ${idColumn} AND p.last_error LIKE '${REJECTED_ROW}%'))`;

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
