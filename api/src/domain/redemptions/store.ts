// The redemption_requests table: the statements that read or write it, for
// the redemption service, the redemption relay, the payouts and redirects.
import type { Hex } from "viem";
import type { Queryable } from "../../adapters/db/index.ts";
import { jobRows } from "../../adapters/db/rows.ts";
import { notHeld, refusedByCompliance } from "../compliance/store.ts";

/** A redemption request's row as the redemption relay moves it (guarded by its relay_status). */
export const redemptionRows = jobRows("redemption_requests");

/**
 * The account and request behind payout `fromId` (its redemption's, or the
 * hold of a payout redirected from it), when compliance refused it; a payout
 * redirected from it must then be screened again.
 */
export async function refusedOrigin(
  tx: Queryable,
  fromId: bigint,
): Promise<{ account_id: string; request_id: string } | undefined> {
  const [origin] = await tx.query<{ account_id: string; request_id: string }>(
    `SELECT account_id, request_id FROM (
       SELECT r.account_id, r.id AS request_id FROM redemption_requests r WHERE r.redemption_id = $2
       UNION ALL
       SELECT h.account_id, h.redemption_request_id FROM compliance_holds h
       WHERE h.subject_type = 'payout' AND h.subject_id = $2
     ) o WHERE request_id IS NOT NULL AND ${refusedByCompliance("$1::numeric")} LIMIT 1`,
    // Once as a number, once as text: one parameter cannot be deduced as both.
    [fromId.toString(), fromId.toString()],
  );
  return origin;
}

/** The on-chain payout id of the account's request `id` (null before its burn), or undefined when not its. */
export async function burnedRedemptionOf(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<{ redemption_id: string | null } | undefined> {
  const [request] = await db.query<{ redemption_id: string | null }>(
    "SELECT redemption_id FROM redemption_requests WHERE id = $1 AND account_id = $2",
    [id, accountId],
  );
  return request;
}

/** The account's redemption request `id`, locked, or undefined. */
export async function lockRequestOf(
  tx: Queryable,
  accountId: string,
  id: string,
): Promise<{ status: string; relay_status: string; redemption_id: string | null } | undefined> {
  const [locked] = await tx.query<{ status: string; relay_status: string; redemption_id: string | null }>(
    "SELECT status, relay_status, redemption_id FROM redemption_requests WHERE id = $1 AND account_id = $2 FOR UPDATE",
    [id, accountId],
  );
  return locked;
}

/** Fails a request compliance refused before its burn was sent; false when it was sent already. */
export async function failRefusedRequest(tx: Queryable, id: string, reason: string): Promise<boolean> {
  const failed = await tx.query(
    `UPDATE redemption_requests SET status = 'failed', relay_status = 'done', failure_code = 'compliance_rejected',
       failure_reason = $2, updated_at = now()
     WHERE id = $1 AND status = 'requested' AND relay_status = 'queued' RETURNING id`,
    [id, reason],
  );
  return failed.length > 0;
}

/** A request as the redemption relay sends and follows its burn. */
export interface RedemptionRow {
  id: string;
  account_id: string;
  status: string;
  relay_status: "queued" | "submitted" | "done";
  owner: string;
  amount: string;
  /** The envelope the owner signed (null on requests older than migration 24). */
  sealed_address: Hex | null;
  deadline: string;
  /** The permit as posted: with `minZec`, the least ZEC the owner signed for. */
  signature: { v: number; r: string; s: string; minZec?: string };
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  redemption_id: string | null;
  attempts: number;
  /** The owner's Redemptions nonce the signature was made for (null on requests older than migration 8). */
  owner_nonce: string | null;
}

/**
 * Requests not yet burned whose relay is at `relayStatus`, oldest first: a
 * queued one a hold keeps waits (when `screened`); one already sent is
 * followed whatever happens.
 */
export function requestsToRelay(
  db: Queryable,
  relayStatus: "queued" | "submitted",
  screened: boolean,
): Promise<RedemptionRow[]> {
  const held = relayStatus === "queued" && screened ? ` AND ${notHeld("redemption", "id")}` : "";
  return db.query<RedemptionRow>(
    `SELECT * FROM redemption_requests WHERE relay_status = $1 AND status = 'requested'${held}
     ORDER BY created_at LIMIT 50`,
    [relayStatus],
  );
}

/** Locks request `id` if its relay is still queued; false when it is not. */
export async function lockQueuedRequest(tx: Queryable, id: string): Promise<boolean> {
  const [queued] = await tx.query(
    "SELECT 1 FROM redemption_requests WHERE id = $1 AND relay_status = 'queued' FOR UPDATE",
    [id],
  );
  return queued !== undefined;
}

/** How many redemption requests by `address` (lower case) in the last `seconds`: the rules agent's velocity. */
export async function recentRequestsBy(tx: Queryable, address: string, seconds: number): Promise<number> {
  const [recent] = await tx.query<{ n: number | string }>(
    `SELECT count(*) AS n FROM redemption_requests WHERE lower(owner) = $1 AND created_at > now() - make_interval(secs => $2)`,
    [address, seconds],
  );
  return Number(recent?.n ?? 0);
}

/**
 * The account's request `id` with its payout, its hold and its latest
 * redirect (and the payout that redirect made), in one statement: the read
 * GET /v1/redemptions/{id} answers from.
 */
export async function requestWithPayout(db: Queryable, accountId: string, id: string): Promise<RequestRow | undefined> {
  const [row] = await db.query<RequestRow>(
    `SELECT r.*, p.status AS payout_status, p.zcash_txid AS payout_txid, p.settle_tx_hash,
            p.last_error AS payout_error, p.updated_at AS payout_updated_at, h.state AS hold_state,
            d.id AS redirect_id, d.status AS redirect_status, d.zcash_address AS redirect_address,
            d.note_commitment AS redirect_commitment, d.new_payout_id AS redirect_new_payout,
            d.note_sequence AS redirect_note_sequence, d.tx_hash AS redirect_tx_hash,
            d.failure_code AS redirect_failure_code, d.failure_reason AS redirect_failure_reason,
            np.status AS redirect_payout_status, np.zcash_txid AS redirect_payout_txid
     FROM redemption_requests r LEFT JOIN payouts p ON p.redemption_id = r.redemption_id::numeric
     LEFT JOIN compliance_holds h ON h.subject_type = 'redemption' AND h.subject_id = r.id
     LEFT JOIN LATERAL (SELECT * FROM payout_redirects x WHERE x.payout_id = r.redemption_id::numeric
                        ORDER BY x.status = 'failed', x.created_at DESC LIMIT 1) d ON true
     LEFT JOIN payouts np ON np.redemption_id = d.new_payout_id::numeric
     WHERE r.id = $1 AND r.account_id = $2`,
    [id, accountId],
  );
  return row;
}

/** A request as the redemption service reads it, with its payout, hold and redirect when joined (requestWithPayout). */
export interface RequestRow {
  id: string;
  status: "requested" | "burned" | "paid" | "failed";
  owner: string;
  amount: string;
  withdraw_address: string;
  redemption_id: string | null;
  zat_due: string | null;
  tx_hash: string | null;
  /** The block the burn was mined in (null for a request burned before it was recorded). */
  block_number?: string | null;
  zcash_txid: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** From the payout of the on-chain redemption, once the worker has seen it (workers/payouts/payouts.ts). */
  payout_status?: string | null;
  payout_txid?: string | null;
  settle_tx_hash?: string | null;
  payout_updated_at?: Date | string | null;
  /** The compliance hold on the request, if one was placed. */
  hold_state?: string | null;
  payout_error?: string | null;
  /** The latest redirect of a held payout (payout_redirects), and the new payout it made. */
  redirect_id?: string | null;
  redirect_status?: string | null;
  redirect_address?: string | null;
  redirect_commitment?: string | null;
  redirect_new_payout?: string | null;
  redirect_note_sequence?: string | null;
  redirect_tx_hash?: string | null;
  redirect_failure_code?: string | null;
  redirect_failure_reason?: string | null;
  redirect_payout_status?: string | null;
  redirect_payout_txid?: string | null;
}

/** A permit's signature, as a request keeps it. */
interface Signed {
  r: string;
  s: string;
}

/** The owner's request at `nonce` compliance refused with this very signature, if any: posting it again is no way round the review. */
export async function refusedSignature(
  db: Queryable,
  owner: string,
  nonce: bigint,
  permit: Signed,
): Promise<{ id: string; account_id: string } | undefined> {
  const [rejected] = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM redemption_requests WHERE lower(owner) = lower($1) AND owner_nonce = $2
       AND status = 'failed' AND failure_code = 'compliance_rejected'
       AND lower(signature->>'r') = lower($3) AND lower(signature->>'s') = lower($4) LIMIT 1`,
    [owner, nonce.toString(), permit.r, permit.s],
  );
  return rejected;
}

/**
 * Writes a new request, "requested", from its values in column order (id,
 * account, owner, amount, withdraw address, sealed address, deadline,
 * signature, owner's nonce); its row.
 */
export async function insertRequest(tx: Queryable, values: unknown[]): Promise<RequestRow> {
  const [inserted] = await tx.query<RequestRow>(
    `INSERT INTO redemption_requests (id, account_id, status, owner, amount, withdraw_address, sealed_address,
       deadline, signature, owner_nonce)
     VALUES ($1, $2, 'requested', $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    values,
  );
  return inserted!;
}

/** The owner's nonces below `nonce` at which a request here carried this very signature, newest first. */
export async function noncesSignedWith(db: Queryable, owner: string, permit: Signed, nonce: bigint): Promise<bigint[]> {
  const rows = await db.query<{ n: string }>(
    `SELECT DISTINCT owner_nonce::numeric AS n FROM redemption_requests
     WHERE lower(owner) = lower($1) AND owner_nonce::numeric < $2::numeric
       AND lower(signature->>'r') = lower($3) AND lower(signature->>'s') = lower($4)
     ORDER BY n DESC LIMIT 4`,
    [owner, nonce.toString(), permit.r, permit.s],
  );
  return rows.map((r) => BigInt(r.n));
}

/** Whether a request here, not failed, holds the owner's nonce. */
export async function liveRequestAt(db: Queryable, owner: string, nonce: bigint): Promise<boolean> {
  const [live] = await db.query(
    "SELECT 1 FROM redemption_requests WHERE lower(owner) = lower($1) AND owner_nonce = $2 AND status <> 'failed'",
    [owner, nonce.toString()],
  );
  return live !== undefined;
}

/** The latest request at the owner's nonce (a live one before a failed one), if any. */
export async function latestRequestAt(
  db: Queryable,
  owner: string,
  nonce: bigint,
): Promise<{ id: string; account_id: string } | undefined> {
  const [existing] = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM redemption_requests WHERE lower(owner) = lower($1) AND owner_nonce = $2
     ORDER BY status = 'failed', created_at DESC LIMIT 1`,
    [owner, nonce.toString()],
  );
  return existing;
}
