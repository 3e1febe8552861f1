// Calls the relay sends on someone's behalf (a signed ballot, delegation or
// position action, a proven note withdrawal): each waits as a row, goes out
// through the transaction sender write-ahead as mints do, and is followed to
// confirmation. A call whose signature nonce (or vote, or nullifier) was used
// meanwhile is reconciled from the chain: if a mined transaction carries our
// very call (ours, whichever of a replaced pair was mined, or a copy sent by
// someone else) it went through; otherwise it was done by other means and
// this one never can be. What differs between kinds of calls is a `CallKind`.
import { type Address, type Hex, type PublicClient, type parseEventLogs, parseTransaction } from "viem";
import type { Chain } from "../adapters/chain.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import { type Failure, refusalOf, refusalOfMined } from "../domain/reverts.ts";
import { type RelayTable, updateRow } from "./rows.ts";
import type { SentTransaction, TransactionSender } from "./sender.ts";

export interface JobRow {
  id: string;
  account_id: string | null;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  attempts: number;
}

export type Logs = Parameters<typeof parseEventLogs>[0]["logs"];

/** A mined transaction that carried a job's call, and what its events say. */
export interface Landed<Facts> {
  txHash: Hex;
  blockNumber: bigint;
  facts: Facts;
}

/** What differs between kinds of relayed calls. */
export interface CallKind<Row extends JobRow, Facts> {
  table: RelayTable;
  /** For people: "vote", "repayment", … */
  what: string;
  to: Address;
  encode: (row: Row) => Hex;
  /** Whether the chain already took what this call needs (its nonce, vote or nullifier). */
  used: (row: Row) => Promise<boolean>;
  /** The mined transaction carrying exactly `data` to `to`, among the events that use what the call needs. */
  landed: (row: Row, data: Hex) => Promise<Landed<Facts> | undefined>;
  /** The failure when what the call needs was taken by another transaction. */
  usedFailure: (row: Row) => Failure;
  /** What a confirmed call's receipt logs say. */
  fromLogs: (logs: Logs) => Facts;
  /** Columns written with the confirmation. */
  columns?: (facts: Facts) => Record<string, unknown>;
  /** Events of a confirmation, in its transaction. */
  confirmed?: (tx: Queryable, row: Row, landed: Landed<Facts>) => Promise<void>;
  /** Events of a failure, in its transaction. */
  failed?: (tx: Queryable, row: Row, failure: Failure) => Promise<void>;
  /**
   * SQL, true when the queued job at `idColumn` may be sent (not held by
   * compliance): checked as the queue is read and again, the row locked, as
   * its send is recorded.
   */
  free?: (idColumn: string) => string;
}

export interface CallRelayOptions {
  /** Blocks on top of a call's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a job is failed. */
  maxAttempts: number;
  /** Told when a confirmation or failure queued events. */
  onEvents?: () => void;
}

/** Transactions to `to` carrying `data`, among candidate events' transactions, newest first. */
export async function carrying(client: PublicClient, to: Address, data: Hex, hashes: Hex[]): Promise<Hex | undefined> {
  for (const hash of [...hashes].reverse()) {
    const tx = await client.getTransaction({ hash });
    if (tx.to?.toLowerCase() === to.toLowerCase() && tx.input.toLowerCase() === data.toLowerCase()) return hash;
  }
  return undefined;
}

export class CallRelay {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: CallRelayOptions,
  ) {}

  /** Follows submitted jobs of a kind, then submits its queued ones. */
  async pass<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>): Promise<void> {
    for (const row of await this.#jobs<Row>(kind.table, "submitted")) await this.#follow(kind, row);
    const free = kind.free ? ` AND ${kind.free(`${kind.table}.id`)}` : "";
    for (const row of await this.#jobs<Row>(kind.table, "queued", free)) await this.#submit(kind, row);
  }

  #jobs<Row extends JobRow>(table: RelayTable, status: "queued" | "submitted", where = ""): Promise<Row[]> {
    return this.db.query<Row>(`SELECT * FROM ${table} WHERE status = $1${where} ORDER BY created_at LIMIT 50`, [
      status,
    ]);
  }

  #set(table: RelayTable, id: string, changes: Record<string, unknown>, expectedStatus?: string) {
    return updateRow(
      this.db,
      table,
      id,
      changes,
      expectedStatus ? { column: "status", value: expectedStatus } : undefined,
    );
  }

  async #submit<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row): Promise<void> {
    const data = kind.encode(row);
    let gas: bigint;
    try {
      // The simulation: a call the contracts refuse now is failed at once, with their reason.
      gas = await this.chain.client.estimateGas({ account: this.sender.address, to: kind.to, data });
    } catch (error) {
      if (await kind.used(row)) return this.#reconcileUsed(kind, row, data);
      const refusal = await refusalOf(this.chain, error);
      if (refusal) return this.#fail(kind, row, refusal);
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (row.attempts + 1 >= this.options.maxAttempts) {
        return this.#fail(kind, row, {
          code: "simulation_failed",
          reason: `The ${kind.what} could not be simulated ${row.attempts + 1} times: ${reason}`,
        });
      }
      await this.#set(kind.table, row.id, { attempts: row.attempts + 1, failure_reason: reason });
      return;
    }
    await this.sender.send(kind.to, data, gas, (sent) =>
      this.#recordSend(kind, row, { status: "submitted", ...sent, attempts: row.attempts + 1 }),
    );
  }

  /**
   * Records the signed call unless the row moved on or compliance held it
   * since the queue was read (the simulation leaves time for both): false and
   * nothing is broadcast. The row is locked before the hold is read, as a hold
   * locks it before it is written: one committed while we waited is seen.
   */
  #recordSend<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row, changes: Record<string, unknown>) {
    const free = kind.free;
    if (!free) return this.#set(kind.table, row.id, changes, "queued");
    return this.db.transaction(async (tx) => {
      const [queued] = await tx.query(`SELECT 1 FROM ${kind.table} WHERE id = $1 AND status = 'queued' FOR UPDATE`, [
        row.id,
      ]);
      if (!queued) return false;
      const [sendable] = await tx.query<{ free: boolean }>(`SELECT ${free("$1")} AS free`, [row.id]);
      if (!sendable?.free) return false;
      return updateRow(tx, kind.table, row.id, changes, { column: "status", value: "queued" });
    });
  }

  async #follow<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row): Promise<void> {
    const data = parseTransaction(row.raw_tx as Hex).data!;
    const receipt = await this.sender.receipt(row.tx_hash!);
    if (!receipt) {
      if (await kind.used(row)) return this.#reconcileUsed(kind, row, data);
      const replaced = (sent: SentTransaction) =>
        this.#set(kind.table, row.id, { ...sent, attempts: row.attempts + 1 });
      if ((await this.sender.advance(row, replaced)) === "nonce taken") {
        await this.#set(kind.table, row.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null });
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (await kind.used(row)) return this.#reconcileUsed(kind, row, data);
      const failure = await refusalOfMined(this.chain, {
        from: this.sender.address,
        to: kind.to,
        data,
        blockNumber: receipt.blockNumber,
      });
      return this.#fail(kind, row, failure, receipt.blockNumber);
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#confirm(kind, row, {
        txHash: receipt.transactionHash,
        blockNumber: receipt.blockNumber,
        facts: kind.fromLogs(receipt.logs),
      });
    }
  }

  /** What the call needs is used: by our call (then it is confirmed) or by another (then this one failed). */
  async #reconcileUsed<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row, data: Hex): Promise<void> {
    const landed = await kind.landed(row, data);
    if (landed) {
      const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
      // Not yet deep enough: a later pass confirms it.
      if (head - landed.blockNumber + 1n < BigInt(this.options.confirmations)) return;
      return this.#confirm(kind, row, landed);
    }
    await this.#fail(kind, row, kind.usedFailure(row));
  }

  async #confirm<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row, landed: Landed<Facts>) {
    const confirmed = await this.db.transaction(async (tx) => {
      const moved = await updateRow(
        tx,
        kind.table,
        row.id,
        {
          status: "confirmed",
          tx_hash: landed.txHash,
          block_number: Number(landed.blockNumber),
          settled_at: new Date(),
          ...kind.columns?.(landed.facts),
        },
        { column: "status", value: row.status },
      );
      if (moved) await kind.confirmed?.(tx, row, landed);
      return moved;
    });
    if (confirmed && kind.confirmed) this.options.onEvents?.();
  }

  async #fail<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row, failure: Failure, blockNumber?: bigint) {
    const failed = await this.db.transaction(async (tx) => {
      const moved = await updateRow(
        tx,
        kind.table,
        row.id,
        {
          status: "failed",
          failure_code: failure.code,
          failure_reason: failure.reason,
          settled_at: new Date(),
          ...(blockNumber === undefined ? {} : { block_number: Number(blockNumber) }),
        },
        { column: "status", value: row.status },
      );
      if (moved) await kind.failed?.(tx, row, failure);
      return moved;
    });
    if (failed && kind.failed) this.options.onEvents?.();
  }
}
