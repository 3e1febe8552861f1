// Custody's ZEC ledger (custody_ledger): a line per deposit custody recorded
// on-chain and per payout it paid. Every statement against the table is here:
// the deposit scans write and look up their lines, the payout worker writes a
// payment's, and the deposit reads serve an account its own.
import type { Queryable } from "../db/index.ts";

/** A deposit's line as the account that made it reads it. */
export interface DepositLine {
  public_id: string;
  amount_zat: string;
  note_commitment: string;
  leaf_index: number;
  tx_hash: string;
  created_at: Date;
}

/** Whether the ledger has a deposit of this note and amount. */
export async function hasDepositOf(db: Queryable, noteCommitment: bigint, amountZat: bigint): Promise<boolean> {
  const [row] = await db.query(
    "SELECT 1 FROM custody_ledger WHERE kind = 'deposit' AND note_commitment = $1 AND amount_zat = $2",
    [noteCommitment.toString(), amountZat.toString()],
  );
  return row !== undefined;
}

/** Whether the ledger has this Zcash transaction's deposit of this note, with its leaf. */
export async function hasDepositIn(db: Queryable, zcashTxId: string, noteCommitment: bigint): Promise<boolean> {
  const seen = await db.query(
    "SELECT 1 FROM custody_ledger WHERE kind = 'deposit' AND zcash_txid = $1 AND leaf_index IS NOT NULL AND note_commitment = $2",
    [zcashTxId, noteCommitment.toString()],
  );
  return seen.length > 0;
}

/**
 * Writes a deposit's line; "unless written" leaves one already there for its
 * leaf. False when nothing was written.
 */
export async function insertDepositLine(
  tx: Queryable,
  line: {
    amountZat: bigint;
    noteCommitment: bigint;
    leafIndex: number;
    zcashTxId: string;
    txHash: string;
    publicId: string;
    accountId: string | null;
  },
  mode: "new" | "unless written" = "new",
): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO custody_ledger (kind, amount_zat, note_commitment, leaf_index, zcash_txid, tx_hash, public_id, account_id)
     VALUES ('deposit', $1, $2, $3, $4, $5, $6, $7)
     ${mode === "unless written" ? "ON CONFLICT (leaf_index) WHERE kind = 'deposit' DO NOTHING" : ""}
     RETURNING public_id`,
    [
      line.amountZat.toString(),
      line.noteCommitment.toString(),
      line.leafIndex,
      line.zcashTxId,
      line.txHash,
      line.publicId,
      line.accountId,
    ],
  );
  return rows.length > 0;
}

/** The deposit `publicId` of `accountId`, or undefined. */
export async function depositLineOf(
  db: Queryable,
  accountId: string,
  publicId: string,
): Promise<DepositLine | undefined> {
  const [row] = await db.query<DepositLine>(
    `SELECT public_id, amount_zat, note_commitment, leaf_index, tx_hash, created_at FROM custody_ledger
     WHERE kind = 'deposit' AND public_id = $1 AND account_id = $2`,
    [publicId, accountId],
  );
  return row;
}

/** The account's deposits at leaves `from` to `to`, by leaf index. */
export function depositLinesAt(
  db: Queryable,
  accountId: string,
  from: number,
  to: number,
): Promise<{ leaf_index: number; amount_zat: string; note_commitment: string }[]> {
  return db.query<{ leaf_index: number; amount_zat: string; note_commitment: string }>(
    `SELECT leaf_index, amount_zat, note_commitment FROM custody_ledger
     WHERE kind = 'deposit' AND account_id = $1 AND leaf_index BETWEEN $2 AND $3`,
    [accountId, from, to],
  );
}

/** The custody's ZEC ledger: one payout line per redemption. */
export async function recordPayout(db: Queryable, redemptionId: string, zat: string, zcashTxId: string): Promise<void> {
  await db.query(
    `INSERT INTO custody_ledger (kind, amount_zat, redemption_id, zcash_txid) VALUES ('payout', $1, $2, $3)
     ON CONFLICT (redemption_id) WHERE kind = 'payout' DO NOTHING`,
    [zat, redemptionId, zcashTxId],
  );
}
