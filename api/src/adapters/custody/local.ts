import { randomBytes } from "node:crypto";
import type { Database, Queryable } from "../db/index.ts";
import type { Attestor } from "./attestor.ts";
import { type Custody, type PayoutOrder, type PayoutState, type RecordedDeposit, recordDeposit } from "./index.ts";

const OPERATION = /^local:(0x[0-9a-f]{64})$/;

/**
 * Sandbox custody: no real ZEC moves. Deposits are simulated (like a sandbox
 * mock wire) and recorded on-chain by the attestor; payouts succeed at once
 * with a synthetic Zcash txid. The ZEC ledger is kept in the database.
 */
export class LocalCustody implements Custody {
  readonly kind = "local";

  constructor(
    private readonly db: Database,
    private readonly attestor: Attestor,
    /** Tells the depositing account's agents, in the ledger line's transaction. */
    private readonly onDeposit?: (tx: Queryable, accountId: string, deposit: RecordedDeposit) => Promise<unknown>,
  ) {}

  /** Deposits arrive only through simulateDeposit: there is no wallet to scan. */
  async scanDeposits(): Promise<RecordedDeposit[]> {
    return [];
  }

  /** A sandbox deposit: as if `amountZat` arrived with this note commitment in its memo. */
  simulateDeposit(noteCommitment: bigint, amountZat: bigint, accountId: string): Promise<RecordedDeposit> {
    const zcashTxId = `0x${randomBytes(32).toString("hex")}`;
    return recordDeposit(
      this.db,
      this.attestor,
      { noteCommitment, amountZat, zcashTxId },
      this.onDeposit && ((tx, deposit) => this.onDeposit!(tx, accountId, deposit)),
    );
  }

  async send(_order: PayoutOrder): Promise<string> {
    // The operation id carries the synthetic txid: nothing to remember.
    return `local:0x${randomBytes(32).toString("hex")}`;
  }

  async operation(operationId: string): Promise<PayoutState> {
    const match = OPERATION.exec(operationId);
    return match
      ? { state: "success", zcashTxId: match[1] as `0x${string}` }
      : { state: "unknown", reason: "not an operation of the local custody" };
  }
}
