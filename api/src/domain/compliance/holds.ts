// The hold lifecycle: what can be held and whether it still can (a queued
// mint, an unpaid redemption, a queued position action, a redirected payout,
// each locked as it is weighed), the hold row written and told (mint.held,
// redemption.held…), and a decision applied to it: released, the subject moves
// on; rejected, it fails (or, burned, waits for the payouts to fail it). Apart
// from the alerts (compliance-alerts.ts) because a hold is about the subject's
// own table and its events; the service (compliance.ts) decides who may ask.
import type { Queryable } from "../../adapters/db/index.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { emitEvent } from "../agents/events.ts";
import type { Environment } from "../accounts/keys.ts";
import { presentAction } from "../positions/views.ts";
import { lockMintOf, failRefusedMint } from "../mints/store.ts";
import { failRefusedAction, lockActionOf } from "../positions/store.ts";
import { failRefusedRequest, lockRequestOf } from "../redemptions/store.ts";
import {
  attachAlertToPayoutHold,
  decidePayoutHold,
  holdStateOf,
  insertPayoutHold,
  lockAwaitingHold,
  lockHoldState,
  lockPayoutHold,
  overdueVerdicts,
  rejectHold,
  releaseHold,
  writeHold,
} from "./store.ts";
import { payoutStatusOf } from "../payouts/store.ts";
import { type Actor, type HoldState, type HoldableType, type Subject, type Verdict, actorName } from "./types.ts";

/** A subject a hold keeps from moving: a mint, a redemption, or a payout redirected from a refused one. */
export type HeldSubject = { type: HoldableType | "payout"; id: string };

/** A held subject's events: their prefix (mint.held, position.action.released) and the key naming it. */
const EVENT_NAMES: Record<HoldableType, { prefix: string; key: string }> = {
  mint: { prefix: "mint", key: "mintId" },
  redemption: { prefix: "redemption", key: "redemptionId" },
  position_action: { prefix: "position.action", key: "actionId" },
};

/** The holds of one environment's accounts. */
export class HoldDesk {
  constructor(private readonly environment: Environment) {}

  /** The account's mint, redemption or position action, locked, with where it stands for a hold. */
  async holdable(tx: Queryable, accountId: string, subject: Subject): Promise<{ movable: boolean; state: string }> {
    if (subject.type === "position_action") {
      // The relay locks the row before it records a send (position-relay.ts): a hold either comes first or finds it sent.
      const action = await lockActionOf(tx, accountId, this.environment, subject.id);
      if (!action) throw domainErrors.notFound(`Position action ${subject.id}`);
      return { movable: action.status === "queued", state: action.status };
    }
    if (subject.type === "payout") {
      // Only the payouts hold a payout (holdRedirectIn): it is the account's when its hold is.
      const hold = await lockPayoutHold(tx, accountId, subject.id);
      if (!hold) throw domainErrors.notFound(`Payout ${subject.id}`);
      return { movable: hold.status === "pending", state: `a payout ${hold.status ?? "not yet seen"}` };
    }
    if (subject.type === "mint") {
      const mint = await lockMintOf(tx, accountId, subject.id);
      if (!mint) throw domainErrors.notFound(`Mint ${subject.id}`);
      return { movable: mint.status === "queued", state: mint.status };
    }
    const locked = await lockRequestOf(tx, accountId, subject.id);
    if (!locked) throw domainErrors.notFound(`Redemption ${subject.id}`);
    // The payout is read after the lock, in a statement of its own: the payouts lock the request before
    // they start a payment, and a join in the locking statement would show the payout as it was before.
    const payoutStatus = locked.redemption_id ? await payoutStatusOf(tx, locked.redemption_id) : undefined;
    const request = { ...locked, payout_status: payoutStatus ?? null };
    // Before the burn is sent, or burned with its payout not yet started.
    const movable =
      (request.status === "requested" && request.relay_status === "queued") ||
      (request.status === "burned" && (request.payout_status === null || request.payout_status === "pending"));
    return {
      movable,
      state: request.payout_status ? `${request.status} (payout ${request.payout_status})` : request.status,
    };
  }

  /** The subject an alert names, when it is one this service keeps (not a deposit or an address): it must exist. */
  async subjectExists(tx: Queryable, accountId: string, subject: Subject): Promise<void> {
    if (subject.type !== "deposit" && subject.type !== "address") {
      await this.holdable(tx, accountId, subject);
    }
  }

  /** Refuses a hold on what cannot be held: not a holdable type, moved on already, or rejected before. */
  async mustBeHoldable(tx: Queryable, accountId: string, subject: Subject): Promise<void> {
    if (!(subject.type in EVENT_NAMES)) {
      throw domainErrors.invalid([
        { field: "body.action", message: "only a mint, a redemption or a position action can be held" },
      ]);
    }
    const holdable = await this.holdable(tx, accountId, subject);
    const { movable } = holdable;
    let { state } = holdable;
    // A rejection is final: a new hold (then released) would otherwise pay a redemption awaiting its failure.
    const previous = await holdStateOf(tx, subject);
    if (previous?.state === "rejected") state = `${state}, rejected by compliance`;
    if (!movable || previous?.state === "rejected") {
      throw new DomainError(
        "conflict",
        "not_holdable",
        "Cannot be held",
        `The ${subject.type.replace("_", " ")} ${subject.id} is ${state}; only a queued mint or ` +
          "position action, or a redemption whose burn or payout has not started, can be held.",
      );
    }
  }

  async write(
    tx: Queryable,
    accountId: string,
    subject: { type: HoldableType; id: string },
    state: "held" | "awaiting_verdict",
    alertId: string | null,
    deadline: Date | null,
  ): Promise<void> {
    await writeHold(tx, accountId, subject, state, alertId, deadline);
  }

  emitHeld(
    tx: Queryable,
    accountId: string,
    subject: { type: HoldableType; id: string },
    state: "held" | "awaiting_verdict",
    alertId: string | null,
  ) {
    const { prefix, key } = EVENT_NAMES[subject.type];
    return this.#emit(tx, accountId, `${prefix}.held`, {
      [key]: subject.id,
      alertId,
      awaitingVerdict: state === "awaiting_verdict",
    });
  }

  /** A redirected payout held (its alert attached later, see attachAlert); false when it already was. */
  async placePayoutHold(
    tx: Queryable,
    accountId: string,
    payout: { id: string; redemptionRequestId: string },
  ): Promise<boolean> {
    return insertPayoutHold(tx, accountId, payout);
  }

  async attachAlert(tx: Queryable, payoutId: string, alertId: string): Promise<void> {
    await attachAlertToPayoutHold(tx, payoutId, alertId);
  }

  /** The subject of an alert, locked, while its hold still holds it (a release or a rejection needs one). */
  async heldSubject(tx: Queryable, subject: Subject): Promise<HeldSubject> {
    const hold = await lockHoldState(tx, subject);
    if (!hold || (hold.state !== "held" && hold.state !== "awaiting_verdict")) {
      throw new DomainError(
        "conflict",
        "not_held",
        "Nothing held",
        `The ${subject.type} ${subject.id} is not held${hold ? ` (its hold was ${hold.state})` : ""}.`,
      );
    }
    return { type: subject.type as HeldSubject["type"], id: subject.id };
  }

  /** The subject's hold, locked, which must be waiting for a verdict. */
  async mustAwaitVerdict(tx: Queryable, subject: { type: HoldableType; id: string }): Promise<void> {
    const hold = await lockHoldState(tx, subject);
    if (hold?.state !== "awaiting_verdict") {
      throw new DomainError(
        "conflict",
        "verdict_not_awaited",
        "No verdict awaited",
        `The ${subject.type} ${subject.id} is not waiting for a verdict${hold ? ` (it is ${hold.state})` : ""}.`,
      );
    }
  }

  /** Up to 50 holds whose verdict is overdue, oldest deadline first. */
  overdue(db: Queryable) {
    return overdueVerdicts(db);
  }

  /** Locks the subject's hold if it still waits for a verdict; false when a verdict came meanwhile. */
  async stillAwaiting(tx: Queryable, subject: { type: HoldableType; id: string }): Promise<boolean> {
    return lockAwaitingHold(tx, subject);
  }

  /**
   * Applies a decision to a held subject. PASSED releases it. REJECTED fails
   * a queued mint (its proof given back), a queued position action, or a
   * redemption not yet burned; a
   * burned one stays rejected until the payouts fail it on-chain (its ZEC
   * held for the owner to redirect).
   */
  async decide(
    tx: Queryable,
    accountId: string,
    subject: HeldSubject,
    verdict: Verdict,
    actor: Actor,
    note?: string,
  ): Promise<HoldState> {
    const by = actorName(actor);
    if (subject.type === "payout") return this.#decidePayout(tx, accountId, subject.id, verdict, by, note);
    const { prefix, key } = EVENT_NAMES[subject.type];
    if (verdict === "PASSED") {
      await releaseHold(tx, subject, by);
      await this.#emit(tx, accountId, `${prefix}.released`, { [key]: subject.id, by });
      return "released";
    }
    await rejectHold(tx, subject, by, note ?? "rejected");
    const reason = `Refused by compliance (${by}${note ? `: ${note}` : ""}).`;
    if (subject.type === "position_action") await this.#failAction(tx, accountId, subject.id, reason);
    else if (subject.type === "mint") await this.#failMint(tx, accountId, subject.id, reason);
    else await this.#failRedemption(tx, accountId, subject.id, reason);
    return "rejected";
  }

  async #failAction(tx: Queryable, accountId: string, actionId: string, reason: string): Promise<void> {
    // Never sent: the relay takes only queued actions nobody holds, and a rejected hold holds for good.
    const failed = await failRefusedAction(tx, actionId, reason);
    if (failed) {
      // As the relay tells a failure (emitAction in position-queue.ts): the action as GET answers it, less its envelope.
      const view = presentAction(failed) as Record<string, unknown>;
      for (const envelope of ["object", "createdAt", "updatedAt"]) delete view[envelope];
      await this.#emit(tx, accountId, "position.action.failed", view);
    }
  }

  async #failMint(tx: Queryable, accountId: string, mintId: string, reason: string): Promise<void> {
    // Its proof is given back: the deposit is the holder's to use otherwise.
    if (!(await failRefusedMint(tx, mintId, reason))) return;
    await this.#emit(tx, accountId, "mint.failed", {
      mintId,
      failureCode: "compliance_rejected",
      failureReason: reason,
    });
  }

  /** Only before its burn is sent; a burned one is failed by the payouts. */
  async #failRedemption(tx: Queryable, accountId: string, redemptionId: string, reason: string): Promise<void> {
    if (!(await failRefusedRequest(tx, redemptionId, reason))) return;
    await this.#emit(tx, accountId, "redemption.failed", {
      redemptionId,
      failureCode: "compliance_rejected",
      failureReason: reason,
      zecHeld: null,
      payoutId: null,
      redirect: null,
    });
  }

  /**
   * A held redirected payout: released, the payouts pay it; rejected, they
   * fail it on-chain (compliance_rejected) and its ZEC is held for the owner
   * again, whose next redirect to an address is held in turn.
   */
  async #decidePayout(
    tx: Queryable,
    accountId: string,
    payoutId: string,
    verdict: Verdict,
    by: string,
    note?: string,
  ): Promise<HoldState> {
    const state = verdict === "PASSED" ? "released" : "rejected";
    const hold = await decidePayoutHold(tx, payoutId, state, by, state === "rejected" ? (note ?? "rejected") : null);
    // A rejection is told as redemption.failed once the payouts have failed it on-chain.
    if (state === "released") {
      await this.#emit(tx, accountId, "redemption.released", {
        redemptionId: hold!.redemption_request_id,
        by,
        payoutId,
      });
    }
    return state;
  }

  #emit(tx: Queryable, accountId: string, type: string, data: Record<string, unknown>) {
    return emitEvent(tx, { account: accountId, environment: this.environment, type: type as never, data });
  }
}
