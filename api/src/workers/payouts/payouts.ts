// Payouts of redemptions (and of collateral released from positions and
// notes): every PayoutRequested on-chain (relayed by us or sent by a
// holder directly) becomes a row, is paid by the custody once, then settled
// on-chain by custody (completePayout), or failed (failPayout)
// when the wallet keeps refusing it, or at once when its sealed address does
// not open with custody's keys for its owner, holds no payable address, or is
// an envelope an earlier payout used (a replay): "unreadable_address", on the
// chain as in reads. A failed payout is not refunded: its ZEC
// stays held on-chain for its owner, who redirects it (POST
// /v1/redemptions/{id}/redirect) to another address (a new payout, a new row)
// or into a note; the row then becomes "redirected".
//
// The states, drawn in domain/payouts/status.ts: pending → sending → sent →
// settling → completed; failing → held → redirected; review.
//
// "sending" is recorded before the wallet is asked to pay: a row found there
// by a later pass may or may not have been paid, so it is never sent again
// automatically. Every move is a compare-and-set on the row's version, and a
// pass that loses one stops there: a worker acting on a stale read (another
// replica moved the row meanwhile) can neither send nor fail it. One payout is
// in flight at a time, so that two never compete for the wallet's notes.
// The rows and their SQL are in domain/payouts/store.ts, the words of their
// states in domain/payouts/status.ts, and the event scan that makes them in
// discovery.ts.
import { redemptionsAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { CustodyCalls } from "../../adapters/custody/custody-calls.ts";
import { type Custody, PayoutNotSent, PayoutRefused } from "../../adapters/custody/index.ts";
import { recordPayout } from "../../adapters/custody/ledger.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { isRevert } from "../../domain/errors.ts";
import { NOT_PAYABLE, ON_CHAIN, type PayoutStatus, REJECTED, failureReason } from "../../domain/payouts/status.ts";
import {
  type PayoutRow,
  heldAfterLocking,
  leaveOperationForReview,
  movePayout,
  nextPending,
  noteTrouble,
  payoutInFlight,
  payoutRows,
  rejectedPending,
  rejectionCode,
  setWithdrawAddress,
} from "../../domain/payouts/store.ts";
import { type DiscoveryOptions, discoverPayouts, openPayout } from "./discovery.ts";

export { type PayoutRow, resolveReview } from "../../domain/payouts/store.ts";
export type { PayoutStatus } from "../../domain/payouts/status.ts";

export interface PayoutOptions extends DiscoveryOptions {
  /** Refused payments before the payout is failed on-chain (its ZEC held for the owner to redirect). */
  maxAttempts: number;
  /** Wait before the first retry; doubles each time, up to an hour. */
  retryMs: number;
  /** Told of a step that failed (and will be tried again). */
  onError?: (error: unknown) => void;
  /** Told of every payout held for an operator. */
  onReview?: (redemptionId: string, reason: string) => void;
  /** Told of every payout settled on-chain (the reserves are read again after each). */
  onSettled?: (redemptionId: string) => void;
}

const MAX_RETRY_MS = 3_600_000;
/** Contract status of a payout. */
const { requested: REQUESTED, completed: COMPLETED, failed: FAILED, redirected: REDIRECTED } = ON_CHAIN;

export class Payouts {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly custody: Custody,
    private readonly custodyCalls: CustodyCalls,
    private readonly options: PayoutOptions,
  ) {}

  /** One pass: find new redemptions, follow payouts in flight, start the next one. */
  async tick(): Promise<void> {
    await this.discover().catch((error: unknown) => this.options.onError?.(error));
    // A "sending" row at the start of a pass was left by a pass that stopped while asking the wallet.
    for (const p of await this.#rows("sending")) {
      await this.#review(p, "The worker stopped while handing this payout to the wallet; it may have been paid.");
    }
    for (const p of await this.#rows("sent")) await this.#isolated(p, () => this.#follow(p));
    for (const p of await this.#rows("settling")) await this.#isolated(p, () => this.#settle(p));
    for (const p of await this.#rows("failing")) await this.#isolated(p, () => this.#fail(p));
    if (this.options.compliance) {
      // A screener rejected it before it was paid: failed on-chain, its ZEC held for the owner.
      const rejected = await rejectedPending(this.db);
      for (const p of rejected) {
        await this.#isolated(p, async () => {
          if (await this.#move(p, "failing", { last_error: `${REJECTED}${await rejectionCode(this.db, p)}` })) {
            await this.#fail(p);
          }
        });
      }
    }
    if (await payoutInFlight(this.db)) return;
    // A redemption held by compliance (or waiting for a verdict) is not paid until it is released.
    const next = await nextPending(this.db, this.options.compliance !== undefined);
    if (next) await this.#isolated(next, () => this.#start(next));
  }

  /** Records the PayoutRequested events with enough confirmations since the last pass (discovery.ts). */
  discover(): Promise<number> {
    return discoverPayouts(this.db, this.chain, this.options);
  }

  #rows(status: PayoutStatus): Promise<PayoutRow[]> {
    return payoutRows(this.db, status);
  }

  /** Moves a payout on if nobody moved it since this pass read it; false means the caller stops (domain/payouts/store.ts). */
  #move(p: PayoutRow, to: PayoutStatus, fields: Record<string, unknown> = {}, via?: Queryable): Promise<boolean> {
    return movePayout(this.db, this.options.compliance, p, to, fields, via);
  }

  /**
   * One payout's trouble (a node or wallet that does not answer, a refusal
   * we do not expect) is written on its row and leaves the others moving;
   * the row is tried again next pass.
   */
  async #isolated(p: PayoutRow, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      // A failing row's last_error says why it is failed (failureReason reads it for the on-chain reason
      // and the event): a step's trouble goes to onError only, or a retried failure would say "payout_failed".
      await noteTrouble(this.db, p.redemption_id, String((error as Error).message).slice(0, 500));
      this.options.onError?.(error);
    }
  }

  async #review(p: PayoutRow, reason: string): Promise<void> {
    if (await this.#move(p, "review", { last_error: reason })) this.options.onReview?.(p.redemption_id, reason);
  }

  async #onChain(id: bigint) {
    return this.chain.client.readContract({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "getPayout",
      args: [id],
    });
  }

  async #start(p: PayoutRow): Promise<void> {
    const id = BigInt(p.redemption_id);
    const onChain = await this.#onChain(id);
    if (onChain.status === COMPLETED) return void (await this.#move(p, "completed"));
    if (onChain.status === FAILED) return void (await this.#move(p, "held"));
    if (onChain.status === REDIRECTED) return void (await this.#move(p, "redirected"));
    if (
      onChain.status !== REQUESTED ||
      onChain.owner.toLowerCase() !== p.owner.toLowerCase() ||
      onChain.amount.toString() !== p.amount ||
      onChain.zatDue.toString() !== p.zat_due
    ) {
      await this.#review(p, "The redemption on-chain no longer matches its request event (reorganised?).");
      return;
    }
    let address = p.withdraw_address;
    if (address === null && !p.last_error?.startsWith(NOT_PAYABLE) && p.sealed_address && p.sealed_address_hash) {
      // Found while custody lacked the key it names: opened again (replay check included) with today's keys.
      const owner = p.owner as `0x${string}`;
      const hash = p.sealed_address_hash as `0x${string}`;
      const opened = await openPayout(
        this.db,
        this.options.sealed,
        BigInt(p.redemption_id),
        owner,
        p.sealed_address,
        hash,
      );
      if ("missingKey" in opened) {
        // The contract took the key, so the holder did nothing wrong: an operator fixes custody's keys.
        await this.#review(p, opened.missingKey);
        return;
      }
      if ("address" in opened) {
        await setWithdrawAddress(this.db, p.redemption_id, opened.address);
        address = p.withdraw_address = opened.address;
      } else p.last_error = `${NOT_PAYABLE}${opened.why}`;
    }
    if (address === null) {
      // An envelope custody cannot open (or a replay) is never paid: failed and held for its owner to
      // redirect, it holds up no payout behind it. Its reason was written when it was found.
      const reason = p.last_error?.startsWith(NOT_PAYABLE)
        ? p.last_error
        : `${NOT_PAYABLE}custody cannot open its sealed address.`;
      if (await this.#move(p, "failing", { last_error: reason })) await this.#fail(p);
      return;
    }
    if (!(await this.#claim(p))) return;
    let operationId: string;
    try {
      // The canonical (lower-case) form: the one the wallet is sure to read as we did.
      operationId = await this.custody.send({ redemptionId: id, address, zat: BigInt(p.zat_due) });
    } catch (error) {
      if (error instanceof PayoutNotSent) {
        // Never reached the wallet: try again later without spending an attempt.
        await this.#move(p, "pending", {
          attempts: p.attempts - 1,
          last_error: error.message,
          next_attempt_at: new Date(Date.now() + this.options.retryMs),
        });
        return;
      }
      if (error instanceof PayoutRefused) return this.#retryOrFail(p, error.message);
      await this.#review(p, `Handing the payout to the wallet failed midway: ${(error as Error).message}`);
      return;
    }
    if (!(await this.#move(p, "sent", { operation_id: operationId }))) {
      // Another replica took the row into review meanwhile: leave the operator the operation id.
      await leaveOperationForReview(this.db, p.redemption_id, operationId);
      return;
    }
    await this.#follow(p);
  }

  /**
   * Moves a payout to "sending" unless a screener held it since this pass read
   * it (reading the chain leaves time for that). Its redemption request is
   * locked first, as a hold locks it before it reads the payout: a hold
   * committed while we waited is seen by the next statement, and a hold
   * after us finds the payout no longer pending.
   */
  async #claim(p: PayoutRow): Promise<boolean> {
    if (!this.options.compliance) return this.#move(p, "sending", { attempts: p.attempts + 1 });
    return this.db.transaction(async (tx) => {
      if (await heldAfterLocking(tx, p.redemption_id)) return false;
      return this.#move(p, "sending", { attempts: p.attempts + 1 }, tx);
    });
  }

  async #follow(p: PayoutRow): Promise<void> {
    const state = await this.custody.operation(p.operation_id!);
    switch (state.state) {
      case "pending":
        return;
      case "unknown":
        await this.#review(p, `Operation ${p.operation_id}: ${state.reason}; it may have been paid.`);
        return;
      case "failed":
        return this.#retryOrFail(p, state.reason);
      case "success": {
        const moved = await this.db.transaction(async (tx) => {
          if (!(await this.#move(p, "settling", { zcash_txid: state.zcashTxId }, tx))) return false;
          await recordPayout(tx, p.redemption_id, p.zat_due, state.zcashTxId);
          return true;
        });
        if (moved) await this.#settle(p);
        return;
      }
    }
  }

  async #retryOrFail(p: PayoutRow, reason: string): Promise<void> {
    if (p.attempts >= this.options.maxAttempts) {
      if (await this.#move(p, "failing", { last_error: reason })) await this.#fail(p);
      return;
    }
    const wait = Math.min(this.options.retryMs * 2 ** (p.attempts - 1), MAX_RETRY_MS);
    await this.#move(p, "pending", {
      last_error: reason,
      operation_id: null,
      next_attempt_at: new Date(Date.now() + wait),
    });
  }

  /** Marks the paid redemption completed on-chain with the Zcash txid. */
  async #settle(p: PayoutRow): Promise<void> {
    try {
      const { txHash } = await this.custodyCalls.completePayout(BigInt(p.redemption_id), p.zcash_txid as `0x${string}`);
      await this.#move(p, "completed", { settle_tx_hash: txHash });
      this.options.onSettled?.(p.redemption_id);
    } catch (error) {
      if (!isRevert(error, "PayoutNotPending")) throw error;
      // Settled by an earlier pass that stopped before recording it.
      const onChain = await this.#onChain(BigInt(p.redemption_id));
      if (onChain.status === COMPLETED) await this.#move(p, "completed");
      else await this.#review(p, "Paid in ZEC, but the redemption is no longer pending on-chain.");
    }
  }

  /**
   * Fails the payout on-chain: every payout alike (a redemption, released
   * collateral, a withdrawn note). Nothing is given back and no position
   * changes; the ZEC stays owed to the owner, who redirects it.
   */
  async #fail(p: PayoutRow): Promise<void> {
    const reason = failureReason(p);
    try {
      const { txHash } = await this.custodyCalls.failPayout(BigInt(p.redemption_id), reason);
      await this.#move(p, "held", { settle_tx_hash: txHash });
    } catch (error) {
      if (!isRevert(error, "PayoutNotPending")) throw error;
      // Failed by an earlier pass that stopped before recording it (and maybe redirected since).
      const onChain = await this.#onChain(BigInt(p.redemption_id));
      if (onChain.status === FAILED) await this.#move(p, "held");
      else if (onChain.status === REDIRECTED) await this.#move(p, "redirected");
      else await this.#review(p, "Failing it was refused: the payout is no longer pending on-chain.");
    }
  }
}
