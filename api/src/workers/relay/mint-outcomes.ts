// How a relayed mint ends: confirmed (with the position it opened and its
// account's mint.confirmed), reconciled from the chain when its nullifier is
// spent, or failed with its proof given back or rejected as the chain says.
// Apart from mint-relay.ts, which decides when a mint goes and how.
import type { Hex } from "viem";
import { stableMinterAbi } from "@zsd/sdk";
import { formatZsd } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { type ComplianceService } from "../../domain/compliance/compliance.ts";
import { ROOT_EXPIRED_REASON, rootState } from "../../domain/mints/proofs.ts";
import { failMint, mintRows, proofsOfFailedMints, settleProof } from "../../domain/mints/store.ts";
import type { Failure } from "../../domain/reverts.ts";
import { type JobRow, type Logs, positionOpenedIn } from "./mint-batch.ts";

export const SPENT: Failure = {
  code: "nullifier_already_spent",
  reason: "The deposit was already minted by another proof (nullifier spent).",
};

export class MintOutcomes {
  #leftProofsSettled = false;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly compliance: ComplianceService | undefined,
  ) {}

  /**
   * Proofs of mints that failed before failed mints gave their proofs back
   * (they stayed consumed, holding their deposits): settled once per worker run.
   */
  async settleLeftProofs(): Promise<void> {
    if (this.#leftProofsSettled) return;
    const rows = await proofsOfFailedMints(this.db);
    for (const row of rows) await this.#settleProof(this.db, row.id, row.mint_id, await this.#proofVerdict(row));
    if (rows.length < 100) this.#leftProofsSettled = true;
  }

  /** Confirms mints of one transaction (those no other pass moved) and tells their accounts' agents, in one transaction. */
  async confirm(jobs: JobRow[], fields: { tx_hash?: string; block_number: number }, logs?: Logs): Promise<void> {
    const positions = await Promise.all(
      jobs.map((job) => this.#positionOpened((fields.tx_hash ?? job.tx_hash) as Hex, job.nullifier_hash, logs)),
    );
    const confirmed = await this.db.transaction(async (tx) => {
      let moved = 0;
      for (const [i, job] of jobs.entries()) {
        const positionId = positions[i]!;
        const changed = { status: "confirmed", settled_at: new Date(), position_id: positionId, ...fields };
        if (!(await mintRows.update(tx, job.id, changed, { column: "status", value: job.status }))) continue;
        moved++;
        await this.compliance?.emitIn(tx, job.account_id, "mint.confirmed", {
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
    if (confirmed > 0) this.compliance?.queued();
  }

  /** The position the mint opened, from its transaction's logs. */
  async #positionOpened(txHash: Hex, nullifierHash: string, logs?: Logs): Promise<string | null> {
    const all = logs ?? (await this.chain.read(() => this.chain.client.getTransactionReceipt({ hash: txHash }))).logs;
    return positionOpenedIn(all, nullifierHash);
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
  async reconcileSpent(job: JobRow): Promise<void> {
    const event = await this.#mintedEvent(BigInt(job.nullifier_hash));
    if (
      event &&
      event.args.recipient?.toLowerCase() === job.recipient.toLowerCase() &&
      String(event.args.mintAmount) === job.amount
    ) {
      await this.confirm([job], { tx_hash: event.transactionHash, block_number: Number(event.blockNumber) });
    } else {
      await this.fail(job, SPENT, {}, true);
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
  async fail(
    job: JobRow,
    failure: Failure,
    fields: Record<string, unknown> = {},
    spent?: boolean,
    rejected?: string,
  ): Promise<void> {
    const verdict = rejected ? { rejected } : await this.#proofVerdict(job, spent);
    await this.db.transaction(async (tx) => {
      if (await failMint(tx, job.id, job.status, failure, fields.block_number ?? null)) {
        await this.#settleProof(tx, job.proof_id, job.id, verdict);
        await this.compliance?.emitIn(tx, job.account_id, "mint.failed", {
          mintId: job.id,
          failureCode: failure.code,
          failureReason: failure.reason,
        });
      }
    });
    this.compliance?.queued();
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
    await settleProof(db, proofId, mintId, verdict);
  }
}
