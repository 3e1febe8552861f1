// Compliance: alerts raised by agents (or the built-in rules agent) about a
// mint, a redemption, a position action, a deposit or an address, and holds
// that keep a mint, a redemption or a position action from moving until a
// screener releases or rejects it. A hold is a row the relay worker and the
// payouts consult (notHeld); every change is written with its events in one
// transaction.
//
// This file is the service the HTTP layer, the relays and the payouts call: it
// checks who acts (an enabled agent of the account, a screener to decide) and
// runs each operation in its transaction. The alert rows live in
// compliance-alerts.ts, the hold lifecycle in compliance-holds.ts, the SQL the
// relays embed in compliance-sql.ts, the built-in rules agent in rules.ts.
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { type Alert, type AlertStatus, AlertBook } from "./alerts.ts";
import { HoldDesk } from "./holds.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { emitEvent } from "../agents/events.ts";
import { agentOf } from "../agents/store.ts";
import type { Environment } from "../accounts/keys.ts";
import type {
  Actor,
  AlertFilters,
  AlertInput,
  AlertRaiser,
  HoldState,
  HoldableType,
  NewSubject,
  Severity,
  Subject,
  SubjectType,
  Verdict,
} from "./types.ts";
import { RulesAgent, type RulesOptions } from "./rules.ts";

export type { Actor, AlertInput, HoldableType, HoldState, NewSubject, Severity, Subject, SubjectType, Verdict };
export type { Alert, AlertStatus, HistoryEntry } from "./alerts.ts";
export { BLOCKING_STATES, isRefusedByCompliance, notHeld, refusedByCompliance } from "./store.ts";

export interface ComplianceOptions {
  environment: Environment;
  /** "required": every new mint, redemption and position action waits for a screener's verdict. */
  screening: "off" | "required";
  verdictTimeoutMs: number;
  /** What a verdict that does not come in time becomes. */
  defaultVerdict: Verdict;
  /** The built-in rules agent's settings (off when absent). */
  rules?: RulesOptions;
  /** Called after a transaction that queued webhook deliveries. */
  onQueued?: () => void;
}

export class ComplianceService implements AlertRaiser {
  readonly #rules: RulesAgent | undefined;
  readonly #alerts: AlertBook;
  readonly #holds: HoldDesk;

  constructor(
    private readonly db: Database,
    private readonly options: ComplianceOptions,
  ) {
    this.#rules = options.rules?.enabled ? new RulesAgent(this, options.rules) : undefined;
    this.#alerts = new AlertBook(options.environment);
    this.#holds = new HoldDesk(options.environment);
  }

  /**
   * A new mint, redemption or position action, inside the transaction that
   * writes it: its event (mint.queued, redemption.requested; a position
   * action has none), the rules agent's look at it, and a wait for a verdict
   * when screening is required.
   */
  async admit(
    tx: Queryable,
    accountId: string,
    subject: NewSubject,
    data: Record<string, unknown> | null,
  ): Promise<void> {
    if (data) await this.#emit(tx, accountId, subject.type === "mint" ? "mint.queued" : "redemption.requested", data);
    // A rule's hold wins over a wait for a verdict: it is written last.
    await this.screenIn(tx, accountId, subject);
    await this.#rules?.inspect(tx, accountId, subject);
  }

  /** An event of the account, inside the caller's transaction (the relays' confirmations and failures). */
  emitIn(tx: Queryable, accountId: string, type: string, data: Record<string, unknown>) {
    return this.#emit(tx, accountId, type, data);
  }

  /** Wakes the webhook worker after a transaction that queued deliveries. */
  queued(): void {
    this.options.onQueued?.();
  }

  get environment(): Environment {
    return this.options.environment;
  }

  /** The acting agent: one of the account's, enabled; a screener when `screener` is asked. */
  async #agent(tx: Queryable, accountId: string, agentId: string, screener: boolean): Promise<void> {
    const agent = await agentOf(tx, accountId, this.options.environment, agentId);
    if (!agent) throw domainErrors.notFound(`Agent ${agentId}`);
    if (!agent.enabled) {
      throw new DomainError("conflict", "agent_disabled", "Agent disabled", `Agent ${agentId} is disabled.`, {
        agentId,
      });
    }
    if (screener && agent.role !== "screener") {
      throw new DomainError(
        "unprocessable",
        "screener_required",
        "Screener required",
        `Agent ${agentId} is an observer; only a screener agent may hold, release, reject or give verdicts.`,
        { agentId },
      );
    }
  }

  /** Raises an alert (and, with action "hold", holds its mint, redemption or position action) for an agent of the account. */
  async raise(accountId: string, agentId: string, input: AlertInput): Promise<Alert> {
    const id = await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, input.action === "hold");
      return this.raiseIn(tx, accountId, { agentId }, input);
    });
    this.options.onQueued?.();
    return this.get(accountId, id);
  }

  /** The same, inside the caller's transaction (the rules agent raises alerts as a mint, redemption or position action is written). */
  async raiseIn(tx: Queryable, accountId: string, actor: Actor, input: AlertInput): Promise<string> {
    if (input.action === "hold") await this.#holds.mustBeHoldable(tx, accountId, input.subject);
    else await this.#holds.subjectExists(tx, accountId, input.subject);
    const id = await this.#alerts.insert(tx, accountId, actor, input);
    const held = input.subject as { type: HoldableType; id: string };
    // The hold is written before alert.raised is: the event tells the alert as it is committed (held).
    if (input.action === "hold") await this.#holds.write(tx, accountId, held, "held", id, null);
    await this.#alerts.emitRaised(tx, accountId, id);
    if (input.action === "hold") await this.#holds.emitHeld(tx, accountId, held, "held", id);
    return id;
  }

  /**
   * A payout its owner redirected (on-chain or through the API) from a payout
   * compliance refused, inside the payouts' transaction that records it: held
   * under an alert of the payouts, as a held redemption is, until a screener
   * of the account releases it (it is paid) or rejects it (failed on-chain
   * again, compliance_rejected). False when it was already held (a rescan).
   */
  async holdRedirectIn(
    tx: Queryable,
    accountId: string,
    payout: { id: string; fromId: string; redemptionRequestId: string },
  ): Promise<boolean> {
    if (!(await this.#holds.placePayoutHold(tx, accountId, payout))) return false;
    const alertId = await this.#alerts.insert(
      tx,
      accountId,
      { builtIn: "payouts" },
      {
        subject: { type: "payout", id: payout.id },
        severity: "high",
        category: "compliance_rejected_redirect",
        reason:
          `The owner redirected payout ${payout.fromId} (redemption ${payout.redemptionRequestId}), which compliance ` +
          `refused, to another address as payout ${payout.id}: it is not paid until a screener releases it ` +
          "(rejecting it fails it on-chain again, its ZEC held for the owner).",
        action: "hold",
      },
    );
    await this.#holds.attachAlert(tx, payout.id, alertId);
    await this.#alerts.emitRaised(tx, accountId, alertId);
    await this.#emit(tx, accountId, "redemption.held", {
      redemptionId: payout.redemptionRequestId,
      alertId,
      awaitingVerdict: false,
      payoutId: payout.id,
    });
    return true;
  }

  /** Screening required: a new mint, redemption or position action waits for a verdict (inside the transaction that writes it). */
  async screenIn(tx: Queryable, accountId: string, subject: { type: HoldableType; id: string }): Promise<void> {
    if (this.options.screening !== "required") return;
    const deadline = new Date(Date.now() + this.options.verdictTimeoutMs);
    await this.#holds.write(tx, accountId, subject, "awaiting_verdict", null, deadline);
    await this.#holds.emitHeld(tx, accountId, subject, "awaiting_verdict", null);
  }

  list(accountId: string, filters: AlertFilters): Promise<{ data: Alert[]; hasMore: boolean }> {
    return this.#alerts.list(this.db, accountId, filters);
  }

  async get(accountId: string, alertId: string, db: Queryable = this.db): Promise<Alert> {
    return this.#alerts.present(db, accountId, alertId);
  }

  /** Moves an alert on (open → in_review → dismissed | confirmed), saying who and why. */
  async update(
    accountId: string,
    agentId: string,
    alertId: string,
    change: { status: AlertStatus; closeReason?: string },
  ): Promise<Alert> {
    await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, false);
      const alert = await this.#alerts.locked(tx, accountId, alertId);
      await this.#alerts.move(tx, accountId, alert, agentId, change);
    });
    this.options.onQueued?.();
    return this.get(accountId, alertId);
  }

  /** A screener lets the alert's held mint, redemption or position action move on. */
  async release(accountId: string, agentId: string, alertId: string, note?: string): Promise<Alert> {
    await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, true);
      const alert = await this.#alerts.locked(tx, accountId, alertId);
      const subject = await this.#holds.heldSubject(tx, { type: alert.subject_type, id: alert.subject_id });
      await this.#holds.decide(tx, accountId, subject, "PASSED", { agentId }, note);
      await this.#alerts.record(tx, accountId, alertId, { status: "released", by: agentId, note });
    });
    this.options.onQueued?.();
    return this.get(accountId, alertId);
  }

  /**
   * A screener refuses the alert's held mint (failed, its proof given back),
   * position action (failed, never sent) or redemption (failed on-chain, its
   * ZEC held for the owner to redirect).
   */
  async reject(accountId: string, agentId: string, alertId: string, reasonCode: string): Promise<Alert> {
    await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, true);
      const alert = await this.#alerts.locked(tx, accountId, alertId);
      const subject = await this.#holds.heldSubject(tx, { type: alert.subject_type, id: alert.subject_id });
      await this.#holds.decide(tx, accountId, subject, "REJECTED", { agentId }, reasonCode);
      await this.#alerts.record(tx, accountId, alertId, { status: "rejected", by: agentId, note: reasonCode });
    });
    this.options.onQueued?.();
    return this.get(accountId, alertId);
  }

  /** A screener's verdict on a mint, redemption or position action waiting for one (screening required). */
  async verdict(
    accountId: string,
    agentId: string,
    subject: { type: HoldableType; id: string },
    verdict: Verdict,
    reason?: string,
  ): Promise<{ state: HoldState }> {
    const state = await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, true);
      await this.#holds.holdable(tx, accountId, subject);
      await this.#holds.mustAwaitVerdict(tx, subject);
      return this.#holds.decide(tx, accountId, subject, verdict, { agentId }, reason);
    });
    this.options.onQueued?.();
    return { state };
  }

  /** Verdicts that did not come in time take the configured default. Returns how many. */
  async expireVerdicts(): Promise<number> {
    const due = await this.#holds.overdue(this.db);
    let count = 0;
    for (const hold of due) {
      await this.db.transaction(async (tx) => {
        const subject = { type: hold.subject_type, id: hold.subject_id };
        if (!(await this.#holds.stillAwaiting(tx, subject))) return;
        await this.#holds.decide(
          tx,
          hold.account_id,
          subject,
          this.options.defaultVerdict,
          { builtIn: "verdict_timeout" },
          "no verdict in time",
        );
        count++;
      });
    }
    if (count > 0) this.options.onQueued?.();
    return count;
  }

  #emit(tx: Queryable, accountId: string, type: string, data: Record<string, unknown>) {
    return emitEvent(tx, { account: accountId, environment: this.options.environment, type: type as never, data });
  }
}
