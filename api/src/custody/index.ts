// Custody behind one interface: where ZEC deposits are seen and redemptions
// paid. LocalCustody (sandbox, development) keeps its own ZEC ledger in the
// database; a zcashd / Zallet adapter implements the same interface for
// production.

export interface RecordedDeposit {
  leafIndex: number;
  leaf: bigint;
  root: bigint;
  amountZat: bigint;
  noteCommitment: bigint;
  txHash: `0x${string}`;
}

export interface PaidRedemption {
  redemptionId: bigint;
  zatPaid: bigint;
  zcashTxId: `0x${string}`;
  txHash: `0x${string}`;
}

export interface Custody {
  readonly kind: "local" | "zcashd";
  /** Pays a requested redemption and marks it paid on-chain. */
  payRedemption(redemptionId: bigint): Promise<PaidRedemption>;
}

/** The memo a depositor writes: `zsd-note:0x<64 hex>` (ZIP 302 text memo). */
export const DEPOSIT_MEMO_PREFIX = "zsd-note:";
