// Custody behind one interface: where ZEC deposits come in and redemptions
// are paid. ZcashdCustody is the one implementation: it finds deposits in the
// wallet and sends payments through zcashd / Zallet, in production against a
// real node and in the sandbox against the simulated one (api/src/sandbox),
// whose ledger the sandbox deposit endpoint pays into. It leaves the
// bookkeeping of a payout (write-ahead, retries, settlement on-chain, refunds)
// to the relay's Payouts, and records deposits by leaf in batches under the
// attestors' signatures (deposits.ts, attestation.ts).

export interface RecordedDeposit {
  /** The deposit's id (dep_…): GET /v1/deposits/{id} serves it to the depositing account. */
  id: string;
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
  readonly kind: "zcashd";
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

/** The memo a depositor writes for a note commitment, as zcashd takes it (hex). */
export function depositMemoHex(noteCommitment: bigint): string {
  return textMemoHex(`${DEPOSIT_MEMO_PREFIX}0x${noteCommitment.toString(16).padStart(64, "0")}`);
}

/** A ZIP 302 text memo as the hex zcashd takes and gives (512 bytes, zero-padded). */
export function textMemoHex(text: string): string {
  const memo = Buffer.alloc(512);
  if (Buffer.byteLength(text) > 512) throw new RangeError("a memo holds at most 512 bytes");
  memo.write(text, "utf8");
  return memo.toString("hex");
}
