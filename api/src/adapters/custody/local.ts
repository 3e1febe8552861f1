import { randomBytes } from "node:crypto";
import type { Database, Queryable } from "../db/index.ts";
import type { Attestor } from "./attestor.ts";
import { DepositWindow } from "./deposits.ts";
import type { Custody, PayoutOrder, PayoutState, RecordedDeposit } from "./index.ts";

const OPERATION = /^local:(0x[0-9a-f]{64})$/;

/**
 * Sandbox custody: no real ZEC moves. Deposits are simulated (like a sandbox
 * mock wire) and recorded on-chain by the attestor, those arriving within
 * `depositWindowMs` of each other in one batch (the chain shows their total,
 * not each amount); payouts succeed at once with a synthetic Zcash txid. The
 * ZEC ledger is kept in the database.
 */
export class LocalCustody implements Custody {
  readonly kind = "local";
  readonly #deposits: DepositWindow;

  constructor(
    db: Database,
    attestor: Attestor,
    /** Tells the depositing account's agents, in the ledger line's transaction. */
    private readonly onDeposit?: (tx: Queryable, accountId: string, deposit: RecordedDeposit) => Promise<unknown>,
    depositWindowMs = 200,
  ) {
    this.#deposits = new DepositWindow(db, attestor, depositWindowMs);
  }

  /** Deposits arrive only through simulateDeposit: there is no wallet to scan. */
  async scanDeposits(): Promise<RecordedDeposit[]> {
    return [];
  }

  /** A sandbox deposit: as if `amountZat` arrived with this note commitment in its memo. */
  simulateDeposit(noteCommitment: bigint, amountZat: bigint, accountId: string): Promise<RecordedDeposit> {
    const zcashTxId = `0x${randomBytes(32).toString("hex")}`;
    const onDeposit = this.onDeposit;
    return this.#deposits.record({
      noteCommitment,
      amountZat,
      zcashTxId,
      accountId,
      alsoIn: onDeposit && ((tx, deposit) => onDeposit(tx, accountId, deposit)),
    });
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
