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
import { type ActionRow, presentAction } from "../positions/views.ts";
import {
  type Actor,
  type HoldState,
  type HoldableType,
  type Subject,
  type Verdict,
  actorName,
} from "./types.ts";

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
      const [action] = await tx.query<{ status: string }>(
        `SELECT status FROM position_actions WHERE id = $1 AND account_id = $2 AND environment = $3
           AND action <> 'withdraw_note' FOR UPDATE`,
        [subject.id, accountId, this.environment],
      );
      if (!action) throw domainErrors.notFound(`Position action ${subject.id}`);
      return { movable: action.status === "queued", state: action.status };
    }
    if (subject.type === "payout") {
      // Only the payouts hold a payout (holdRedirectIn): it is the account's when its hold is.
      const [hold] = await tx.query<{ status: string | null }>(
        `SELECT p.status FROM compliance_holds h LEFT JOIN payouts p ON p.redemption_id::text = h.subject_id
         WHERE h.subject_type = 'payout' AND h.subject_id = $1 AND h.account_id = $2 FOR UPDATE OF h`,
        [subject.id, accountId],
      );
      if (!hold) throw domainErrors.notFound(`Payout ${subject.id}`);
      return { movable: hold.status === "pending", state: `a payout ${hold.status ?? "not yet seen"}` };
    }
    if (subject.type === "mint") {
      const [mint] = await tx.query<{ status: string }>(
        "SELECT status FROM mints WHERE id = $1 AND account_id = $2 FOR UPDATE",
        [subject.id, accountId],
      );
      if (!mint) throw domainErrors.notFound(`Mint ${subject.id}`);
      return { movable: mint.status === "queued", state: mint.status };
    }
    const [locked] = await tx.query<{ status: string; relay_status: string; redemption_id: string | null }>(
      "SELECT status, relay_status, redemption_id FROM redemption_requests WHERE id = $1 AND account_id = $2 FOR UPDATE",
      [subject.id, accountId],
    );
    if (!locked) throw domainErrors.notFound(`Redemption ${subject.id}`);
    // The payout is read after the lock, in a statement of its own: the payouts lock the request before
    // they start a payment, and a join in the locking statement would show the payout as it was before.
    const [payout] = locked.redemption_id
      ? await tx.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = $1::numeric", [
          locked.redemption_id,
        ])
      : [];
    const request = { ...locked, payout_status: payout?.status ?? null };
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
    const [previous] = await tx.query<{ state: HoldState }>(
      "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2",
      [subject.type, subject.id],
    );
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
    await tx.query(
      `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state, alert_id, verdict_deadline)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (subject_type, subject_id) DO UPDATE SET state = EXCLUDED.state,
         alert_id = coalesce(EXCLUDED.alert_id, compliance_holds.alert_id), updated_at = now()`,
      [subject.type, subject.id, accountId, state, alertId, deadline],
    );
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
    const [placed] = await tx.query(
      `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state, redemption_request_id)
       VALUES ('payout', $1, $2, 'held', $3) ON CONFLICT (subject_type, subject_id) DO NOTHING RETURNING 1`,
      [payout.id, accountId, payout.redemptionRequestId],
    );
    return placed !== undefined;
  }

  async attachAlert(tx: Queryable, payoutId: string, alertId: string): Promise<void> {
    await tx.query("UPDATE compliance_holds SET alert_id = $2 WHERE subject_type = 'payout' AND subject_id = $1", [
      payoutId,
      alertId,
    ]);
  }

  /** The subject of an alert, locked, while its hold still holds it (a release or a rejection needs one). */
  async heldSubject(tx: Queryable, subject: Subject): Promise<HeldSubject> {
    const [hold] = await tx.query<{ state: HoldState }>(
      "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 FOR UPDATE",
      [subject.type, subject.id],
    );
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
    const [hold] = await tx.query<{ state: HoldState }>(
      "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 FOR UPDATE",
      [subject.type, subject.id],
    );
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
    return db.query<{ subject_type: HoldableType; subject_id: string; account_id: string }>(
      `SELECT subject_type, subject_id, account_id FROM compliance_holds
       WHERE state = 'awaiting_verdict' AND verdict_deadline <= now() ORDER BY verdict_deadline LIMIT 50`,
    );
  }

  /** Locks the subject's hold if it still waits for a verdict; false when a verdict came meanwhile. */
  async stillAwaiting(tx: Queryable, subject: { type: HoldableType; id: string }): Promise<boolean> {
    const [still] = await tx.query(
      `SELECT 1 FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 AND state = 'awaiting_verdict'
       FOR UPDATE`,
      [subject.type, subject.id],
    );
    return still !== undefined;
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
      await tx.query(
        `UPDATE compliance_holds SET state = 'released', decided_by = $3, updated_at = now()
         WHERE subject_type = $1 AND subject_id = $2`,
        [subject.type, subject.id, by],
      );
      await this.#emit(tx, accountId, `${prefix}.released`, { [key]: subject.id, by });
      return "released";
    }
    await tx.query(
      `UPDATE compliance_holds SET state = 'rejected', decided_by = $3, reason_code = $4, updated_at = now()
       WHERE subject_type = $1 AND subject_id = $2`,
      [subject.type, subject.id, by, note ?? "rejected"],
    );
    const reason = `Refused by compliance (${by}${note ? `: ${note}` : ""}).`;
    if (subject.type === "position_action") await this.#failAction(tx, accountId, subject.id, reason);
    else if (subject.type === "mint") await this.#failMint(tx, accountId, subject.id, reason);
    else await this.#failRedemption(tx, accountId, subject.id, reason);
    return "rejected";
  }

  async #failAction(tx: Queryable, accountId: string, actionId: string, reason: string): Promise<void> {
    // Never sent: the relay takes only queued actions nobody holds, and a rejected hold holds for good.
    const [failed] = await tx.query<ActionRow>(
      `UPDATE position_actions SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
         settled_at = now(), updated_at = now()
       WHERE id = $1 AND status = 'queued' RETURNING *`,
      [actionId, reason],
    );
    if (failed) {
      // As the relay tells a failure (emitAction in position-queue.ts): the action as GET answers it, less its envelope.
      const view = presentAction(failed) as Record<string, unknown>;
      for (const envelope of ["object", "createdAt", "updatedAt"]) delete view[envelope];
      await this.#emit(tx, accountId, "position.action.failed", view);
    }
  }

  async #failMint(tx: Queryable, accountId: string, mintId: string, reason: string): Promise<void> {
    const failed = await tx.query(
      `UPDATE mints SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
         settled_at = now(), updated_at = now()
       WHERE id = $1 AND status = 'queued' RETURNING id`,
      [mintId, reason],
    );
    if (failed.length === 0) return;
    // Its proof is given back: the deposit is the holder's to use otherwise.
    await tx.query(
      `UPDATE proofs SET status = 'verified', mint_id = NULL, updated_at = now()
       WHERE mint_id = $1 AND status = 'consumed'`,
      [mintId],
    );
    await this.#emit(tx, accountId, "mint.failed", {
      mintId,
      failureCode: "compliance_rejected",
      failureReason: reason,
    });
  }

  /** Only before its burn is sent; a burned one is failed by the payouts. */
  async #failRedemption(tx: Queryable, accountId: string, redemptionId: string, reason: string): Promise<void> {
    const failed = await tx.query(
      `UPDATE redemption_requests SET status = 'failed', relay_status = 'done', failure_code = 'compliance_rejected',
         failure_reason = $2, updated_at = now()
       WHERE id = $1 AND status = 'requested' AND relay_status = 'queued' RETURNING id`,
      [redemptionId, reason],
    );
    if (failed.length === 0) return;
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
    const [hold] = await tx.query<{ redemption_request_id: string }>(
      `UPDATE compliance_holds SET state = $2, decided_by = $3, reason_code = $4, updated_at = now()
       WHERE subject_type = 'payout' AND subject_id = $1 RETURNING redemption_request_id`,
      [payoutId, state, by, state === "rejected" ? (note ?? "rejected") : null],
    );
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
