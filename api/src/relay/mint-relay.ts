// The mint relay: queued mints go out through the transaction sender and are
// followed to confirmation. A deposit whose nullifier is already spent is
// reconciled from the chain's Minted event (ours, whichever of a replaced pair
// was mined, or a copy of our proof sent by someone else), never minted twice.
// Queued mints go out together in one mintBatch (./mint-batch.ts), each
// checked off-chain and simulated alone first; a batch that reverts anyway is
// taken apart: each item simulated again, the refused ones failed with their
// reason, the rest queued again.
import { type Hex, parseTransaction } from "viem";
import { stableMinterAbi } from "@zsd/sdk";
import { mintCallOf } from "../domain/mints.ts";
import type { Chain } from "../adapters/chain.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import { ROOT_EXPIRED_REASON, rootState } from "../domain/proofs.ts";
import { type Failure, refusalOf, refusalOfMined } from "../domain/reverts.ts";
import { type ComplianceService, notHeld } from "../domain/compliance.ts";
import { formatZsd } from "@zsd/sdk/units";
import {
  type JobRow,
  type Logs,
  type Ready,
  byTransaction,
  callRowOf,
  isMintBatch,
  mintBatchCallOf,
  mintBatchGas,
  packBatches,
  positionOpenedIn,
} from "./mint-batch.ts";
import { updateRow } from "./rows.ts";
import type { SentTransaction, TransactionSender } from "./sender.ts";

export interface MintRelayOptions {
  /** Blocks on top of a mint's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a mint is failed. */
  maxAttempts: number;
  /** Holds (a held mint is not sent) and the account's mint.confirmed / mint.failed events. */
  compliance?: ComplianceService;
  /** Most mints one transaction carries (mintBatch); 1 (the default) sends each alone. */
  mintBatchMax?: number;
  /** How long the oldest queued mint waits for others to fill its batch. */
  mintBatchWaitMs?: number;
  /** Checks a stored proof off-chain (the API's verification key) before it goes into a batch. */
  verifyProof?: (proof: unknown, publicSignals: string[]) => Promise<boolean>;
}

const SPENT: Failure = {
  code: "nullifier_already_spent",
  reason: "The deposit was already minted by another proof (nullifier spent).",
};

const INVALID: Failure = {
  code: "invalid_proof",
  reason: "The stored proof no longer verifies against the collateral circuit: submit the proof again.",
};

export class MintRelay {
  #leftProofsSettled = false;
  /**
   * Mints of a batch that reverted though none of them was refused alone:
   * they go out alone next, so a batch that cannot go through is not sent again.
   */
  readonly #alone = new Set<string>();
  /** Whether the last pass held queued mints back for their batch to fill. */
  #held = false;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: MintRelayOptions,
  ) {}

  /** Follows submitted mints, then submits queued ones. */
  async pass(): Promise<void> {
    for (const jobs of byTransaction(await this.#jobs("submitted"))) {
      if (jobs.length === 1 && !isMintBatch(jobs[0]!.raw_tx)) await this.#follow(jobs[0]!);
      else await this.#followBatch(jobs);
    }
    const queued = await this.#jobs("queued");
    const max = this.options.mintBatchMax ?? 1;
    this.#held = false;
    if (queued.length === 0) return;
    if (max === 1) {
      for (const job of queued) await this.#submit(job);
      return;
    }
    // A batch not yet full waits for more, until its oldest mint waited the window out.
    const oldest = Math.max(0, ...queued.map((job) => Number(job.waited_ms)));
    if (queued.length < max && oldest < (this.options.mintBatchWaitMs ?? 0)) {
      this.#held = true;
      return;
    }
    for (let i = 0; i < queued.length; i += max) await this.#submitBatch(queued.slice(i, i + max));
  }

  /** Whether queued mints wait for their batch to fill: the worker keeps its fast poll until they go. */
  get waiting(): boolean {
    return this.#held;
  }

  /**
   * Proofs of mints that failed before failed mints gave their proofs back
   * (they stayed consumed, holding their deposits): settled once per worker run.
   */
  async settleLeftProofs(): Promise<void> {
    if (this.#leftProofsSettled) return;
    const rows = await this.db.query<{ id: string; mint_id: string; nullifier_hash: string; root: string }>(
      `SELECT p.id, p.mint_id, p.nullifier_hash, p.root FROM mints m JOIN proofs p ON p.mint_id = m.id
       WHERE m.status = 'failed' AND p.status = 'consumed' LIMIT 100`,
    );
    for (const row of rows) await this.#settleProof(this.db, row.id, row.mint_id, await this.#proofVerdict(row));
    if (rows.length < 100) this.#leftProofsSettled = true;
  }

  async #jobs(status: "queued" | "submitted"): Promise<JobRow[]> {
    // A queued mint held by compliance waits; one already sent is followed whatever happens.
    const held = status === "queued" && this.options.compliance ? ` AND ${notHeld("mint", "m.id")}` : "";
    // Sent ones by transaction, so that a batch's rows are followed together.
    const order = status === "queued" ? "m.created_at" : "m.nonce, m.tx_hash, m.created_at";
    return this.db.query<JobRow>(
      `SELECT m.*, p.proof, p.root, p.nullifier_hash, p.collateral_floor_zat, p.recipient AS proof_recipient, p.relayer, p.fee,
         p.change_leaf, p.owner, p.binding_hash, EXTRACT(EPOCH FROM (now() - m.created_at)) * 1000 AS waited_ms
       FROM mints m JOIN proofs p ON p.id = m.proof_id
       WHERE m.status = $1${held} ORDER BY ${order} LIMIT ${status === "queued" ? 50 : 200}`,
      [status],
    );
  }

  /** Confirms mints of one transaction (those no other pass moved) and tells their accounts' agents, in one transaction. */
  async #confirm(jobs: JobRow[], fields: { tx_hash?: string; block_number: number }, logs?: Logs): Promise<void> {
    const positions = await Promise.all(
      jobs.map((job) => this.#positionOpened((fields.tx_hash ?? job.tx_hash) as Hex, job.nullifier_hash, logs)),
    );
    const confirmed = await this.db.transaction(async (tx) => {
      let moved = 0;
      for (const [i, job] of jobs.entries()) {
        const positionId = positions[i]!;
        const changed = { status: "confirmed", settled_at: new Date(), position_id: positionId, ...fields };
        if (!(await updateRow(tx, "mints", job.id, changed, { column: "status", value: job.status }))) continue;
        moved++;
        await this.options.compliance?.emitIn(tx, job.account_id, "mint.confirmed", {
          mintId: job.id,
          amount: formatZsd(BigInt(job.amount)),
          recipient: job.recipient,
          positionId,
          txHash: fields.tx_hash ?? job.tx_hash,
          blockNumber: fields.block_number,
        });
      }
      return moved;
    });
    if (confirmed > 0) this.options.compliance?.queued();
  }

  /** The position the mint opened, from its transaction's logs. */
  async #positionOpened(txHash: Hex, nullifierHash: string, logs?: Logs): Promise<string | null> {
    const all = logs ?? (await this.chain.read(() => this.chain.client.getTransactionReceipt({ hash: txHash }))).logs;
    return positionOpenedIn(all, nullifierHash);
  }

  async #set(id: string, changes: Record<string, unknown>, expectedStatus?: string): Promise<boolean> {
    // Settling time, for GET /v1/mints and the relay benchmark (the sender stamps submitted_at).
    const fields = { ...changes };
    if (changes.status === "confirmed" || changes.status === "failed") fields.settled_at = new Date();
    return updateRow(
      this.db,
      "mints",
      id,
      fields,
      expectedStatus ? { column: "status", value: expectedStatus } : undefined,
    );
  }

  async #submit(job: JobRow): Promise<void> {
    const ready = await this.#simulate(job, "estimate");
    if (ready) await this.#sendAlone(ready);
  }

  /**
   * A queued mint simulated alone, as `mint` at the chain's head: ready to go,
   * or moved on here (reconciled, failed with our contracts' reason, or its
   * attempt counted when the node did not answer). A mint bound for a batch
   * is run once ("call"), as the batch's gas limit is fixed; one sent alone
   * is estimated.
   */
  async #simulate(job: JobRow, how: "estimate" | "call"): Promise<Ready | undefined> {
    const spent = () => this.chain.isSpent(BigInt(job.nullifier_hash));
    // A mint bound for a batch asks after its nullifier only when its run fails (a run that passes spent
    // nothing): a batch of 16 makes 16 fewer requests to the node.
    if (how === "estimate" && (await spent())) {
      await this.#reconcileSpent(job);
      return undefined;
    }
    const data = mintCallOf(callRowOf(job));
    try {
      // The simulation: a mint our contracts refuse now is failed at once, with their reason.
      const request = { account: this.sender.address, to: this.chain.minter, data };
      const gas = how === "estimate" ? await this.chain.client.estimateGas(request) : 0n;
      if (how === "call") await this.chain.client.call(request);
      return { job, data, gas, change_leaf: job.change_leaf };
    } catch (error) {
      const refusal = await refusalOf(this.chain, error);
      // Spent, whatever else the run met first (a pause, say): reconciled, as a mint sent alone would be.
      if (refusal?.code === SPENT.code || (how === "call" && (await spent()))) await this.#reconcileSpent(job);
      else if (refusal) await this.#fail(job, refusal);
      else await this.#unanswered(job, error);
      return undefined;
    }
  }

  /** No refusal of ours: the node failed to answer; it may answer on a later pass. */
  async #unanswered(job: JobRow, error: unknown): Promise<void> {
    const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
    if (job.attempts + 1 >= this.options.maxAttempts) {
      await this.#fail(job, {
        code: "simulation_failed",
        reason: `The mint could not be simulated ${job.attempts + 1} times: ${reason}`,
      });
    } else {
      await this.#set(job.id, { attempts: job.attempts + 1, failure_reason: reason });
    }
  }

  async #sendAlone({ job, data, gas }: Ready): Promise<void> {
    this.#alone.delete(job.id);
    await this.sender.send(this.chain.minter, data, gas, (sent) =>
      this.#recordSend(job.id, {
        status: "submitted",
        ...sent,
        relayer: this.sender.address,
        attempts: job.attempts + 1,
      }),
    );
  }

  /**
   * Queued mints sent together: each checked off-chain and simulated alone
   * (the refused fail alone, with their reason), then the rest as batches
   * simulated whole; a batch refused whole goes out item by item instead.
   */
  async #submitBatch(jobs: JobRow[]): Promise<void> {
    const checked = await Promise.all(jobs.map((job) => this.#check(job)));
    const ready = checked.filter((item): item is Ready => item !== undefined);
    // One alone is simulated again for its estimate (a batch's items were run once, not estimated).
    for (const { job } of ready.filter(({ job }) => this.#alone.has(job.id))) await this.#submit(job);
    const together = ready.filter(({ job }) => !this.#alone.has(job.id));
    for (const batch of packBatches(together, this.options.mintBatchMax ?? 1)) {
      if (batch.length === 1) await this.#submit(batch[0]!.job);
      else await this.#sendBatch(batch);
    }
  }

  /** The stored proof verified off-chain, then the mint simulated alone. */
  async #check(job: JobRow): Promise<Ready | undefined> {
    const verify = this.options.verifyProof;
    if (verify) {
      const signals = [job.change_leaf, job.root, job.nullifier_hash, job.collateral_floor_zat, job.binding_hash];
      // A proof that does not verify would make the whole batch's check fail: it never joins one.
      if (!(await verify(job.proof, signals).catch(() => false))) {
        await this.#fail(job, INVALID, {}, undefined, INVALID.reason);
        return undefined;
      }
    }
    return this.#simulate(job, "call");
  }

  async #sendBatch(batch: Ready[]): Promise<void> {
    const rows = batch.map(({ job }) => callRowOf(job));
    const data = mintBatchCallOf(rows);
    const gas = mintBatchGas(rows);
    try {
      // Whole: each item passed alone, but meets the totals the earlier ones leave (the system floor).
      await this.chain.client.call({ account: this.sender.address, to: this.chain.minter, data, gas });
    } catch {
      // Refused together, or not answered: each goes alone and meets its own refusal there.
      for (const { job } of batch) await this.#submit(job);
      return;
    }
    const jobs = batch.map(({ job }) => job);
    // The limit is the batch's fixed budget (mint-batch.ts), not an estimate: no headroom on top.
    await this.sender.send(this.chain.minter, data, gas, (sent) => this.#recordBatch(jobs, sent), 0n);
  }

  /**
   * Records a signed batch on every one of its mints, or on none (then it is
   * not broadcast): the rows locked, all still queued and none held, as
   * #recordSend does for one.
   */
  async #recordBatch(jobs: JobRow[], sent: SentTransaction): Promise<boolean> {
    const ids = jobs.map((job) => job.id);
    return this.db.transaction(async (tx) => {
      const queued = await tx.query(
        "SELECT id FROM mints WHERE id = ANY($1::text[]) AND status = 'queued' ORDER BY id FOR UPDATE",
        [ids],
      );
      if (queued.length !== ids.length) return false;
      if (this.options.compliance) {
        const [held] = await tx.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM unnest($1::text[]) AS u(id) WHERE NOT ${notHeld("mint", "u.id")}`,
          [ids],
        );
        if (Number(held?.n) > 0) return false;
      }
      await tx.query(
        `UPDATE mints SET status = 'submitted', tx_hash = $2, raw_tx = $3, nonce = $4, submitted_at = $5, relayer = $6,
           attempts = attempts + 1, updated_at = now()
         WHERE id = ANY($1::text[]) AND status = 'queued'`,
        [ids, sent.tx_hash, sent.raw_tx, sent.nonce, sent.submitted_at, this.sender.address],
      );
      return true;
    });
  }

  /** Writes onto every mint of a batch still submitted, in one transaction. */
  async #setSubmitted(jobs: JobRow[], fields: (job: JobRow) => Record<string, unknown>): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const job of jobs)
        await updateRow(tx, "mints", job.id, fields(job), { column: "status", value: "submitted" });
    });
  }

  /**
   * Follows a batch's transaction. Mined: every item minted (a batch is all
   * or nothing). Reverted: taken apart, each item simulated alone at the
   * head; the spent are reconciled, the refused fail with their reason, the
   * rest are queued again (and go alone if none was refused: the batch would
   * fail again). Not mined: as a single mint's, for the items not yet spent.
   */
  async #followBatch(jobs: JobRow[]): Promise<void> {
    const first = jobs[0]!;
    const receipt = await this.sender.receipt(first.tx_hash!);
    if (!receipt) {
      const open: JobRow[] = [];
      for (const job of jobs) {
        if (await this.chain.isSpent(BigInt(job.nullifier_hash))) await this.#reconcileSpent(job);
        else open.push(job);
      }
      if (open.length === 0) return;
      const replaced = async (sent: SentTransaction) => {
        await this.#setSubmitted(open, (job) => ({ ...sent, attempts: job.attempts + 1 }));
        return true;
      };
      if ((await this.sender.advance(first, replaced)) === "nonce taken") {
        await this.#setSubmitted(open, () => ({ status: "queued", tx_hash: null, raw_tx: null, nonce: null }));
      }
      return;
    }
    if (receipt.status === "reverted") {
      let refused = false;
      const again: JobRow[] = [];
      for (const job of jobs) {
        if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
          refused = true;
          await this.#reconcileSpent(job);
          continue;
        }
        const data = mintCallOf(callRowOf(job));
        try {
          await this.chain.client.estimateGas({ account: this.sender.address, to: this.chain.minter, data });
          again.push(job);
        } catch (error) {
          const refusal = await refusalOf(this.chain, error);
          if (!refusal) {
            again.push(job); // The node did not answer: its next simulation decides.
            continue;
          }
          refused = true;
          await this.#fail(job, refusal, { block_number: Number(receipt.blockNumber) });
        }
      }
      if (!refused) for (const job of again) this.#alone.add(job.id);
      await this.#setSubmitted(again, () => ({ status: "queued", tx_hash: null, raw_tx: null, nonce: null }));
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#confirm(jobs, { block_number: Number(receipt.blockNumber) }, receipt.logs);
    }
  }

  /**
   * Records the signed mint unless the row moved on or a screener held it
   * since the queue was read (the simulation leaves time for both): false and
   * nothing is broadcast. The row is locked before the hold is read, in a
   * statement of its own, as a hold locks it before it is written: one
   * committed while we waited is seen.
   */
  async #recordSend(id: string, fields: Record<string, unknown>): Promise<boolean> {
    if (!this.options.compliance) return this.#set(id, fields, "queued");
    return this.db.transaction(async (tx) => {
      const [queued] = await tx.query("SELECT 1 FROM mints WHERE id = $1 AND status = 'queued' FOR UPDATE", [id]);
      if (!queued) return false;
      const [free] = await tx.query<{ free: boolean }>(`SELECT ${notHeld("mint", "$1")} AS free`, [id]);
      if (!free?.free) return false;
      return updateRow(tx, "mints", id, fields, { column: "status", value: "queued" });
    });
  }

  async #follow(job: JobRow): Promise<void> {
    const receipt = await this.sender.receipt(job.tx_hash!);
    if (!receipt) {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#reconcileSpent(job);
      }
      const replaced = (sent: SentTransaction) => this.#set(job.id, { ...sent, attempts: job.attempts + 1 });
      if ((await this.sender.advance(job, replaced)) === "nonce taken") {
        await this.#set(job.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null });
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#reconcileSpent(job);
      }
      const failure = await refusalOfMined(this.chain, {
        from: this.sender.address,
        to: this.chain.minter,
        data: parseTransaction(job.raw_tx as Hex).data!,
        blockNumber: receipt.blockNumber,
      });
      await this.#fail(job, failure, { block_number: Number(receipt.blockNumber) });
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#confirm([job], { block_number: Number(receipt.blockNumber) });
    }
  }

  /** The Minted event of a nullifier, if any mint spent it. */
  async #mintedEvent(nullifierHash: bigint) {
    const [event] = await this.chain.client.getContractEvents({
      address: this.chain.minter,
      abi: stableMinterAbi,
      eventName: "Minted",
      args: { nullifierHash },
      fromBlock: BigInt(this.chain.deployment.contracts.StableMinter!.startBlock),
    });
    return event;
  }

  /** The nullifier is spent: this mint happened (ours or a copy of our proof) or another one took the deposit. */
  async #reconcileSpent(job: JobRow): Promise<void> {
    const event = await this.#mintedEvent(BigInt(job.nullifier_hash));
    if (
      event &&
      event.args.recipient?.toLowerCase() === job.recipient.toLowerCase() &&
      String(event.args.mintAmount) === job.amount
    ) {
      await this.#confirm([job], { tx_hash: event.transactionHash, block_number: Number(event.blockNumber) });
    } else {
      await this.#fail(job, SPENT, {}, true);
    }
  }

  /**
   * Fails a mint and, in the same transaction, decides from the chain what
   * becomes of its proof. A spent nullifier means the deposit can never mint
   * again, and a root older than the minter accepts means this proof cannot:
   * the proof is rejected (freeing the deposit for a new proof in the second
   * case). Otherwise (a pause, a stale price, a revert) the proof is verified
   * again and the same proof may be minted once the cause is gone. The chain
   * is read first: if it cannot be, nothing changes and the next pass decides.
   */
  async #fail(
    job: JobRow,
    failure: Failure,
    fields: Record<string, unknown> = {},
    spent?: boolean,
    rejected?: string,
  ): Promise<void> {
    const verdict = rejected ? { rejected } : await this.#proofVerdict(job, spent);
    await this.db.transaction(async (tx) => {
      const failed = await tx.query(
        `UPDATE mints SET status = 'failed', failure_code = $3, failure_reason = $4,
           block_number = coalesce($5, block_number), settled_at = now(), updated_at = now()
         WHERE id = $1 AND status = $2 RETURNING id`,
        [job.id, job.status, failure.code, failure.reason, fields.block_number ?? null],
      );
      if (failed.length > 0) {
        await this.#settleProof(tx, job.proof_id, job.id, verdict);
        await this.options.compliance?.emitIn(tx, job.account_id, "mint.failed", {
          mintId: job.id,
          failureCode: failure.code,
          failureReason: failure.reason,
        });
      }
    });
    this.options.compliance?.queued();
  }

  async #proofVerdict(proof: { nullifier_hash: string; root: string }, spent?: boolean) {
    if (spent ?? (await this.chain.isSpent(BigInt(proof.nullifier_hash)))) {
      return { rejected: "The deposit was already minted by another proof." };
    }
    if ((await rootState(this.chain, BigInt(proof.root))) === "expired") return { rejected: ROOT_EXPIRED_REASON };
    return { rejected: undefined };
  }

  /** Moves the consumed proof of a failed mint on: rejected (with the reason) or verified again. */
  async #settleProof(db: Queryable, proofId: string, mintId: string, verdict: { rejected: string | undefined }) {
    await db.query(
      verdict.rejected
        ? `UPDATE proofs SET status = 'rejected', rejection_reason = $3, updated_at = now()
           WHERE id = $1 AND mint_id = $2 AND status = 'consumed'`
        : `UPDATE proofs SET status = 'verified', mint_id = NULL, updated_at = now()
           WHERE id = $1 AND mint_id = $2 AND status = 'consumed'`,
      verdict.rejected ? [proofId, mintId, verdict.rejected] : [proofId, mintId],
    );
  }
}
