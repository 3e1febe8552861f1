// The relay worker: one per relayer key, so it alone owns the key's nonces.
// Mints wait in the database; the worker signs, records the transaction
// (write-ahead) and only then broadcasts, follows it to confirmation, and on
// restart resumes from the database. A deposit whose nullifier is already
// spent is reconciled from the chain's Minted event, never minted twice.
// Payouts of burned redemptions are moved on by ./payouts.ts in the same pass.
import { type Address, type Hex, encodeFunctionData, keccak256, zeroAddress } from "viem";
import { parseEventLogs, parseTransaction } from "viem";
import { encodeMintCall, redemptionsAbi, stableMinterAbi, toSolidityProof } from "@zsd/sdk";
import { randomId } from "../domain/ids.ts";
import type { Payouts } from "./payouts.ts";
import type { Chain } from "../adapters/chain.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import { ROOT_EXPIRED_REASON, rootState } from "../domain/proofs.ts";

interface JobRow {
  id: string;
  proof_id: string;
  submitted_at: Date | string | null;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  attempts: number;
  recipient: string;
  amount: string;
  proof: unknown;
  root: string;
  nullifier_hash: string;
  collateral_floor_zat: string;
  proof_recipient: string;
  relayer: string;
  fee: string;
}

interface RedemptionRow {
  id: string;
  status: string;
  owner: string;
  amount: string;
  withdraw_address: string;
  deadline: string;
  signature: { v: number; r: string; s: string };
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  redemption_id: string | null;
  attempts: number;
  /** The owner's Redemptions nonce the signature was made for (null on requests older than migration 8). */
  owner_nonce: string | null;
}

const MAX_ATTEMPTS = 20;

export class RelayWorker {
  readonly address: Address;
  readonly #wallet: ReturnType<Chain["wallet"]>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;
  #nextScan = 0;
  #nextPayouts = 0;
  #renewal: NodeJS.Timeout | undefined;
  #leftProofsSettled = false;
  /** Until this worker first holds its lease, it may take over one its own replica left (same workerId). */
  #resuming: boolean;
  /** This worker's name in the lease table: its replica's id and this run's. */
  readonly holder: string;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    relayerKey: Hex,
    private readonly options: {
      confirmations: number;
      pollMs: number;
      /** A transaction pending longer than this is replaced with higher fees. */
      stuckAfterMs: number;
      /** Finds and records new custody deposits (zcashd custody), every `scanEveryMs`. */
      scanDeposits?: () => Promise<unknown>;
      scanEveryMs?: number;
      payouts?: Payouts;
      /** Payouts move on at most this often (they need no faster than the Zcash side moves). */
      payoutEveryMs?: number;
      /** How long a pass's lease on the relayer key lasts; another replica takes over after it. */
      leaseMs?: number;
      /** Name in the lease table; a stable one lets a restarted replica resume without waiting. */
      workerId?: string;
      onError?: (error: unknown) => void;
    },
  ) {
    this.#wallet = chain.wallet(relayerKey);
    this.address = this.#wallet.account.address;
    this.holder = `${options.workerId ?? "worker"}:${randomId("run")}`;
    this.#resuming = options.workerId !== undefined;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    // Renewed apart from passes, so that a long pass does not outlive its lease.
    const leaseMs = this.options.leaseMs ?? 15_000;
    this.#renewal = setInterval(() => void this.#renewLease().catch(() => undefined), Math.max(leaseMs / 3, 10));
    const loop = async () => {
      if (this.#stopped) return;
      this.#running = this.tick().catch((error) => this.options.onError?.(error));
      await this.#running;
      if (!this.#stopped) this.#timer = setTimeout(loop, this.options.pollMs);
    };
    void loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#renewal);
    await this.#running;
    // Hand the key over at once rather than after the lease runs out.
    await this.db
      .query("DELETE FROM worker_leases WHERE name = $1 AND holder = $2", [this.#leaseName, this.holder])
      .catch(() => undefined);
  }

  get #leaseName(): string {
    return `relayer:${this.address.toLowerCase()}`;
  }

  /**
   * Takes or renews the lease on this relayer key, so that of several API
   * replicas sharing a database one worker signs with the key at a time.
   * (Mints cannot double however passes overlap: the nullifier is spent once.
   * Payouts move by compare-and-set on a version, so a stale pass stops.)
   * A restarted replica (same workerId) takes back its predecessor's lease at
   * once instead of waiting for it to run out; replicas need distinct ids.
   */
  async #holdLease(): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO worker_leases (name, holder, expires_at) VALUES ($1, $2, now() + $3::int * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE worker_leases.holder = EXCLUDED.holder OR worker_leases.expires_at < now()
         OR ($4::boolean AND split_part(worker_leases.holder, ':', 1) = split_part(EXCLUDED.holder, ':', 1))
       RETURNING holder`,
      [this.#leaseName, this.holder, this.options.leaseMs ?? 15_000, this.#resuming],
    );
    if (rows.length > 0) this.#resuming = false;
    return rows.length > 0;
  }

  /** Extends the lease while this worker holds it (never takes it). */
  async #renewLease(): Promise<void> {
    await this.db.query(
      `UPDATE worker_leases SET expires_at = now() + $3::int * interval '1 millisecond' WHERE name = $1 AND holder = $2`,
      [this.#leaseName, this.holder, this.options.leaseMs ?? 15_000],
    );
  }

  /** Runs one part of a pass; its failure is reported and leaves the other parts running. */
  async #part(work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  async #jobs(status: string): Promise<JobRow[]> {
    return this.db.query<JobRow>(
      `SELECT m.*, p.proof, p.root, p.nullifier_hash, p.collateral_floor_zat, p.recipient AS proof_recipient, p.relayer, p.fee
       FROM mints m JOIN proofs p ON p.id = m.proof_id
       WHERE m.status = $1 ORDER BY m.created_at LIMIT 50`,
      [status],
    );
  }

  /**
   * Updates a row of `table`, optionally only while `guard` still holds (so a
   * pass never overwrites a state another pass reached first).
   */
  async #update(
    table: "mints" | "redemption_requests",
    id: string,
    fields: Record<string, unknown>,
    guard?: { column: "status" | "relay_status"; value: string },
  ): Promise<boolean> {
    const keys = Object.keys(fields);
    const assignments = keys.map((k, i) => `${k} = $${i + 2}`).join(", ");
    const where = guard ? ` AND ${guard.column} = $${keys.length + 2}` : "";
    const rows = await this.db.query(
      `UPDATE ${table} SET ${assignments}, updated_at = now() WHERE id = $1${where} RETURNING id`,
      [id, ...keys.map((k) => fields[k]), ...(guard ? [guard.value] : [])],
    );
    return rows.length > 0;
  }

  async #set(id: string, changes: Record<string, unknown>, expectedStatus?: string): Promise<boolean> {
    // Stage times, for GET /v1/mints and the relay benchmark.
    const fields = { ...changes };
    if (changes.status === "submitted") fields.submitted_at = new Date();
    if (changes.status === "confirmed" || changes.status === "failed") fields.settled_at = new Date();
    return this.#update("mints", id, fields, expectedStatus ? { column: "status", value: expectedStatus } : undefined);
  }

  #setRedemption(id: string, fields: Record<string, unknown>, expectedRelayStatus?: string): Promise<boolean> {
    return this.#update(
      "redemption_requests",
      id,
      fields,
      expectedRelayStatus ? { column: "relay_status", value: expectedRelayStatus } : undefined,
    );
  }

  /**
   * A sent transaction the node no longer knows: if its nonce went to another
   * transaction, `requeue` (sign again); otherwise send the recorded one again.
   */
  async #resendOrRequeue(rawTx: Hex, nonce: number | null, requeue: () => Promise<unknown>): Promise<void> {
    const next = await this.chain.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    if (nonce !== null && next > nonce) await requeue();
    else await this.#broadcast(rawTx);
  }

  /**
   * One pass: follow submitted transactions, then submit what is queued, then
   * move payouts on. Only the holder of the relayer key's lease runs passes.
   */
  async tick(): Promise<void> {
    if (!(await this.#holdLease())) return;
    const { scanDeposits, payouts } = this.options;
    if (scanDeposits && Date.now() >= this.#nextScan) {
      this.#nextScan = Date.now() + (this.options.scanEveryMs ?? 30_000);
      await this.#part(scanDeposits);
    }
    if (!this.#leftProofsSettled) await this.#part(() => this.#settleLeftProofs());
    await this.#part(async () => {
      for (const job of await this.#jobs("submitted")) await this.#follow(job);
      for (const job of await this.#jobs("queued")) await this.#submit(job);
    });
    await this.#part(async () => {
      for (const r of await this.#redemptions("submitted")) await this.#followRedemption(r);
      for (const r of await this.#redemptions("queued")) await this.#submitRedemption(r);
    });
    if (payouts && Date.now() >= this.#nextPayouts) {
      this.#nextPayouts = Date.now() + (this.options.payoutEveryMs ?? 1000);
      await this.#part(() => payouts.tick());
    }
  }

  async #redemptions(relayStatus: string): Promise<RedemptionRow[]> {
    return this.db.query<RedemptionRow>(
      "SELECT * FROM redemption_requests WHERE relay_status = $1 AND status = 'requested' ORDER BY created_at LIMIT 50",
      [relayStatus],
    );
  }

  /** Signs at the next pending nonce; the caller records the result before broadcasting. */
  async #sign(to: Address, data: Hex, gas: bigint) {
    const [nonce, fees] = await Promise.all([
      this.chain.client.getTransactionCount({ address: this.address, blockTag: "pending" }),
      this.chain.client.estimateFeesPerGas(),
    ]);
    const raw = await this.#wallet.signTransaction({
      to,
      data,
      gas: (gas * 12n) / 10n,
      nonce,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return { raw, hash: keccak256(raw), nonce };
  }

  async #submitRedemption(r: RedemptionRow): Promise<void> {
    const sig = r.signature;
    const data = encodeFunctionData({
      abi: redemptionsAbi,
      functionName: "redeemWithPermit",
      args: [
        r.owner as Address,
        BigInt(r.amount),
        r.withdraw_address,
        BigInt(r.deadline),
        sig.v,
        sig.r as Hex,
        sig.s as Hex,
      ],
    });
    let gas: bigint;
    try {
      gas = await this.chain.client.estimateGas({ account: this.address, to: this.chain.redemptions, data });
    } catch (error) {
      if (r.owner_nonce !== null && (await this.#ownerNonce(r.owner)) > BigInt(r.owner_nonce)) {
        await this.#setRedemption(r.id, {
          status: "failed",
          relay_status: "done",
          failure_reason: `Another redemption signed by the owner at nonce ${r.owner_nonce} went through first; this one can never go through (sign a new one).`,
        });
        return;
      }
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      const terminal =
        r.attempts + 1 >= MAX_ATTEMPTS || /InvalidSignature|ExpiredSignature|InsufficientBalance/.test(String(error));
      await this.#setRedemption(
        r.id,
        terminal
          ? { status: "failed", relay_status: "done", failure_reason: `The redemption was refused: ${reason}` }
          : { attempts: r.attempts + 1, failure_reason: reason },
      );
      return;
    }
    const signed = await this.#sign(this.chain.redemptions, data, gas);
    if (
      !(await this.#setRedemption(
        r.id,
        {
          relay_status: "submitted",
          tx_hash: signed.hash,
          raw_tx: signed.raw,
          nonce: signed.nonce,
          attempts: r.attempts + 1,
        },
        "queued",
      ))
    )
      return;
    await this.#broadcast(signed.raw);
  }

  #ownerNonce(owner: string): Promise<bigint> {
    return this.chain.client.readContract({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "nonces",
      args: [owner as Address],
    });
  }

  async #followRedemption(r: RedemptionRow): Promise<void> {
    const receipt = await this.chain.client.getTransactionReceipt({ hash: r.tx_hash as Hex }).catch(() => undefined);
    if (!receipt) {
      const pending = await this.chain.client.getTransaction({ hash: r.tx_hash as Hex }).catch(() => undefined);
      if (!pending && r.raw_tx) {
        await this.#resendOrRequeue(r.raw_tx as Hex, r.nonce, () =>
          this.#setRedemption(r.id, { relay_status: "queued", tx_hash: null, raw_tx: null, nonce: null }),
        );
      }
      return;
    }
    if (receipt.status === "reverted") {
      await this.#setRedemption(r.id, {
        status: "failed",
        relay_status: "done",
        failure_reason: "The redemption transaction reverted.",
      });
      return;
    }
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "RedemptionRequested" });
    await this.#setRedemption(r.id, {
      status: "burned",
      relay_status: "done",
      redemption_id: event!.args.id.toString(),
      zat_due: event!.args.zatDue.toString(),
    });
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
      await this.#set(job.id, {
        status: "confirmed",
        tx_hash: event.transactionHash,
        block_number: Number(event.blockNumber),
      });
    } else {
      await this.#fail(job, "The deposit was already minted by another proof (nullifier spent).", {}, true);
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
  async #fail(job: JobRow, reason: string, fields: Record<string, unknown> = {}, spent?: boolean): Promise<void> {
    const verdict = await this.#proofVerdict(job, spent);
    await this.db.transaction(async (tx) => {
      const failed = await tx.query(
        `UPDATE mints SET status = 'failed', failure_reason = $3, block_number = coalesce($4, block_number),
           settled_at = now(), updated_at = now()
         WHERE id = $1 AND status = $2 RETURNING id`,
        [job.id, job.status, reason, fields.block_number ?? null],
      );
      if (failed.length > 0) await this.#settleProof(tx, job.proof_id, job.id, verdict);
    });
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

  /**
   * Proofs of mints that failed before failed mints gave their proofs back
   * (they stayed consumed, holding their deposits): settled once per worker run.
   */
  async #settleLeftProofs(): Promise<void> {
    const rows = await this.db.query<{ id: string; mint_id: string; nullifier_hash: string; root: string }>(
      `SELECT p.id, p.mint_id, p.nullifier_hash, p.root FROM mints m JOIN proofs p ON p.mint_id = m.id
       WHERE m.status = 'failed' AND p.status = 'consumed' LIMIT 100`,
    );
    for (const row of rows) await this.#settleProof(this.db, row.id, row.mint_id, await this.#proofVerdict(row));
    if (rows.length < 100) this.#leftProofsSettled = true;
  }

  async #submit(job: JobRow): Promise<void> {
    const nullifierHash = BigInt(job.nullifier_hash);
    if (await this.chain.isSpent(nullifierHash)) {
      return this.#reconcileSpent(job);
    }
    const proof = toSolidityProof(job.proof as never);
    const request = {
      root: BigInt(job.root),
      nullifierHash,
      collateralFloorZat: BigInt(job.collateral_floor_zat),
      mintAmount: BigInt(job.amount),
      recipient: job.proof_recipient as Address,
      relayer: (job.relayer || zeroAddress) as Address,
      fee: BigInt(job.fee),
    };
    const data = encodeMintCall(proof, request);
    let gas: bigint;
    try {
      gas = await this.chain.client.estimateGas({ account: this.address, to: this.chain.minter, data });
    } catch (error) {
      // A revert now (stale price, paused) may pass later; give up after MAX_ATTEMPTS.
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (job.attempts + 1 >= MAX_ATTEMPTS) {
        await this.#fail(job, `The mint kept reverting: ${reason}`);
      } else {
        await this.#set(job.id, { attempts: job.attempts + 1, failure_reason: reason });
      }
      return;
    }
    const { raw, hash, nonce } = await this.#sign(this.chain.minter, data, gas);
    // Write-ahead: the transaction is on record before it can be mined.
    if (
      !(await this.#set(
        job.id,
        { status: "submitted", tx_hash: hash, raw_tx: raw, nonce, relayer: this.address, attempts: job.attempts + 1 },
        "queued",
      ))
    )
      return;
    await this.#broadcast(raw);
  }

  /**
   * A transaction waiting too long is replaced at the same nonce with fees
   * raised by a quarter (nodes want at least +10% to replace), recorded
   * before it is sent. Whichever of the two is mined, the nullifier check
   * above reconciles the mint from its Minted event.
   */
  async #replace(job: JobRow): Promise<void> {
    const previous = parseTransaction(job.raw_tx as Hex);
    const current = await this.chain.client.estimateFeesPerGas();
    const bump = (old: bigint | undefined, now: bigint) => {
      const raised = ((old ?? 0n) * 125n + 99n) / 100n;
      return raised > now ? raised : now;
    };
    const raw = await this.#wallet.signTransaction({
      to: previous.to!,
      data: previous.data!,
      gas: previous.gas!,
      nonce: previous.nonce!,
      maxFeePerGas: bump(previous.maxFeePerGas, current.maxFeePerGas),
      maxPriorityFeePerGas: bump(previous.maxPriorityFeePerGas, current.maxPriorityFeePerGas),
    });
    await this.#set(job.id, {
      tx_hash: keccak256(raw),
      raw_tx: raw,
      submitted_at: new Date(),
      attempts: job.attempts + 1,
    });
    // "replacement underpriced" or the old one mined meanwhile: the next pass decides.
    await this.#broadcast(raw);
  }

  async #broadcast(raw: Hex): Promise<void> {
    try {
      await this.chain.client.sendRawTransaction({ serializedTransaction: raw });
    } catch {
      // Already known, nonce used, or the node is down: #follow decides from the chain.
    }
  }

  async #follow(job: JobRow): Promise<void> {
    const hash = job.tx_hash as Hex;
    const receipt = await this.chain.client.getTransactionReceipt({ hash }).catch(() => undefined);
    if (!receipt) {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#reconcileSpent(job);
      }
      const pending = await this.chain.client.getTransaction({ hash }).catch(() => undefined);
      if (!pending && job.raw_tx) {
        await this.#resendOrRequeue(job.raw_tx as Hex, job.nonce, () =>
          this.#set(job.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null }),
        );
      } else if (
        pending &&
        job.raw_tx &&
        job.submitted_at &&
        Date.now() - new Date(job.submitted_at).getTime() > this.options.stuckAfterMs
      ) {
        await this.#replace(job);
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (await this.chain.isSpent(BigInt(job.nullifier_hash))) {
        return this.#reconcileSpent(job);
      }
      await this.#fail(job, "The mint transaction reverted.", { block_number: Number(receipt.blockNumber) });
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#set(job.id, { status: "confirmed", block_number: Number(receipt.blockNumber) });
    }
  }
}
