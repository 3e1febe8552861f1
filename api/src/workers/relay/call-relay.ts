// Calls the relay sends on someone's behalf (a signed ballot, delegation or
// position action, a proven note withdrawal): each waits as a row, goes out
// through the transaction sender write-ahead as mints do, and is followed to
// confirmation. A call whose signature nonce (or vote, or nullifier) was used
// meanwhile is reconciled from the chain: if a mined transaction carries our
// very call (ours, whichever of a replaced pair was mined, or a copy sent by
// someone else) it went through; otherwise it was done by other means and
// this one never can be. What differs between kinds of calls is a `CallKind`.
// A kind may let its queued calls share one transaction (`CallBatch`: note
// spends go in one spendBatch, the keeper's redistributions in one
// redistributeMany): each is simulated alone first, so a call the contracts
// refuse fails alone with its reason; a batch that reverts anyway is taken
// apart, its refused calls failed and the rest queued again. A batch that
// skips what it cannot do (redistributeMany) says which rows it did not carry.
import { type Address, type Hex, type PublicClient, type parseEventLogs, parseTransaction } from "viem";
import type { Chain } from "../../adapters/chain.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { type Failure, refusalOf, refusalOfMined } from "../../domain/reverts.ts";
import { type JobRows, holdsFor } from "../../adapters/db/rows.ts";
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
  /** The job table's row operations, from the store that owns it. */
  rows: JobRows;
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
  /** What a confirmed call's receipt logs say of this row's call (a batch's logs hold its other rows' too). */
  fromLogs: (logs: Logs, row: Row) => Facts;
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
  /** Whether, and how, queued calls of this kind share a transaction: each batch takes the rows it joins. */
  batches?: CallBatch<Row>[];
  /**
   * Whether a mined batch carried `row`'s call, by its logs (default: yes). A batch call that skips, rather
   * than reverts on, what it can no longer do (redistributeMany) goes through without some of its rows:
   * each of those is failed, with `skipped` as its failure unless the chain took what it needs otherwise.
   */
  carried?: (logs: Logs, row: Row) => boolean;
  skipped?: (row: Row) => Failure;
}

/** Queued calls that may go together in one call of the contract's. */
export interface CallBatch<Row> {
  /** Most calls one transaction carries; below 2, each goes alone. */
  max: number;
  /** The queued rows that may join a batch (the others go alone). */
  joining: (rows: Row[]) => Promise<Row[]>;
  /** Rows that may share one transaction have the same key (default: all of them). */
  key?: (row: Row) => string;
  /** The one call that carries every row's call, in order. */
  encode: (rows: Row[]) => Hex;
  /** What a batch of `n` may grow by between its estimate and its block (adapters/gas.ts). */
  headroom: (n: number) => bigint;
}

export interface CallRelayOptions {
  /** Blocks on top of a call's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a job is failed. */
  maxAttempts: number;
  /** Told when a confirmation or failure queued events. */
  onEvents?: () => void;
}

/**
 * Transactions to `to` carrying `data` (or whose input `carries` says holds
 * the call: a batch), among candidate events' transactions, newest first.
 */
export async function carrying(
  client: PublicClient,
  to: Address,
  data: Hex,
  hashes: Hex[],
  carries: (input: Hex) => boolean = () => false,
): Promise<Hex | undefined> {
  for (const hash of [...hashes].reverse()) {
    const tx = await client.getTransaction({ hash });
    if (tx.to?.toLowerCase() !== to.toLowerCase()) continue;
    if (tx.input.toLowerCase() === data.toLowerCase() || carries(tx.input)) return hash;
  }
  return undefined;
}

/** A row of a batch moved on while it was signed: the batch is recorded on none. */
class Unsent extends Error {}

export class CallRelay {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: CallRelayOptions,
  ) {}

  /** Follows submitted jobs of a kind (a batch's together), then submits its queued ones. */
  async pass<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>): Promise<void> {
    const sent = new Map<string, Row[]>();
    for (const row of await this.#jobs<Row>(kind.rows, "submitted")) {
      sent.set(row.tx_hash!, [...(sent.get(row.tx_hash!) ?? []), row]);
    }
    for (const rows of sent.values()) await this.#follow(kind, rows);
    const free = kind.free ? ` AND ${kind.free(kind.rows.idColumn)}` : "";
    const queued = await this.#jobs<Row>(kind.rows, "queued", free);
    const joined = new Set<Row>();
    const groups: { batch: CallBatch<Row>; rows: Row[] }[] = [];
    for (const batch of kind.batches ?? []) {
      if (batch.max < 2) continue;
      const rows = (await batch.joining(queued.filter((row) => !joined.has(row)))).filter((row) => !joined.has(row));
      const keyed = new Map<string, Row[]>();
      for (const row of rows) {
        joined.add(row);
        const key = batch.key?.(row) ?? "";
        keyed.set(key, [...(keyed.get(key) ?? []), row]);
      }
      for (const members of keyed.values()) groups.push({ batch, rows: members });
    }
    for (const row of queued) if (!joined.has(row)) await this.#submit(kind, row);
    for (const { batch, rows } of groups) await this.#submitBatches(kind, batch, rows);
  }

  #jobs<Row extends JobRow>(rows: JobRows, status: "queued" | "submitted", where = ""): Promise<Row[]> {
    return rows.jobsIn<Row>(this.db, status, where);
  }

  #set(rows: JobRows, id: string, changes: Record<string, unknown>, expectedStatus?: string) {
    return rows.update(this.db, id, changes, expectedStatus ? { column: "status", value: expectedStatus } : undefined);
  }

  async #submit<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row): Promise<void> {
    const gas = await this.#simulate(kind, row);
    if (gas === undefined) return;
    await this.sender.send(kind.to, kind.encode(row), gas, (sent) => this.#recordSend(kind, [row], sent));
  }

  /**
   * The simulation: a call the contracts refuse now is failed at once, with
   * their reason (or reconciled, if what it needs was used). Its estimate, or
   * undefined when it does not go now.
   */
  async #simulate<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, row: Row): Promise<bigint | undefined> {
    const data = kind.encode(row);
    try {
      return await this.chain.client.estimateGas({ account: this.sender.address, to: kind.to, data });
    } catch (error) {
      if (await kind.used(row)) return void (await this.#reconcileUsed(kind, row, data));
      const refusal = await refusalOf(this.chain, error);
      if (refusal) return void (await this.#fail(kind, row, refusal));
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (row.attempts + 1 >= this.options.maxAttempts) {
        return void (await this.#fail(kind, row, {
          code: "simulation_failed",
          reason: `The ${kind.what} could not be simulated ${row.attempts + 1} times: ${reason}`,
        }));
      }
      await this.#set(kind.rows, row.id, { attempts: row.attempts + 1, failure_reason: reason });
      return undefined;
    }
  }

  /**
   * Queued calls that may share a transaction: each simulated alone (the
   * refused fail alone), the rest sent in batches of at most `batch.max`, each
   * batch simulated whole for its estimate; a lone survivor, or a batch the
   * node will not estimate, goes call by call.
   */
  async #submitBatches<Row extends JobRow, Facts>(
    kind: CallKind<Row, Facts>,
    batch: CallBatch<Row>,
    rows: Row[],
  ): Promise<void> {
    const ready: { row: Row; gas: bigint }[] = [];
    for (const row of rows) {
      const gas = await this.#simulate(kind, row);
      if (gas !== undefined) ready.push({ row, gas });
    }
    for (let i = 0; i < ready.length; i += batch.max) {
      const chunk = ready.slice(i, i + batch.max);
      const alone = async () => {
        for (const { row, gas } of chunk) {
          await this.sender.send(kind.to, kind.encode(row), gas, (sent) => this.#recordSend(kind, [row], sent));
        }
      };
      if (chunk.length === 1) {
        await alone();
        continue;
      }
      const members = chunk.map((c) => c.row);
      const data = batch.encode(members);
      let gas: bigint;
      try {
        gas = await this.chain.client.estimateGas({ account: this.sender.address, to: kind.to, data });
      } catch {
        // Each went through alone a moment ago: what stops them together (a call mined meanwhile) is found alone.
        await alone();
        continue;
      }
      await this.sender.send(
        kind.to,
        data,
        gas,
        (sent) => this.#recordSend(kind, members, sent),
        batch.headroom(members.length),
      );
    }
  }

  /**
   * Records the signed transaction on every row it carries, unless one of
   * them moved on or compliance held it since the queue was read (the
   * simulation leaves time for both): then on none, false, and nothing is
   * broadcast. Each row is locked before its hold is read, as a hold locks it
   * before it is written: one committed while we waited is seen.
   */
  #recordSend<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, rows: Row[], sent: SentTransaction) {
    const free = kind.free;
    return this.db
      .transaction(async (tx) => {
        for (const row of rows) {
          if (!(await kind.rows.lockQueued(tx, row.id))) throw new Unsent();
          if (free && !(await holdsFor(tx, free, row.id))) throw new Unsent();
          const changes = { status: "submitted", ...sent, attempts: row.attempts + 1 };
          if (!(await kind.rows.update(tx, row.id, changes, { column: "status", value: "queued" }))) {
            throw new Unsent();
          }
        }
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof Unsent) return false;
        throw error;
      });
  }

  /** Follows one transaction and the rows it carries (one, or a batch's). */
  async #follow<Row extends JobRow, Facts>(kind: CallKind<Row, Facts>, rows: Row[]): Promise<void> {
    const first = rows[0]!;
    const data = parseTransaction(first.raw_tx as Hex).data!;
    const receipt = await this.sender.receipt(first.tx_hash!);
    if (!receipt) {
      const waiting: Row[] = [];
      for (const row of rows) {
        if (await kind.used(row)) await this.#reconcileUsed(kind, row, data);
        else waiting.push(row);
      }
      if (waiting.length === 0) return;
      const replaced = async (sent: SentTransaction) => {
        for (const row of waiting) await this.#set(kind.rows, row.id, { ...sent, attempts: row.attempts + 1 });
        return true;
      };
      if ((await this.sender.advance(first, replaced)) === "nonce taken") {
        for (const row of waiting) {
          await this.#set(kind.rows, row.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null });
        }
      }
      return;
    }
    if (receipt.status === "reverted") {
      // Only a revert asks whether the transaction carried a batch (the rows' own call or not).
      const batched = rows.length > 1 || data.toLowerCase() !== kind.encode(first).toLowerCase();
      for (const row of rows) {
        if (await kind.used(row)) await this.#reconcileUsed(kind, row, data);
        else await this.#reverted(kind, row, batched, data, receipt.blockNumber);
      }
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      const batched = rows.length > 1 || data.toLowerCase() !== kind.encode(first).toLowerCase();
      for (const row of rows) {
        if (batched && kind.carried && !kind.carried(receipt.logs, row)) {
          // The batch went through without this row's call: done by another first, or no longer due.
          const failure = (await kind.used(row)) || !kind.skipped ? kind.usedFailure(row) : kind.skipped(row);
          await this.#fail(kind, row, failure, receipt.blockNumber);
          continue;
        }
        await this.#confirm(kind, row, {
          txHash: receipt.transactionHash,
          blockNumber: receipt.blockNumber,
          facts: kind.fromLogs(receipt.logs, row),
        });
      }
    }
  }

  /**
   * A mined transaction reverted. Its own call fails with the contracts'
   * reason. A batch's call is replayed alone on the state the batch met: the
   * refused one fails with its reason; the others were stopped by it and go
   * again at once, each alone (as long as attempts remain: the batch's send
   * counted one), so a spender who makes batches revert (its note spent
   * meanwhile by another call) costs the others one reverted batch each time.
   */
  async #reverted<Row extends JobRow, Facts>(
    kind: CallKind<Row, Facts>,
    row: Row,
    batched: boolean,
    data: Hex,
    blockNumber: bigint,
  ): Promise<void> {
    const replay = { from: this.sender.address, to: kind.to, blockNumber };
    if (!batched) return this.#fail(kind, row, await refusalOfMined(this.chain, { ...replay, data }), blockNumber);
    const own = await refusalOfMined(this.chain, { ...replay, data: kind.encode(row) });
    if (own.code !== "transaction_reverted" || row.attempts >= this.options.maxAttempts) {
      return this.#fail(kind, row, own, blockNumber);
    }
    const cleared = { status: "queued" as const, tx_hash: null, raw_tx: null, nonce: null };
    if (await this.#set(kind.rows, row.id, cleared, "submitted")) await this.#submit(kind, { ...row, ...cleared });
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
      const moved = await kind.rows.update(
        tx,
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
      const moved = await kind.rows.update(
        tx,
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
