// Custody behind one interface: where ZEC deposits come in and redemptions
// are paid. LocalCustody (sandbox, development) simulates deposits and pays
// with synthetic Zcash txids; ZcashdCustody finds deposits in the wallet and
// sends real payments through zcashd / Zallet. Both leave the bookkeeping of a
// payout (write-ahead, retries, settlement on-chain, refunds) to the relay's
// Payouts, and record a deposit the same way (recordDeposit, or recordDeposits
// for several found at once).
import type { Database, Queryable } from "../db/index.ts";
import { depositLeaf } from "@zsd/sdk/notes";
import type { Attestor } from "./attestor.ts";
import { ContractRevertError, isRevert } from "../../domain/errors.ts";

export interface RecordedDeposit {
  leafIndex: number;
  leaf: bigint;
  root: bigint;
  amountZat: bigint;
  noteCommitment: bigint;
  txHash: `0x${string}`;
}

export interface PayoutOrder {
  redemptionId: bigint;
  /** A shielded address, already validated for the custody's network. */
  address: string;
  zat: bigint;
}

/** Where a payment handed to the wallet stands. */
export type PayoutState =
  | { state: "pending" }
  /** The txid in its internal byte order (bytes32 on-chain); zcashd prints it reversed (sdk zcash/txid.ts). */
  | { state: "success"; zcashTxId: `0x${string}` }
  | { state: "failed"; reason: string }
  /** The wallet no longer knows the operation, or failed it in a way that may have paid: it may or may not have paid. */
  | { state: "unknown"; reason: string };

/**
 * The wallet answered that it will not make this payment (not a lost
 * connection, after which a payment may or may not have been made).
 */
export class PayoutRefused extends Error {
  override name = "PayoutRefused";
}

/** The request never reached the wallet (connection refused): nothing was paid, nothing refused. */
export class PayoutNotSent extends Error {
  override name = "PayoutNotSent";
}

export interface Custody {
  readonly kind: "local" | "zcashd";
  /** Records the deposits that arrived since the last scan; returns those recorded now. */
  scanDeposits(): Promise<RecordedDeposit[]>;
  /**
   * Sandbox only: records a deposit as if `amountZat` had arrived with this
   * note commitment in its memo. Absent where deposits are real.
   */
  simulateDeposit?(noteCommitment: bigint, amountZat: bigint, accountId: string): Promise<RecordedDeposit>;
  /**
   * Hands one payment to the wallet and returns its operation id. Throws
   * PayoutRefused when the wallet refused it and PayoutNotSent when the
   * request never reached it; any other error leaves it unknown whether the
   * payment was made.
   */
  send(order: PayoutOrder): Promise<string>;
  operation(operationId: string): Promise<PayoutState>;
}

/** The memo a depositor writes: `zsd-note:0x<64 hex>` (ZIP 302 text memo). */
export const DEPOSIT_MEMO_PREFIX = "zsd-note:";
/** The memo of a payout, so that the recipient and an auditor can tie it to its redemption. */
export const PAYOUT_MEMO_PREFIX = "zsd-redemption:";

/** A ZIP 302 text memo as the hex zcashd takes and gives (512 bytes, zero-padded). */
export function textMemoHex(text: string): string {
  const memo = Buffer.alloc(512);
  if (Buffer.byteLength(text) > 512) throw new RangeError("a memo holds at most 512 bytes");
  memo.write(text, "utf8");
  return memo.toString("hex");
}

/** A deposit custody has seen: recorded on-chain by the attestor, then in the ZEC ledger. */
export async function recordDeposit(
  db: Database,
  attestor: Attestor,
  deposit: { noteCommitment: bigint; amountZat: bigint; zcashTxId: string },
  /** Runs in the transaction that writes the ledger line (the deposit.recorded event of its account). */
  alsoIn?: (tx: Queryable, recorded: RecordedDeposit) => Promise<unknown>,
): Promise<RecordedDeposit> {
  const onChain = await attestor.recordDeposit(deposit.noteCommitment, deposit.amountZat).catch(async (error) => {
    // Recorded on the chain before, and never in the ledger (the database went
    // down between the two): this is that deposit, and its ledger line is written now.
    if (!(error instanceof ContractRevertError && error.errorName === "DepositAlreadyRecorded")) throw error;
    const [inLedger] = await db.query(
      "SELECT 1 FROM custody_ledger WHERE kind = 'deposit' AND note_commitment = $1 AND amount_zat = $2",
      [deposit.noteCommitment.toString(), deposit.amountZat.toString()],
    );
    const recorded = inLedger ? undefined : await attestor.recordedDeposit(deposit.noteCommitment, deposit.amountZat);
    if (!recorded) throw error;
    return recorded;
  });
  const recorded: RecordedDeposit = {
    leafIndex: Number(onChain.index),
    leaf: onChain.leaf,
    root: onChain.root,
    amountZat: deposit.amountZat,
    noteCommitment: deposit.noteCommitment,
    txHash: onChain.txHash,
  };
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO custody_ledger (kind, amount_zat, note_commitment, leaf_index, zcash_txid, tx_hash)
       VALUES ('deposit', $1, $2, $3, $4, $5)`,
      [
        deposit.amountZat.toString(),
        deposit.noteCommitment.toString(),
        recorded.leafIndex,
        deposit.zcashTxId,
        recorded.txHash,
      ],
    );
    await alsoIn?.(tx, recorded);
  });
  return recorded;
}

/**
 * Deposits custody found together, recorded on the chain in one batch (only
 * their total is public there), then in the ZEC ledger in one transaction.
 * When one of them is on the chain already (recorded before a crash, or the
 * same note twice), the batch is refused whole and each goes alone through
 * recordDeposit, which finds a recorded one again and writes its line; a
 * deposit already in the ledger is left out. One deposit goes alone.
 */
export async function recordDeposits(
  db: Database,
  attestor: Attestor,
  deposits: readonly { noteCommitment: bigint; amountZat: bigint; zcashTxId: string }[],
): Promise<RecordedDeposit[]> {
  if (deposits.length < 2) return recordEach(db, attestor, deposits);
  let onChain: Awaited<ReturnType<Attestor["recordDeposits"]>>;
  try {
    onChain = await attestor.recordDeposits(deposits);
  } catch (error) {
    if (isRevert(error, "DepositAlreadyRecorded")) return recordEach(db, attestor, deposits);
    throw error;
  }
  const recorded = deposits.map((deposit, i): RecordedDeposit => ({
    leafIndex: Number(onChain.firstIndex) + i,
    leaf: depositLeaf(deposit.amountZat, deposit.noteCommitment),
    root: onChain.root,
    amountZat: deposit.amountZat,
    noteCommitment: deposit.noteCommitment,
    txHash: onChain.txHash,
  }));
  await db.transaction(async (tx) => {
    for (const [i, deposit] of deposits.entries()) {
      await tx.query(
        `INSERT INTO custody_ledger (kind, amount_zat, note_commitment, leaf_index, zcash_txid, tx_hash)
         VALUES ('deposit', $1, $2, $3, $4, $5)`,
        [
          deposit.amountZat.toString(),
          deposit.noteCommitment.toString(),
          recorded[i]!.leafIndex,
          deposit.zcashTxId,
          onChain.txHash,
        ],
      );
    }
  });
  return recorded;
}

async function recordEach(
  db: Database,
  attestor: Attestor,
  deposits: readonly { noteCommitment: bigint; amountZat: bigint; zcashTxId: string }[],
): Promise<RecordedDeposit[]> {
  const recorded: RecordedDeposit[] = [];
  for (const deposit of deposits) {
    try {
      recorded.push(await recordDeposit(db, attestor, deposit));
    } catch (error) {
      // The same note twice: the chain and the ledger already have it.
      if (isRevert(error, "DepositAlreadyRecorded")) continue;
      throw error;
    }
  }
  return recorded;
}
