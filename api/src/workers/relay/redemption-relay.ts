// The redemption relay: an owner's signed redemption (redeemWithPermit) goes
// out through the transaction sender; once mined it is "burned" and its payout
// is ./payouts.ts's. A signature whose owner nonce was used is reconciled from
// the chain: by our call (whichever of a replaced pair was mined, or a copy of
// it sent by someone else) the redemption went through; by another signed
// redemption this one never can.
import { type Address, type Hex, encodeFunctionData, parseEventLogs, parseTransaction } from "viem";
import { redemptionsAbi } from "@zsd/sdk";
import { parseZec } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { REDEMPTION_HEADROOM } from "../../adapters/gas.ts";
import type { Database } from "../../adapters/db/index.ts";
import { type Failure, refusalOf, refusalOfMined } from "../../domain/reverts.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { isFree } from "../../domain/compliance/store.ts";
import {
  type RedemptionRow,
  lockQueuedRequest,
  redemptionRows,
  requestsToRelay,
} from "../../domain/redemptions/store.ts";
import type { SentTransaction, TransactionSender } from "./sender.ts";

/** What the relay keeps of a PayoutRequested event. */
interface Burn {
  transactionHash: Hex;
  blockNumber: bigint | null;
  args: { id: bigint; zatDue: bigint };
}

export interface RedemptionRelayOptions {
  /** Failed simulations without a refusal of our contracts (a node error) before a redemption is failed. */
  maxAttempts: number;
  /** Holds (a held redemption is not sent) and the account's redemption.failed events. */
  compliance?: ComplianceService;
}

export class RedemptionRelay {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly sender: TransactionSender,
    private readonly options: RedemptionRelayOptions,
  ) {}

  /** Follows submitted redemptions, then submits queued ones. */
  async pass(): Promise<void> {
    for (const r of await this.#redemptions("submitted")) await this.#follow(r);
    for (const r of await this.#redemptions("queued")) await this.#submit(r);
  }

  async #redemptions(relayStatus: "queued" | "submitted"): Promise<RedemptionRow[]> {
    return requestsToRelay(this.db, relayStatus, this.options.compliance !== undefined);
  }

  #set(id: string, fields: Record<string, unknown>, expectedRelayStatus?: string): Promise<boolean> {
    return redemptionRows.update(
      this.db,
      id,
      fields,
      expectedRelayStatus ? { column: "relay_status", value: expectedRelayStatus } : undefined,
    );
  }

  async #submit(r: RedemptionRow): Promise<void> {
    const sig = r.signature;
    const data = encodeFunctionData({
      abi: redemptionsAbi,
      functionName: "redeemWithPermit",
      args: [
        r.owner as Address,
        BigInt(r.amount),
        parseZec(sig.minZec ?? "0"),
        // A request from before sealed addresses has none: the contract refuses it like any bad envelope.
        r.sealed_address ?? "0x",
        BigInt(r.deadline),
        sig.v,
        sig.r as Hex,
        sig.s as Hex,
      ],
    });
    let gas: bigint;
    try {
      // The simulation: a redemption our contracts refuse now is failed at once, with their reason.
      gas = await this.chain.client.estimateGas({ account: this.sender.address, to: this.chain.redemptions, data });
    } catch (error) {
      if (r.owner_nonce !== null && (await this.#ownerNonce(r.owner)) > BigInt(r.owner_nonce)) {
        return this.#fail(r, {
          code: "nonce_used",
          reason: `Another redemption signed by the owner at nonce ${r.owner_nonce} went through first; this one can never go through (sign a new one).`,
        });
      }
      const refusal = await refusalOf(this.chain, error);
      if (refusal) return this.#fail(r, refusal);
      // No refusal of ours: the node failed to answer; it may answer on a later pass.
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (r.attempts + 1 >= this.options.maxAttempts) {
        return this.#fail(r, {
          code: "simulation_failed",
          reason: `The redemption could not be simulated ${r.attempts + 1} times: ${reason}`,
        });
      }
      await this.#set(r.id, { attempts: r.attempts + 1, failure_reason: reason });
      return;
    }
    await this.sender.send(
      this.chain.redemptions,
      data,
      gas,
      (sent) => this.#recordSend(r.id, { relay_status: "submitted", ...sent, attempts: r.attempts + 1 }),
      // The burn may settle up to 24 positions under 100% inline (PositionManager.redeem).
      REDEMPTION_HEADROOM,
    );
  }

  /**
   * Records the signed burn unless the row moved on or a screener held it
   * since the queue was read (the simulation leaves time for both): false and
   * nothing is broadcast. The row is locked before the hold is read, in a
   * statement of its own, as a hold locks it before it is written: one
   * committed while we waited is seen.
   */
  async #recordSend(id: string, fields: Record<string, unknown>): Promise<boolean> {
    if (!this.options.compliance) return this.#set(id, fields, "queued");
    return this.db.transaction(async (tx) => {
      if (!(await lockQueuedRequest(tx, id))) return false;
      if (!(await isFree(tx, "redemption", id))) return false;
      return redemptionRows.update(tx, id, fields, { column: "relay_status", value: "queued" });
    });
  }

  async #fail(r: RedemptionRow, failure: Failure): Promise<void> {
    await this.db.transaction(async (tx) => {
      const failed = await redemptionRows.update(
        tx,
        r.id,
        { status: "failed", relay_status: "done", failure_code: failure.code, failure_reason: failure.reason },
        { column: "relay_status", value: r.relay_status },
      );
      if (failed) {
        await this.options.compliance?.emitIn(tx, r.account_id, "redemption.failed", {
          redemptionId: r.id,
          failureCode: failure.code,
          failureReason: failure.reason,
          zecHeld: null,
          payoutId: null,
          redirect: null,
        });
      }
    });
    this.options.compliance?.queued();
  }

  #ownerNonce(owner: string): Promise<bigint> {
    return this.chain.client.readContract({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "nonces",
      args: [owner as Address],
    });
  }

  async #follow(r: RedemptionRow): Promise<void> {
    const receipt = await this.sender.receipt(r.tx_hash!);
    if (!receipt) {
      const replaced = (sent: SentTransaction) => this.#set(r.id, { ...sent, attempts: r.attempts + 1 });
      if ((await this.sender.advance(r, replaced)) === "nonce taken") {
        const burn = await this.#burnOf(r);
        if (burn) await this.#burned(r.id, burn);
        else await this.#set(r.id, { relay_status: "queued", tx_hash: null, raw_tx: null, nonce: null });
      }
      return;
    }
    if (receipt.status === "reverted") {
      const failure = await refusalOfMined(this.chain, {
        from: this.sender.address,
        to: this.chain.redemptions,
        data: parseTransaction(r.raw_tx as Hex).data!,
        blockNumber: receipt.blockNumber,
      });
      return this.#fail(r, failure);
    }
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    await this.#burned(r.id, event!);
  }

  /** The PayoutRequested event of a mined transaction carrying this request's signed call, if any. */
  async #burnOf(r: RedemptionRow): Promise<Burn | undefined> {
    // An owner nonce not yet used: the signature has not gone through.
    if (r.owner_nonce !== null && (await this.#ownerNonce(r.owner)) <= BigInt(r.owner_nonce)) return undefined;
    const call = parseTransaction(r.raw_tx as Hex).data?.toLowerCase();
    const events = await this.chain.client.getContractEvents({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      eventName: "PayoutRequested",
      args: { owner: r.owner as Address },
      fromBlock: BigInt(this.chain.deployment.contracts.Redemptions!.startBlock),
      strict: true,
    });
    for (const event of events.reverse()) {
      const tx = await this.chain.client.getTransaction({ hash: event.transactionHash });
      if (tx.to?.toLowerCase() === this.chain.redemptions.toLowerCase() && tx.input.toLowerCase() === call) {
        return event;
      }
    }
    return undefined;
  }

  async #burned(id: string, burn: Burn): Promise<void> {
    await this.#set(id, {
      status: "burned",
      relay_status: "done",
      tx_hash: burn.transactionHash,
      block_number: burn.blockNumber?.toString() ?? null,
      redemption_id: burn.args.id.toString(),
      zat_due: burn.args.zatDue.toString(),
    });
  }
}
