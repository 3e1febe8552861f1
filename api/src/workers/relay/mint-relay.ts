// The mint relay: queued mints go out through the transaction sender and are
// followed to confirmation. A deposit whose nullifier is already spent is
// reconciled from the chain's Minted event (ours, whichever of a replaced pair
// was mined, or a copy of our proof sent by someone else), never minted twice.
// Queued mints go out together in one mintBatch (./mint-batch.ts), each
// checked off-chain and simulated alone first; a batch that reverts anyway is
// taken apart: each item simulated again, the refused ones failed with their
// reason, the rest queued again without newcomers (on their rows, so a
// restart keeps it): one customer's item costs the others one reverted batch
// at most. How a mint ends (confirmed, reconciled, failed) is ./mint-outcomes.ts.
import { type Hex, parseTransaction } from "viem";
import { mintCallOf } from "../../domain/mints/mints.ts";
import { insertHintFor } from "../../domain/positions/queue.ts";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { type Failure, refusalOf, refusalOfMined } from "../../domain/reverts.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { heldAmong, isFree } from "../../domain/compliance/store.ts";
import { lockQueuedMint, lockQueuedMints, markSubmitted, mintJobs, mintRows } from "../../domain/mints/store.ts";
import {
  type JobRow,
  type Ready,
  byTransaction,
  callRowOf,
  expiringRoots,
  isMintBatch,
  mintBatchCallOf,
  mintBatchGas,
  mintBatchSimulationGas,
  mintBatchSize,
  packBatches,
} from "./mint-batch.ts";
import { MintOutcomes, SPENT } from "./mint-outcomes.ts";
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
  /**
   * Checks a stored proof off-chain (the API's verification key) before it goes into a batch: false
   * for a proof that does not verify; a throw is no verdict (the mint goes alone, the chain judges).
   */
  verifyProof?: (proof: unknown, publicSignals: string[]) => Promise<boolean>;
}

const INVALID: Failure = {
  code: "invalid_proof",
  reason: "The stored proof no longer verifies against the collateral circuit: submit the proof again.",
};

const REVERTED: Failure = {
  code: "transaction_reverted",
  reason: "Its batch transaction reverted as many times as the relay tries a mint: submit the proof again.",
};

export class MintRelay {
  /** Whether the last pass held queued mints back for their batch to fill. */
  #held = false;
  readonly #outcomes: MintOutcomes;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: MintRelayOptions,
  ) {
    this.#outcomes = new MintOutcomes(db, chain, options.compliance);
  }

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
    // The survivors of a reverted batch go without newcomers: alone, or with that batch's other survivors only;
    // a mint whose root is about to expire goes alone too (it could revert a batch mined a little later).
    const expiring = await expiringRoots(
      this.chain,
      queued.filter((job) => !job.alone).map((job) => job.root),
    );
    const alone = (job: JobRow) => job.alone || expiring.has(job.root);
    for (const job of queued.filter(alone)) await this.#submit(job);
    const groups = new Map<string, JobRow[]>();
    for (const job of queued.filter((job) => !alone(job))) {
      const key = job.survived_tx ?? "";
      groups.set(key, [...(groups.get(key) ?? []), job]);
    }
    for (const group of groups.values())
      for (let i = 0; i < group.length; i += max) await this.#submitBatch(group.slice(i, i + max));
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
    await this.#outcomes.settleLeftProofs();
  }

  async #jobs(status: "queued" | "submitted"): Promise<JobRow[]> {
    return mintJobs(this.db, status, this.options.compliance !== undefined);
  }

  async #set(id: string, changes: Record<string, unknown>, expectedStatus?: string): Promise<boolean> {
    // Settling time, for GET /v1/mints and the relay benchmark (the sender stamps submitted_at).
    const fields = { ...changes };
    if (changes.status === "confirmed" || changes.status === "failed") fields.settled_at = new Date();
    return mintRows.update(
      this.db,
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
      await this.#outcomes.reconcileSpent(job);
      return undefined;
    }
    const hint = await insertHintFor(this.chain, {
      collateralZat: BigInt(job.collateral_floor_zat),
      debt: BigInt(job.amount),
    });
    const data = mintCallOf({ ...callRowOf(job), hint });
    try {
      // The simulation: a mint our contracts refuse now is failed at once, with their reason.
      const request = { account: this.sender.address, to: this.chain.minter, data };
      const gas = how === "estimate" ? await this.chain.client.estimateGas(request) : 0n;
      if (how === "call") await this.chain.client.call(request);
      return { job, data, gas, change_leaf: job.change_leaf, hint };
    } catch (error) {
      const refusal = await refusalOf(this.chain, error);
      // Spent, whatever else the run met first (a pause, say): reconciled, as a mint sent alone would be.
      if (refusal?.code === SPENT.code || (how === "call" && (await spent()))) await this.#outcomes.reconcileSpent(job);
      else if (refusal) await this.#outcomes.fail(job, refusal);
      else await this.#unanswered(job, error);
      return undefined;
    }
  }

  /** No refusal of ours: the node failed to answer; it may answer on a later pass. */
  async #unanswered(job: JobRow, error: unknown): Promise<void> {
    const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
    if (job.attempts + 1 >= this.options.maxAttempts) {
      await this.#outcomes.fail(job, {
        code: "simulation_failed",
        reason: `The mint could not be simulated ${job.attempts + 1} times: ${reason}`,
      });
    } else {
      await this.#set(job.id, { attempts: job.attempts + 1, failure_reason: reason });
    }
  }

  async #sendAlone({ job, data, gas }: Ready): Promise<void> {
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
    // One alone is simulated again for its estimate (a batch's items were run once, not estimated).
    for (const [i, item] of checked.entries()) if (item === "alone") await this.#submit(jobs[i]!);
    const ready = checked.filter((item): item is Ready => item !== undefined && item !== "alone");
    for (const batch of packBatches(ready, this.options.mintBatchMax ?? 1)) {
      if (batch.length === 1) await this.#submit(batch[0]!.job);
      else await this.#sendBatch(batch);
    }
  }

  /** The stored proof verified off-chain, then the mint simulated alone; "alone" when the verifier gave no verdict. */
  async #check(job: JobRow): Promise<Ready | "alone" | undefined> {
    const verify = this.options.verifyProof;
    if (verify) {
      const signals = [job.change_leaf, job.root, job.nullifier_hash, job.collateral_floor_zat, job.binding_hash];
      let verified: boolean;
      try {
        verified = await verify(job.proof, signals);
      } catch {
        // The verifier failed, not the proof (it verified when stored): alone, the chain is its judge.
        return "alone";
      }
      // A proof that does not verify would make the whole batch's check fail: it never joins one.
      if (!verified) {
        // Minted by its own proof already (sent, then back in the queue): reconciled before any verdict.
        if (await this.chain.isSpent(BigInt(job.nullifier_hash))) await this.#outcomes.reconcileSpent(job);
        else await this.#outcomes.fail(job, INVALID, {}, undefined, INVALID.reason);
        return undefined;
      }
    }
    return this.#simulate(job, "call");
  }

  /**
   * Sends a batch simulated whole. Mints a hold or another pass took while it
   * was signed are dropped and the rest signed again (at the same nonce, as
   * nothing was broadcast): a customer holding their own mint cannot keep the
   * others' from going.
   */
  async #sendBatch(batch: Ready[]): Promise<void> {
    let items = batch;
    while (items.length > 1) {
      const rows = items.map(({ job, hint }) => ({ ...callRowOf(job), hint }));
      const data = mintBatchCallOf(rows);
      const gas = mintBatchGas(rows);
      try {
        // Whole: each item passed alone, but meets the totals the earlier ones leave (the system floor).
        // Within its budget less the walk's headroom, which stays free for positions filed meanwhile.
        await this.chain.client.call({
          account: this.sender.address,
          to: this.chain.minter,
          data,
          gas: mintBatchSimulationGas(rows),
        });
      } catch {
        // Refused together, or not answered: each goes alone and meets its own refusal there.
        for (const { job } of items) await this.#submit(job);
        return;
      }
      const jobs = items.map(({ job }) => job);
      let gone: string[] = [];
      const record = async (sent: SentTransaction) => (gone = await this.#recordBatch(jobs, sent)).length === 0;
      // The limit is the batch's fixed budget and the walk's headroom (mint-batch.ts), not an estimate: nothing on top.
      await this.sender.send(this.chain.minter, data, gas, record, 0n);
      if (gone.length === 0) return;
      items = items.filter(({ job }) => !gone.includes(job.id));
    }
    if (items.length === 1) await this.#submit(items[0]!.job);
  }

  /**
   * Records a signed batch on every one of its mints, or on none (then it is
   * not broadcast): the rows locked, all still queued and none held, as
   * #recordSend does for one. Answers the mints that kept it from being
   * recorded (none when it was).
   */
  async #recordBatch(jobs: JobRow[], sent: SentTransaction): Promise<string[]> {
    const ids = jobs.map((job) => job.id);
    return this.db.transaction(async (tx) => {
      const still = await lockQueuedMints(tx, ids);
      const gone = ids.filter((id) => !still.has(id));
      if (this.options.compliance) {
        gone.push(...(await heldAmong(tx, "mint", ids)).filter((id) => still.has(id)));
      }
      if (gone.length > 0) return gone;
      await markSubmitted(tx, ids, sent, this.sender.address);
      return [];
    });
  }

  /**
   * Writes onto every mint of a transaction still submitted with the
   * transaction this pass read, in one transaction: a row another worker
   * moved on (replaced, queued again) is left as it is.
   */
  async #setSubmitted(jobs: JobRow[], fields: (job: JobRow) => Record<string, unknown>): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      let moved = false;
      for (const job of jobs) {
        const guard = [
          { column: "status", value: "submitted" },
          { column: "tx_hash", value: job.tx_hash! },
        ] as const;
        if (await mintRows.update(tx, job.id, fields(job), [...guard])) moved = true;
      }
      return moved;
    });
  }

  /**
   * Follows a batch's transaction. Mined: every item minted (a batch is all
   * or nothing). Reverted: taken apart, each item simulated alone at the
   * head; the spent are reconciled, the refused fail with their reason, the
   * rest are queued again without newcomers: together once if a culprit was
   * found, else (or after a second revert) each alone; and a revert counts
   * against maxAttempts. Not mined: as a single mint's, for the items not yet spent.
   */
  async #followBatch(jobs: JobRow[]): Promise<void> {
    const first = jobs[0]!;
    const receipt = await this.sender.receipt(first.tx_hash!);
    if (!receipt) {
      const open: JobRow[] = [];
      for (const job of jobs) {
        if (await this.chain.isSpent(BigInt(job.nullifier_hash))) await this.#outcomes.reconcileSpent(job);
        else open.push(job);
      }
      if (open.length === 0) return;
      // Broadcast only if this pass still owns a row: another worker may have replaced it first.
      const replaced = (sent: SentTransaction) =>
        this.#setSubmitted(open, (job) => ({ ...sent, attempts: job.attempts + 1 }));
      // An item spent meanwhile would revert the batch for all: a replacement carries the others only.
      const rows = open.map((job) => callRowOf(job));
      const call = open.length < jobs.length ? { data: mintBatchCallOf(rows), gas: mintBatchGas(rows) } : undefined;
      if ((await this.sender.advance(first, replaced, call)) === "nonce taken") {
        await this.#setSubmitted(open, () => ({ status: "queued", tx_hash: null, raw_tx: null, nonce: null }));
      }
      return;
    }
    if (receipt.status === "reverted") {
      // An item that left the batch while it waited (spent, reconciled) was a culprit found already.
      let refused = jobs.length < mintBatchSize(first.raw_tx);
      const again: JobRow[] = [];
      for (const job of jobs) {
        if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
          refused = true;
          await this.#outcomes.reconcileSpent(job);
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
          await this.#outcomes.fail(job, refusal, { block_number: Number(receipt.blockNumber) });
        }
      }
      const block = { block_number: Number(receipt.blockNumber) };
      // Each send counted an attempt: a mint whose batches kept reverting stops here.
      for (const job of again.filter((job) => job.attempts >= this.options.maxAttempts))
        await this.#outcomes.fail(job, REVERTED, block);
      const requeued = again.filter((job) => job.attempts < this.options.maxAttempts);
      const isolated = (job: JobRow) =>
        refused && job.survived_tx === null ? { survived_tx: first.tx_hash } : { alone: true };
      await this.#setSubmitted(requeued, (job) => ({
        status: "queued",
        tx_hash: null,
        raw_tx: null,
        nonce: null,
        ...isolated(job),
      }));
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#outcomes.confirm(jobs, { block_number: Number(receipt.blockNumber) }, receipt.logs);
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
      if (!(await lockQueuedMint(tx, id))) return false;
      if (!(await isFree(tx, "mint", id))) return false;
      return mintRows.update(tx, id, fields, { column: "status", value: "queued" });
    });
  }

  async #follow(job: JobRow): Promise<void> {
    const receipt = await this.sender.receipt(job.tx_hash!);
    if (!receipt) {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#outcomes.reconcileSpent(job);
      }
      const replaced = (sent: SentTransaction) =>
        this.#setSubmitted([job], () => ({ ...sent, attempts: job.attempts + 1 }));
      if ((await this.sender.advance(job, replaced)) === "nonce taken") {
        await this.#setSubmitted([job], () => ({ status: "queued", tx_hash: null, raw_tx: null, nonce: null }));
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#outcomes.reconcileSpent(job);
      }
      const failure = await refusalOfMined(this.chain, {
        from: this.sender.address,
        to: this.chain.minter,
        data: parseTransaction(job.raw_tx as Hex).data!,
        blockNumber: receipt.blockNumber,
      });
      await this.#outcomes.fail(job, failure, { block_number: Number(receipt.blockNumber) });
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#outcomes.confirm([job], { block_number: Number(receipt.blockNumber) });
    }
  }
}
