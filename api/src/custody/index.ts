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
  /** Records a shielded deposit on-chain through the attestor. */
  recordDeposit(noteCommitment: bigint, amountZat: bigint): Promise<RecordedDeposit>;
  /** Pays a requested redemption and marks it paid on-chain. */
  payRedemption(redemptionId: bigint): Promise<PaidRedemption>;
}
