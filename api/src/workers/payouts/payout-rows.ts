// The payouts table: a payout's row (its state in relay/payouts.ts), the SQL
// the worker moves it with (a compare-and-set on its version), the holds of
// compliance it is checked against, the custody's ledger line of a payment,
// and an operator's verdict on a payout held for review.
import { formatZec } from "@zsd/sdk/units";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { REDIRECT_HOW, failureReason, heldReason } from "../../domain/payouts/redirects.ts";
import { displayTxId } from "../../domain/txids.ts";

export type PayoutStatus =
  "pending" | "sending" | "sent" | "settling" | "completed" | "failing" | "held" | "redirected" | "review";

export interface PayoutRow {
  redemption_id: string;
  owner: string;
  amount: string;
  zat_due: string;
  /** The address custody opened from the sealed one; null when it could not (the payout is failed). */
  withdraw_address: string | null;
  sealed_address_hash: string | null;
  /** The envelope from the PayoutRequested event (null on rows older than migration 24). */
  sealed_address: `0x${string}` | null;
  status: PayoutStatus;
  attempts: number;
  version: number;
  operation_id: string | null;
  zcash_txid: string | null;
  last_error: string | null;
}

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

/** The first rows (by redemption id) in `status`: a pass moves at most this many of each. */
export function payoutRows(db: Queryable, status: PayoutStatus): Promise<PayoutRow[]> {
  return db.query<PayoutRow>("SELECT * FROM payouts WHERE status = $1 ORDER BY redemption_id LIMIT 20", [status]);
}

/**
 * Moves a payout on, only if nobody moved it since this pass read it (same
 * version). False means another pass got there first: the caller stops.
 * A payout that ends (completed, or held) outside a transaction is told, in
 * one, to the account that asked for its redemption.
 */
export async function movePayout(
  db: Database,
  compliance: ComplianceService | undefined,
  p: PayoutRow,
  to: PayoutStatus,
  fields: Record<string, unknown> = {},
  via: Queryable = db,
): Promise<boolean> {
  if (compliance && (to === "completed" || to === "held") && via === db) {
    // The end of a redemption the API relayed is told to its account's agents, in the same transaction.
    const moved = await db.transaction(async (tx) => {
      if (!(await movePayout(db, compliance, p, to, fields, tx))) return false;
      // A redirected payout held for review is told as its redemption's.
      const [request] = await tx.query<{ id: string; account_id: string }>(
        `SELECT id, account_id FROM redemption_requests WHERE redemption_id = $1
         UNION ALL
         SELECT redemption_request_id, account_id FROM compliance_holds
         WHERE subject_type = 'payout' AND subject_id = $1 AND redemption_request_id IS NOT NULL
         LIMIT 1`,
        [p.redemption_id],
      );
      if (request) {
        await compliance.emitIn(
          tx,
          request.account_id,
          to === "completed" ? "redemption.paid" : "redemption.failed",
          to === "completed"
            ? {
                redemptionId: request.id,
                zecPaid: formatZec(BigInt(p.zat_due)),
                zcashTxId: displayTxId(p.zcash_txid),
              }
            : {
                redemptionId: request.id,
                failureCode: failureReason(p),
                failureReason: heldReason(failureReason(p)),
                zecHeld: formatZec(BigInt(p.zat_due)),
                payoutId: p.redemption_id,
                redirect: REDIRECT_HOW,
              },
        );
      }
      return true;
    });
    if (moved) compliance.queued();
    return moved;
  }
  const keys = Object.keys(fields);
  const sets = keys.map((k, i) => `, ${k} = $${i + 4}`).join("");
  const rows = await via.query(
    `UPDATE payouts SET status = $2${sets}, version = version + 1, updated_at = now()
     WHERE redemption_id = $1 AND version = $3 RETURNING 1`,
    [p.redemption_id, to, p.version, ...keys.map((k) => fields[k])],
  );
  if (rows.length === 0) return false;
  Object.assign(p, fields, { status: to, version: p.version + 1 });
  return true;
}

/** The screener's reason code for a rejected redemption. */
export async function rejectionCode(db: Queryable, p: PayoutRow): Promise<string> {
  const [hold] = await db.query<{ reason_code: string | null }>(
    `SELECT h.reason_code FROM redemption_requests r JOIN compliance_holds h
       ON h.subject_type = 'redemption' AND h.subject_id = r.id WHERE r.redemption_id = $1
     UNION ALL
     SELECT reason_code FROM compliance_holds WHERE subject_type = 'payout' AND subject_id = $1 LIMIT 1`,
    [p.redemption_id],
  );
  return hold?.reason_code ?? "rejected";
}

/** The custody's ZEC ledger: one payout line per redemption. */
export async function recordPayout(db: Queryable, redemptionId: string, zat: string, zcashTxId: string): Promise<void> {
  await db.query(
    `INSERT INTO custody_ledger (kind, amount_zat, redemption_id, zcash_txid) VALUES ('payout', $1, $2, $3)
     ON CONFLICT (redemption_id) WHERE kind = 'payout' DO NOTHING`,
    [zat, redemptionId, zcashTxId],
  );
}

/**
 * An operator's verdict on a payout held for review, after looking in the
 * wallet (its open operations, and its transactions for the memo
 * `zsd-redemption:<id>`): paid (with the Zcash txid; the worker then settles
 * it on-chain) or not paid (the worker sends it again). Returns false when it
 * is not in review.
 */
export async function resolveReview(
  db: Database,
  redemptionId: bigint,
  verdict: { paid: `0x${string}` } | { paid: false },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<PayoutRow>(
      `UPDATE payouts SET status = $2, zcash_txid = $3, operation_id = NULL, next_attempt_at = now(),
         last_error = NULL, version = version + 1, updated_at = now()
       WHERE redemption_id = $1 AND status = 'review' RETURNING *`,
      [redemptionId.toString(), verdict.paid ? "settling" : "pending", verdict.paid || null],
    );
    if (!row) return false;
    if (verdict.paid) await recordPayout(tx, row.redemption_id, row.zat_due, verdict.paid);
    return true;
  });
}
