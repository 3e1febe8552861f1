// The mint relay: queued mints go out through the transaction sender and are
// followed to confirmation. A deposit whose nullifier is already spent is
// reconciled from the chain's Minted event (ours, whichever of a replaced pair
// was mined, or a copy of our proof sent by someone else), never minted twice.
import { type Address, type Hex, parseTransaction, zeroAddress } from "viem";
import { parseEventLogs } from "viem";
import { stableMinterAbi } from "@zsd/sdk";
import { mintCallOf } from "../domain/mints.ts";
import type { Chain } from "../adapters/chain.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import { ROOT_EXPIRED_REASON, rootState } from "../domain/proofs.ts";
import { type Failure, refusalOf, refusalOfMined } from "../domain/reverts.ts";
import { type ComplianceService, notHeld } from "../domain/compliance.ts";
import { formatZsd } from "@zsd/sdk/units";
import { updateRow } from "./rows.ts";
import type { SentTransaction, TransactionSender } from "./sender.ts";

interface JobRow {
  id: string;
  account_id: string;
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
  change_leaf: string;
  owner: string | null;
}

export interface MintRelayOptions {
  /** Blocks on top of a mint's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a mint is failed. */
  maxAttempts: number;
  /** Holds (a held mint is not sent) and the account's mint.confirmed / mint.failed events. */
  compliance?: ComplianceService;
}

const SPENT: Failure = {
  code: "nullifier_already_spent",
  reason: "The deposit was already minted by another proof (nullifier spent).",
};

export class MintRelay {
  #leftProofsSettled = false;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: MintRelayOptions,
  ) {}

  /** Follows submitted mints, then submits queued ones. */
  async pass(): Promise<void> {
    for (const job of await this.#jobs("submitted")) await this.#follow(job);
    for (const job of await this.#jobs("queued")) await this.#submit(job);
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
    return this.db.query<JobRow>(
      `SELECT m.*, p.proof, p.root, p.nullifier_hash, p.collateral_floor_zat, p.recipient AS proof_recipient, p.relayer, p.fee,
         p.change_leaf, p.owner
       FROM mints m JOIN proofs p ON p.id = m.proof_id
       WHERE m.status = $1${held} ORDER BY m.created_at LIMIT 50`,
      [status],
    );
  }

  /** Confirms a mint (if no other pass moved it) and tells the account's agents, in one transaction. */
  async #confirm(job: JobRow, fields: { tx_hash?: string; block_number: number }): Promise<void> {
    const positionId = await this.#positionOpened((fields.tx_hash ?? job.tx_hash) as Hex);
    const confirmed = await this.db.transaction(async (tx) => {
      const moved = await updateRow(
        tx,
        "mints",
        job.id,
        { status: "confirmed", settled_at: new Date(), position_id: positionId, ...fields },
        { column: "status", value: job.status },
      );
      if (moved) {
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
    if (confirmed) this.options.compliance?.queued();
  }

  /** The position the mint transaction opened (its PositionOpened event). */
  async #positionOpened(txHash: Hex): Promise<string | null> {
    const receipt = await this.chain.read(() => this.chain.client.getTransactionReceipt({ hash: txHash }));
    const [opened] = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "PositionOpened" });
    return opened ? opened.args.positionId.toString() : null;
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
    const nullifierHash = BigInt(job.nullifier_hash);
    if (await this.chain.isSpent(nullifierHash)) {
      return this.#reconcileSpent(job);
    }
    const data = mintCallOf({ ...job, mint_amount: job.amount, recipient: job.proof_recipient });
    let gas: bigint;
    try {
      // The simulation: a mint our contracts refuse now is failed at once, with their reason.
      gas = await this.chain.client.estimateGas({ account: this.sender.address, to: this.chain.minter, data });
    } catch (error) {
      const refusal = await refusalOf(this.chain, error);
      if (refusal?.code === SPENT.code) return this.#reconcileSpent(job);
      if (refusal) return this.#fail(job, refusal);
      // No refusal of ours: the node failed to answer; it may answer on a later pass.
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (job.attempts + 1 >= this.options.maxAttempts) {
        await this.#fail(job, {
          code: "simulation_failed",
          reason: `The mint could not be simulated ${job.attempts + 1} times: ${reason}`,
        });
      } else {
        await this.#set(job.id, { attempts: job.attempts + 1, failure_reason: reason });
      }
      return;
    }
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
      await this.#confirm(job, { block_number: Number(receipt.blockNumber) });
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
      await this.#confirm(job, { tx_hash: event.transactionHash, block_number: Number(event.blockNumber) });
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
  async #fail(job: JobRow, failure: Failure, fields: Record<string, unknown> = {}, spent?: boolean): Promise<void> {
    const verdict = await this.#proofVerdict(job, spent);
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
