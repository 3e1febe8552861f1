// The mints and proofs tables: the statements the mint service, the proof
// service, the mint relay and compliance read and write them with. A proof is
// claimed by one mint at a time (consumed); a failed mint gives it back.
import type { Queryable } from "../../adapters/db/index.ts";
import { jobRows } from "../../adapters/db/rows.ts";
import { notHeld } from "../compliance/store.ts";

/** A mint's row as the mint relay moves it (each move guarded by the state its pass read). */
export const mintRows = jobRows("mints");

/** Mints by status, for the metrics. */
export function mintCounts(db: Queryable): Promise<{ status: string; n: string }[]> {
  return db.query<{ status: string; n: string }>("SELECT status, count(*) AS n FROM mints GROUP BY status");
}

/** A mint with its proof, as the mint relay reads it to send or follow. */
export interface MintJobRow {
  id: string;
  account_id: string;
  proof_id: string;
  submitted_at: Date | string | null;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  attempts: number;
  recipient: string;
  amount: string;
  proof: unknown;
  root: string;
  nullifier_hash: string;
  collateral_floor_zat: string;
  proof_recipient: string;
  relayer: string;
  fee: string;
  change_leaf: string;
  owner: string | null;
  binding_hash: string;
  /** A reverted batch this mint survived, its culprit failed: it goes again with that batch's other items only. */
  survived_tx: string | null;
  /** Sent alone from now on: its batch reverted with no culprit found, or reverted again. */
  alone: boolean;
  /** How long ago the mint was queued, by the database's clock. */
  waited_ms: number | string;
}

/**
 * Mints in `status` with their proofs: queued ones by age (skipping those a
 * hold keeps when `screened`), sent ones by transaction so that a batch's rows
 * are followed together.
 */
export function mintJobs(db: Queryable, status: "queued" | "submitted", screened: boolean): Promise<MintJobRow[]> {
  // A queued mint held by compliance waits; one already sent is followed whatever happens.
  const held = status === "queued" && screened ? ` AND ${notHeld("mint", "m.id")}` : "";
  const order = status === "queued" ? "m.created_at" : "m.nonce, m.tx_hash, m.created_at";
  return db.query<MintJobRow>(
    `SELECT m.*, p.proof, p.root, p.nullifier_hash, p.collateral_floor_zat, p.recipient AS proof_recipient, p.relayer, p.fee,
       p.change_leaf, p.owner, p.binding_hash, EXTRACT(EPOCH FROM (now() - m.created_at)) * 1000 AS waited_ms
     FROM mints m JOIN proofs p ON p.id = m.proof_id
     WHERE m.status = $1${held} ORDER BY ${order} LIMIT ${status === "queued" ? 50 : 200}`,
    [status],
  );
}

/** Locks those of `ids` still queued (in id order, as every locker does) and returns them. */
export async function lockQueuedMints(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const queued = await tx.query<{ id: string }>(
    "SELECT id FROM mints WHERE id = ANY($1::text[]) AND status = 'queued' ORDER BY id FOR UPDATE",
    [ids],
  );
  return new Set(queued.map((row) => row.id));
}

/** Locks mint `id` if it is still queued; false when it is not. */
export async function lockQueuedMint(tx: Queryable, id: string): Promise<boolean> {
  const [queued] = await tx.query("SELECT 1 FROM mints WHERE id = $1 AND status = 'queued' FOR UPDATE", [id]);
  return queued !== undefined;
}

/** Marks the queued mints `ids` submitted in the transaction `sent` (one batch). */
export async function markSubmitted(
  tx: Queryable,
  ids: readonly string[],
  sent: { tx_hash: string; raw_tx: string; nonce: number; submitted_at: Date | string },
  relayer: string,
): Promise<void> {
  await tx.query(
    `UPDATE mints SET status = 'submitted', tx_hash = $2, raw_tx = $3, nonce = $4, submitted_at = $5, relayer = $6,
       attempts = attempts + 1, updated_at = now()
     WHERE id = ANY($1::text[]) AND status = 'queued'`,
    [ids, sent.tx_hash, sent.raw_tx, sent.nonce, sent.submitted_at, relayer],
  );
}

/** Proofs still consumed by mints that failed (from before failed mints gave them back), at most 100. */
export function proofsOfFailedMints(
  db: Queryable,
): Promise<{ id: string; mint_id: string; nullifier_hash: string; root: string }[]> {
  return db.query<{ id: string; mint_id: string; nullifier_hash: string; root: string }>(
    `SELECT p.id, p.mint_id, p.nullifier_hash, p.root FROM mints m JOIN proofs p ON p.mint_id = m.id
     WHERE m.status = 'failed' AND p.status = 'consumed' LIMIT 100`,
  );
}

/** Fails mint `id` if it is still in `status`; false when another pass moved it. */
export async function failMint(
  tx: Queryable,
  id: string,
  status: string,
  failure: { code: string; reason: string },
  /** The block it failed in, when known (a pass's fields: a number or its text); null keeps the row's. */
  blockNumber: unknown,
): Promise<boolean> {
  const failed = await tx.query(
    `UPDATE mints SET status = 'failed', failure_code = $3, failure_reason = $4,
       block_number = coalesce($5, block_number), settled_at = now(), updated_at = now()
     WHERE id = $1 AND status = $2 RETURNING id`,
    [id, status, failure.code, failure.reason, blockNumber],
  );
  return failed.length > 0;
}

/** Moves the consumed proof of a failed mint on: rejected (with the reason) or verified again. */
export async function settleProof(
  db: Queryable,
  proofId: string,
  mintId: string,
  verdict: { rejected: string | undefined },
): Promise<void> {
  await db.query(
    verdict.rejected
      ? `UPDATE proofs SET status = 'rejected', rejection_reason = $3, updated_at = now()
         WHERE id = $1 AND mint_id = $2 AND status = 'consumed'`
      : `UPDATE proofs SET status = 'verified', mint_id = NULL, updated_at = now()
         WHERE id = $1 AND mint_id = $2 AND status = 'consumed'`,
    verdict.rejected ? [proofId, mintId, verdict.rejected] : [proofId, mintId],
  );
}

/** The account's mint `id`, locked; its status, or undefined. */
export async function lockMintOf(
  tx: Queryable,
  accountId: string,
  id: string,
): Promise<{ status: string } | undefined> {
  const [mint] = await tx.query<{ status: string }>(
    "SELECT status FROM mints WHERE id = $1 AND account_id = $2 FOR UPDATE",
    [id, accountId],
  );
  return mint;
}

/**
 * Fails a queued mint compliance refused and gives its proof back (the
 * deposit is the holder's to use otherwise); false when it is not queued.
 */
export async function failRefusedMint(tx: Queryable, id: string, reason: string): Promise<boolean> {
  const failed = await tx.query(
    `UPDATE mints SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
       settled_at = now(), updated_at = now()
     WHERE id = $1 AND status = 'queued' RETURNING id`,
    [id, reason],
  );
  if (failed.length === 0) return false;
  await tx.query(
    `UPDATE proofs SET status = 'verified', mint_id = NULL, updated_at = now()
     WHERE mint_id = $1 AND status = 'consumed'`,
    [id],
  );
  return true;
}

/** How many mints to `address` (lower case) in the last `seconds`: the rules agent's velocity. */
export async function recentMintsTo(tx: Queryable, address: string, seconds: number): Promise<number> {
  const [recent] = await tx.query<{ n: number | string }>(
    `SELECT count(*) AS n FROM mints WHERE lower(recipient) = $1 AND created_at > now() - make_interval(secs => $2)`,
    [address, seconds],
  );
  return Number(recent?.n ?? 0);
}

/** A mint's row. */
export interface MintRow {
  id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  proof_id: string;
  amount: string;
  recipient: string;
  tx_hash: string | null;
  position_id: string | null;
  block_number: string | number | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The account's mint `id`, or undefined. */
export async function mintOf(db: Queryable, accountId: string, id: string): Promise<MintRow | undefined> {
  const [row] = await db.query<MintRow>("SELECT * FROM mints WHERE id = $1 AND account_id = $2", [id, accountId]);
  return row;
}

/** A proof's row. */
export interface ProofRow {
  id: string;
  account_id: string;
  proof_hash: string;
  status: "verified" | "consumed" | "rejected";
  root: string;
  nullifier_hash: string;
  collateral_floor_zat: string;
  binding_hash: string;
  mint_amount: string;
  recipient: string;
  relayer: string;
  fee: string;
  owner: string | null;
  change_leaf: string;
  rejection_reason: string | null;
  mint_id: string | null;
  created_at: Date | string;
}

/** Marks a proof rejected while it is still in `from`; answers how many rows moved (0 or 1). */
export async function rejectProof(db: Queryable, proofId: string, from: "verified" | "consumed", reason: string) {
  const rows = await db.query(
    `UPDATE proofs SET status = 'rejected', rejection_reason = $3, updated_at = now()
     WHERE id = $1 AND status = $2 RETURNING id`,
    [proofId, from, reason],
  );
  return rows.length;
}

/** Keeps a verified proof (the values in the insert's column order); its row. Unique indexes refuse a second of the same hash or a live one of the same nullifier. */
export async function insertProof(db: Queryable, values: unknown[]): Promise<ProofRow> {
  const [row] = await db.query<ProofRow>(
    `INSERT INTO proofs (id, account_id, proof_hash, status, root, nullifier_hash, collateral_floor_zat,
       binding_hash, mint_amount, recipient, relayer, fee, proof, owner, change_leaf)
     VALUES ($1, $2, $3, 'verified', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
    values,
  );
  return row!;
}

/** The proof with this hash, whosever it is. */
export async function proofWithHash(db: Queryable, proofHash: string): Promise<ProofRow | undefined> {
  const [existing] = await db.query<ProofRow>("SELECT * FROM proofs WHERE proof_hash = $1", [proofHash]);
  return existing;
}

/** The verified (not yet minted) proof claiming `nullifierHash`, if any. */
export async function verifiedProofOf(db: Queryable, nullifierHash: bigint): Promise<ProofRow | undefined> {
  const [live] = await db.query<ProofRow>("SELECT * FROM proofs WHERE nullifier_hash = $1 AND status = 'verified'", [
    nullifierHash.toString(),
  ]);
  return live;
}

/** The account's proof by its id or its hash, with every column (the proof itself included). */
export async function proofOf<Row = ProofRow>(
  db: Queryable,
  accountId: string,
  where: "id" | "proof_hash",
  value: string,
): Promise<Row | undefined> {
  const [proof] = await db.query<Row>(`SELECT * FROM proofs WHERE ${where} = $1 AND account_id = $2`, [
    value,
    accountId,
  ]);
  return proof;
}

/**
 * Claims a verified proof for mint `mintId` and queues the mint, in `tx`;
 * false when another mint claimed the proof first.
 */
export async function claimProofForMint(
  tx: Queryable,
  mint: { id: string; accountId: string; proofId: string; amount: string; recipient: string },
): Promise<boolean> {
  const claimed = await tx.query(
    `UPDATE proofs SET status = 'consumed', mint_id = $2, updated_at = now() WHERE id = $1 AND status = 'verified' RETURNING id`,
    [mint.proofId, mint.id],
  );
  if (claimed.length === 0) return false;
  await tx.query(
    `INSERT INTO mints (id, account_id, proof_id, status, amount, recipient) VALUES ($1, $2, $3, 'queued', $4, $5)`,
    [mint.id, mint.accountId, mint.proofId, mint.amount, mint.recipient],
  );
  return true;
}
