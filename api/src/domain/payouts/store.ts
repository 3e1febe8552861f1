// The payouts and payout_redirects tables: every statement that reads or
// writes them is here, for the payout worker, the redirect relay, the
// redirect and redemption services, compliance, the reserves watch, the
// metrics and the operator's tool alike. A payout's row moves by a
// compare-and-set on its version (movePayout); its state's words are in
// status.ts.
import type { Hex } from "viem";
import { formatZec } from "@zsd/sdk/units";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { jobRows } from "../../adapters/db/rows.ts";
import { holdIn } from "../compliance/store.ts";
import { recordPayout } from "../../adapters/custody/ledger.ts";
import { displayTxId } from "../txids.ts";
import { type PayoutStatus, REDIRECT_HOW, failureReason, heldReason } from "./status.ts";

/** A redirect's row as the redirect relay moves it. */
export const redirectRows = jobRows("payout_redirects");

export type { PayoutStatus } from "./status.ts";

/**
 * What a payout's end is told through: the compliance service's event
 * outbox (its emitIn and queued), named here by shape so that the store
 * needs nothing of the service that uses it.
 */
export interface PayoutEvents {
  emitIn(tx: Queryable, accountId: string, type: string, data: Record<string, unknown>): Promise<unknown>;
  queued(): void;
}

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
  compliance: PayoutEvents | undefined,
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

/** The pending payouts a screener rejected before they were paid (the worker fails them on-chain). */
export function rejectedPending(db: Queryable): Promise<PayoutRow[]> {
  return db.query<PayoutRow>(
    `SELECT * FROM payouts WHERE status = 'pending' AND ${holdIn("'rejected'")} ORDER BY redemption_id LIMIT 20`,
  );
}

/** Whether a payout is with the wallet now (one at a time, so that two never compete for its notes). */
export async function payoutInFlight(db: Queryable): Promise<boolean> {
  const [inFlight] = await db.query("SELECT 1 FROM payouts WHERE status IN ('sending', 'sent') LIMIT 1");
  return inFlight !== undefined;
}

/** The next pending payout due, skipping those compliance holds (or waits on) when `screened`. */
export async function nextPending(db: Queryable, screened: boolean): Promise<PayoutRow | undefined> {
  // A redemption held by compliance (or waiting for a verdict) is not paid until it is released.
  const held = screened ? ` AND NOT ${holdIn("'awaiting_verdict', 'held', 'rejected'")}` : "";
  const [next] = await db.query<PayoutRow>(
    `SELECT * FROM payouts WHERE status = 'pending' AND next_attempt_at <= now()${held}
     ORDER BY redemption_id LIMIT 1`,
  );
  return next;
}

/**
 * Writes a step's trouble on the row, unless it is failing: a failing row's
 * last_error says why it is failed (failureReason reads it), and a retried
 * failure must not say "payout_failed".
 */
export async function noteTrouble(db: Queryable, redemptionId: string, message: string): Promise<void> {
  await db.query(
    "UPDATE payouts SET last_error = $2, updated_at = now() WHERE redemption_id = $1 AND status <> 'failing'",
    [redemptionId, message],
  );
}

/** The address custody opened, late, from the row's sealed address. */
export async function setWithdrawAddress(db: Queryable, redemptionId: string, address: string): Promise<void> {
  await db.query("UPDATE payouts SET withdraw_address = $2 WHERE redemption_id = $1", [redemptionId, address]);
}

/** Leaves the wallet's operation id on a row another replica took into review meanwhile, for the operator. */
export async function leaveOperationForReview(db: Queryable, redemptionId: string, operationId: string): Promise<void> {
  await db.query(
    "UPDATE payouts SET operation_id = $2 WHERE redemption_id = $1 AND status = 'review' AND operation_id IS NULL",
    [redemptionId, operationId],
  );
}

/**
 * Whether a screener holds the payout, read after locking what a hold locks
 * before it reads the payout (its redemption request, then its own hold): a
 * hold committed while we waited is seen here, and a hold after us finds the
 * payout no longer pending. Inside `tx`, whose locks last until it ends.
 */
export async function heldAfterLocking(tx: Queryable, redemptionId: string): Promise<boolean> {
  await tx.query("SELECT 1 FROM redemption_requests WHERE redemption_id = $1 FOR UPDATE", [redemptionId]);
  // The same for a redirected payout's own hold: a screener's decision locks it first too.
  await tx.query("SELECT 1 FROM compliance_holds WHERE subject_type = 'payout' AND subject_id = $1 FOR UPDATE", [
    redemptionId,
  ]);
  const [held] = await tx.query(
    `SELECT 1 FROM payouts WHERE redemption_id = $1 AND ${holdIn("'awaiting_verdict', 'held', 'rejected'")}`,
    [redemptionId],
  );
  return held !== undefined;
}

/** Which of `ids` (on-chain payout ids) have a row already. */
export async function recordedPayouts(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx.query<{ id: string }>(
    "SELECT redemption_id::text AS id FROM payouts WHERE redemption_id = ANY($1::numeric[])",
    [ids],
  );
  return new Set(rows.map((row) => row.id));
}

/** A payout found on-chain, as its row starts ("pending"); false when it has one already. */
export async function insertPayout(
  tx: Queryable,
  p: {
    id: string;
    owner: string;
    amount: string;
    zatDue: string;
    withdrawAddress: string | null;
    sealedAddressHash: string;
    sealedAddress: string;
    lastError: string | null;
    requestTxHash: string;
  },
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO payouts (redemption_id, owner, amount, zat_due, withdraw_address, sealed_address_hash,
       sealed_address, last_error, request_tx_hash, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending') ON CONFLICT (redemption_id) DO NOTHING
     RETURNING redemption_id`,
    [
      p.id,
      p.owner,
      p.amount,
      p.zatDue,
      p.withdrawAddress,
      p.sealedAddressHash,
      p.sealedAddress,
      p.lastError,
      p.requestTxHash,
    ],
  );
  return rows.length > 0;
}

/**
 * The earliest payout before `id` that carried the envelope `hash` and
 * opened: a copy of it on a later request is a replay, paid once only.
 */
export async function earlierPayoutWith(tx: Queryable, hash: string, id: bigint): Promise<string | undefined> {
  const [earlier] = await tx.query<{ redemption_id: string }>(
    `SELECT redemption_id::text FROM payouts WHERE sealed_address_hash = $1 AND redemption_id < $2
     AND withdraw_address IS NOT NULL ORDER BY redemption_id LIMIT 1`,
    [hash.toLowerCase(), id.toString()],
  );
  return earlier?.redemption_id;
}

/**
 * Whether a payout on-chain, or a redemption being relayed, already carries
 * the envelope `sealed`: one that opened, or one of the same owner (it will
 * open, the seal being bound to its owner).
 */
export async function envelopeUsed(db: Queryable, hash: string, sealed: string, owner: string): Promise<boolean> {
  const [used] = await db.query(
    `SELECT 1 FROM payouts WHERE sealed_address_hash = $1 AND (withdraw_address IS NOT NULL OR lower(owner) = lower($3))
     UNION ALL SELECT 1 FROM redemption_requests WHERE sealed_address = $2 AND status <> 'failed' LIMIT 1`,
    [hash, sealed, owner],
  );
  return used !== undefined;
}

/** The payout's row follows its on-chain status: redirected, so the worker leaves it (and reads show it). */
export async function markRedirected(tx: Queryable, payoutId: string): Promise<void> {
  await tx.query(
    `UPDATE payouts SET status = 'redirected', version = version + 1, updated_at = now()
     WHERE redemption_id = $1 AND status IN ('failing', 'held')`,
    [payoutId],
  );
}

/** A payout's row status, or undefined before the worker has seen it. */
export async function payoutStatusOf(tx: Queryable, redemptionId: string): Promise<string | undefined> {
  const [payout] = await tx.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = $1::numeric", [
    redemptionId,
  ]);
  return payout?.status;
}

/** The ZEC due on payouts in `statuses`, in zatoshi. */
export async function zatDueIn(db: Queryable, statuses: readonly PayoutStatus[]): Promise<bigint> {
  const [row] = await db.query<{ zat: string | null }>(
    `SELECT sum(zat_due::numeric)::text AS zat FROM payouts WHERE status = ANY($1::text[])`,
    [statuses],
  );
  return BigInt(row?.zat ?? "0");
}

/** Payouts by status, for the metrics. */
export function payoutCounts(db: Queryable): Promise<{ status: string; n: string }[]> {
  return db.query<{ status: string; n: string }>("SELECT status, count(*) AS n FROM payouts GROUP BY status");
}

/** Seconds since the oldest payout neither completed nor held for its owner was found (null when none). */
export async function oldestUnfinishedAge(db: Queryable): Promise<number | string | null> {
  const [row] = await db.query<{ age: number | string | null }>(
    `SELECT EXTRACT(EPOCH FROM now() - min(created_at)) AS age FROM payouts
     WHERE status NOT IN ('completed', 'held', 'redirected')`,
  );
  return row?.age ?? null;
}

/** Every payout, or those in `status`, by redemption id (the operator's tool). */
export function listPayouts(db: Queryable, status?: string): Promise<PayoutRow[]> {
  return db.query<PayoutRow>(
    status
      ? "SELECT * FROM payouts WHERE status = $1 ORDER BY redemption_id"
      : "SELECT * FROM payouts ORDER BY redemption_id",
    status ? [status] : [],
  );
}

export interface RedirectRow {
  id: string;
  account_id: string | null;
  environment: string;
  payout_id: string;
  owner: string;
  signed_nonce: string;
  zcash_address: string | null;
  note_commitment: string | null;
  deadline: string;
  calldata: Hex;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  attempts: number;
  block_number: string | number | null;
  new_payout_id: string | null;
  note_sequence: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The redirect of payout `payoutId` being relayed or done (not failed), if any. */
export async function liveRedirectOf(db: Queryable, payoutId: bigint): Promise<RedirectRow | undefined> {
  const [live] = await db.query<RedirectRow>(
    "SELECT * FROM payout_redirects WHERE payout_id = $1 AND status <> 'failed' LIMIT 1",
    [payoutId.toString()],
  );
  return live;
}

/** The owner's redirect signed at `nonce` being relayed or done, if any. */
export async function redirectAtNonce(db: Queryable, owner: string, nonce: bigint): Promise<RedirectRow | undefined> {
  const [taken] = await db.query<RedirectRow>(
    `SELECT * FROM payout_redirects WHERE lower(owner) = lower($1) AND signed_nonce = $2 AND status <> 'failed'`,
    [owner, nonce.toString()],
  );
  return taken;
}

/** Queues a redirect for the relay; the unique index payout_redirects_live refuses a second live one. */
export async function insertRedirect(db: Queryable, columns: Record<string, unknown>): Promise<RedirectRow> {
  const keys = Object.keys(columns);
  const [row] = await db.query<RedirectRow>(
    `INSERT INTO payout_redirects (${keys.join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")})
     RETURNING *`,
    keys.map((k) => columns[k]),
  );
  return row!;
}

/** A redirect with the new payout it made and the ZEC of the payout it moved. */
export type RedirectWithPayouts = RedirectRow & {
  payout_status: string | null;
  payout_txid: string | null;
  zat_held: string | null;
};

/** The latest redirect of payout `payoutId` in `environment` (a live one before a failed one). */
export async function latestRedirect(
  db: Queryable,
  payoutId: bigint,
  environment: string,
): Promise<RedirectWithPayouts | undefined> {
  const [row] = await db.query<RedirectWithPayouts>(
    `SELECT d.*, p.status AS payout_status, p.zcash_txid AS payout_txid, o.zat_due AS zat_held
     FROM payout_redirects d
     LEFT JOIN payouts p ON p.redemption_id = d.new_payout_id::numeric
     LEFT JOIN payouts o ON o.redemption_id = d.payout_id
     WHERE d.payout_id = $1 AND d.environment = $2
     ORDER BY d.status = 'failed', d.created_at DESC LIMIT 1`,
    [payoutId.toString(), environment],
  );
  return row;
}
