// Compliance: alerts raised by agents (or the built-in rules agent) about a
// mint, a redemption, a position action, a deposit or an address, and holds
// that keep a mint, a redemption or a position action from moving until a
// screener releases or rejects it. A hold is a row the relay worker and the
// payouts consult (notHeld); every change is written with its events in one
// transaction.
import type { Database, Queryable } from "../adapters/db/index.ts";
import { DomainError, domainErrors } from "./errors.ts";
import { emitEvent } from "./events.ts";
import { randomId } from "./ids.ts";
import type { Environment } from "./keys.ts";
import { type ActionRow, presentAction } from "./position-views.ts";
import type {
  Actor,
  AlertInput,
  AlertRaiser,
  HoldableType,
  NewSubject,
  Severity,
  Subject,
  SubjectType,
} from "./compliance-types.ts";
import { RulesAgent, type RulesOptions } from "./rules.ts";

export type { Actor, AlertInput, HoldableType, NewSubject, Severity, Subject, SubjectType };
export type AlertStatus = "open" | "in_review" | "dismissed" | "confirmed";
export type Verdict = "PASSED" | "REJECTED";
/** awaiting_verdict: screening is required and no verdict came yet. */
export type HoldState = "awaiting_verdict" | "held" | "released" | "rejected";

/** A subject a hold keeps from moving: a mint, a redemption, or a payout redirected from a refused one. */
type HeldSubject = { type: HoldableType | "payout"; id: string };

/** How the payouts note on a payout's row that compliance refused it (relay/payouts.ts). */
export const REJECTED_ROW = "Rejected by compliance: ";

/**
 * SQL: true when the payout `idColumn` (numeric, its on-chain id) was refused
 * by compliance — its redemption's hold or its own hold (a redirected payout)
 * rejected, or failed by the payouts for that reason. A redirect of it to an
 * address must be screened again.
 */
export const refusedByCompliance = (idColumn: string) =>
  `(EXISTS (SELECT 1 FROM redemption_requests r JOIN compliance_holds h
       ON h.subject_type = 'redemption' AND h.subject_id = r.id
     WHERE r.redemption_id::numeric = ${idColumn} AND h.state = 'rejected')
   OR EXISTS (SELECT 1 FROM compliance_holds h
     WHERE h.subject_type = 'payout' AND h.subject_id = (${idColumn})::text AND h.state = 'rejected')
   OR EXISTS (SELECT 1 FROM payouts p WHERE p.redemption_id = ${idColumn} AND p.last_error LIKE '${REJECTED_ROW}%'))`;

/** Whether compliance refused the payout `payoutId` (see refusedByCompliance). */
export async function isRefusedByCompliance(db: Queryable, payoutId: bigint): Promise<boolean> {
  const [row] = await db.query(`SELECT 1 WHERE ${refusedByCompliance("$1::numeric")}`, [payoutId.toString()]);
  return row !== undefined;
}

export interface HistoryEntry {
  status: AlertStatus | "released" | "rejected";
  at: string;
  by: string;
  note?: string;
}

export interface Alert {
  alertId: string;
  raisedBy: string;
  subject: Subject;
  severity: Severity;
  category: string;
  reason: string;
  action: "none" | "hold";
  status: AlertStatus;
  closeReason: string | null;
  /** The hold the alert placed, while it exists: its state now. */
  hold: HoldState | null;
  history: HistoryEntry[];
  createdAt: string;
  updatedAt: string;
}

interface AlertRow {
  id: string;
  raised_by: string;
  subject_type: SubjectType;
  subject_id: string;
  severity: Severity;
  category: string;
  reason: string;
  action: "none" | "hold";
  status: AlertStatus;
  close_reason: string | null;
  history: HistoryEntry[] | string;
  hold_state: HoldState | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The states in which a mint, a redemption or a position action does not move. */
export const BLOCKING_STATES = ["awaiting_verdict", "held", "rejected"] as const;

/** SQL: true when the subject `idColumn` of `type` is not kept from moving by a hold. */
export const notHeld = (type: HoldableType, idColumn: string) =>
  `NOT EXISTS (SELECT 1 FROM compliance_holds h WHERE h.subject_type = '${type}' AND h.subject_id = ${idColumn}
     AND h.state IN ('awaiting_verdict', 'held', 'rejected'))`;

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

const TRANSITIONS: Record<AlertStatus, AlertStatus[]> = {
  open: ["in_review", "dismissed", "confirmed"],
  in_review: ["dismissed", "confirmed"],
  dismissed: [],
  confirmed: [],
};

const actorName = (actor: Actor) => ("agentId" in actor ? actor.agentId : actor.builtIn);

/** A held subject's events: their prefix (mint.held, position.action.released) and the key naming it. */
const EVENT_NAMES: Record<HoldableType, { prefix: string; key: string }> = {
  mint: { prefix: "mint", key: "mintId" },
  redemption: { prefix: "redemption", key: "redemptionId" },
  position_action: { prefix: "position.action", key: "actionId" },
};

const alertNotFound = (id: string) => domainErrors.notFound(`Alert ${id}`);

export class ComplianceService implements AlertRaiser {
  readonly #rules: RulesAgent | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: ComplianceOptions,
  ) {
    this.#rules = options.rules?.enabled ? new RulesAgent(this, options.rules) : undefined;
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
    const [agent] = await tx.query<{ role: string; enabled: boolean }>(
      `SELECT role, enabled FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL`,
      [agentId, accountId, this.options.environment],
    );
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

  /** The account's mint, redemption or position action, locked, with where it stands for a hold. */
  async #holdable(tx: Queryable, accountId: string, subject: Subject): Promise<{ movable: boolean; state: string }> {
    if (subject.type === "position_action") {
      // The relay locks the row before it records a send (position-relay.ts): a hold either comes first or finds it sent.
      const [action] = await tx.query<{ status: string }>(
        `SELECT status FROM position_actions WHERE id = $1 AND account_id = $2 AND environment = $3
           AND action <> 'withdraw_note' FOR UPDATE`,
        [subject.id, accountId, this.options.environment],
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

  async #subjectExists(tx: Queryable, accountId: string, subject: Subject): Promise<void> {
    if (subject.type !== "deposit" && subject.type !== "address") {
      await this.#holdable(tx, accountId, subject);
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
    if (input.action === "hold") {
      if (!(input.subject.type in EVENT_NAMES)) {
        throw domainErrors.invalid([
          { field: "body.action", message: "only a mint, a redemption or a position action can be held" },
        ]);
      }
      const holdable = await this.#holdable(tx, accountId, input.subject);
      const { movable } = holdable;
      let { state } = holdable;
      // A rejection is final: a new hold (then released) would otherwise pay a redemption awaiting its failure.
      const [previous] = await tx.query<{ state: HoldState }>(
        "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2",
        [input.subject.type, input.subject.id],
      );
      if (previous?.state === "rejected") state = `${state}, rejected by compliance`;
      if (!movable || previous?.state === "rejected") {
        throw new DomainError(
          "conflict",
          "not_holdable",
          "Cannot be held",
          `The ${input.subject.type.replace("_", " ")} ${input.subject.id} is ${state}; only a queued mint or ` +
            "position action, or a redemption whose burn or payout has not started, can be held.",
        );
      }
    } else {
      await this.#subjectExists(tx, accountId, input.subject);
    }
    const id = await this.#insertAlert(tx, accountId, actor, input);
    const held = input.subject as { type: HoldableType; id: string };
    // The hold is written before alert.raised is: the event tells the alert as it is committed (held).
    if (input.action === "hold") await this.#writeHold(tx, accountId, held, "held", id, null);
    await this.#emitRaised(tx, accountId, id);
    if (input.action === "hold") await this.#emitHeld(tx, accountId, held, "held", id);
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
    const [placed] = await tx.query(
      `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state, redemption_request_id)
       VALUES ('payout', $1, $2, 'held', $3) ON CONFLICT (subject_type, subject_id) DO NOTHING RETURNING 1`,
      [payout.id, accountId, payout.redemptionRequestId],
    );
    if (!placed) return false;
    const alertId = await this.#insertAlert(
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
    await tx.query("UPDATE compliance_holds SET alert_id = $2 WHERE subject_type = 'payout' AND subject_id = $1", [
      payout.id,
      alertId,
    ]);
    await this.#emitRaised(tx, accountId, alertId);
    await this.#emit(tx, accountId, "redemption.held", {
      redemptionId: payout.redemptionRequestId,
      alertId,
      awaitingVerdict: false,
      payoutId: payout.id,
    });
    return true;
  }

  /** Writes an alert (its alert.raised event is the caller's, once any hold is written); returns its id. */
  async #insertAlert(tx: Queryable, accountId: string, actor: Actor, input: AlertInput): Promise<string> {
    const id = randomId("alt");
    const by = actorName(actor);
    const [{ now }] = (await tx.query<{ now: Date | string }>("SELECT now() AS now")) as [{ now: Date | string }];
    const history: HistoryEntry[] = [{ status: "open", at: new Date(now).toISOString(), by }];
    await tx.query(
      `INSERT INTO compliance_alerts (id, account_id, environment, raised_by, subject_type, subject_id, severity,
         category, reason, action, status, history)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11)`,
      [
        id,
        accountId,
        this.options.environment,
        by,
        input.subject.type,
        input.subject.id,
        input.severity,
        input.category,
        input.reason,
        input.action,
        JSON.stringify(history),
      ],
    );
    return id;
  }

  async #emitRaised(tx: Queryable, accountId: string, alertId: string): Promise<void> {
    await this.#emit(tx, accountId, "alert.raised", { alert: await this.#present(tx, accountId, alertId) });
  }

  async #writeHold(
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

  #emitHeld(
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

  /** Screening required: a new mint, redemption or position action waits for a verdict (inside the transaction that writes it). */
  async screenIn(tx: Queryable, accountId: string, subject: { type: HoldableType; id: string }): Promise<void> {
    if (this.options.screening !== "required") return;
    const deadline = new Date(Date.now() + this.options.verdictTimeoutMs);
    await this.#writeHold(tx, accountId, subject, "awaiting_verdict", null, deadline);
    await this.#emitHeld(tx, accountId, subject, "awaiting_verdict", null);
  }

  async list(
    accountId: string,
    filters: {
      status?: AlertStatus;
      severity?: Severity;
      subjectType?: SubjectType;
      subjectId?: string;
      raisedBy?: string;
      limit: number;
      startingAfter?: string;
    },
  ): Promise<{ data: Alert[]; hasMore: boolean }> {
    const where = ["a.account_id = $1", "a.environment = $2"];
    const values: unknown[] = [accountId, this.options.environment];
    const add = (sql: string, value: unknown) => {
      values.push(value);
      where.push(sql.replace("?", `$${values.length}`));
    };
    if (filters.status) add("a.status = ?", filters.status);
    if (filters.severity) add("a.severity = ?", filters.severity);
    if (filters.subjectType) add("a.subject_type = ?", filters.subjectType);
    if (filters.subjectId) add("a.subject_id = ?", filters.subjectId);
    if (filters.raisedBy) add("a.raised_by = ?", filters.raisedBy);
    // Newest first; the cursor is the last alert of the previous page.
    if (filters.startingAfter) {
      add("(a.created_at, a.id) < (SELECT created_at, id FROM compliance_alerts WHERE id = ?)", filters.startingAfter);
    }
    values.push(filters.limit + 1);
    const rows = await this.db.query<AlertRow>(
      `${SELECT_ALERT} WHERE ${where.join(" AND ")} ORDER BY a.created_at DESC, a.id DESC LIMIT $${values.length}`,
      values,
    );
    return { data: rows.slice(0, filters.limit).map(toAlert), hasMore: rows.length > filters.limit };
  }

  async get(accountId: string, alertId: string, db: Queryable = this.db): Promise<Alert> {
    return this.#present(db, accountId, alertId);
  }

  async #present(db: Queryable, accountId: string, alertId: string): Promise<Alert> {
    const [row] = await db.query<AlertRow>(
      `${SELECT_ALERT} WHERE a.id = $1 AND a.account_id = $2 AND a.environment = $3`,
      [alertId, accountId, this.options.environment],
    );
    if (!row) throw alertNotFound(alertId);
    return toAlert(row);
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
      const alert = await this.#locked(tx, accountId, alertId);
      if (!TRANSITIONS[alert.status].includes(change.status)) {
        throw new DomainError(
          "conflict",
          "alert_transition_invalid",
          "Alert cannot move so",
          `The alert is ${alert.status}; it can move to ${TRANSITIONS[alert.status].join(", ") || "nothing (it is closed)"}.`,
          { alertStatus: alert.status },
        );
      }
      const closing = change.status === "dismissed" || change.status === "confirmed";
      if (closing && !change.closeReason) {
        throw domainErrors.invalid([{ field: "body.closeReason", message: "a closed alert says why" }]);
      }
      await this.#record(
        tx,
        accountId,
        alertId,
        { status: change.status, by: agentId, note: change.closeReason },
        {
          status: change.status,
          closeReason: closing ? change.closeReason! : null,
        },
      );
    });
    this.options.onQueued?.();
    return this.get(accountId, alertId);
  }

  async #locked(tx: Queryable, accountId: string, alertId: string): Promise<AlertRow> {
    const [row] = await tx.query<AlertRow>(
      `SELECT * FROM compliance_alerts WHERE id = $1 AND account_id = $2 AND environment = $3 FOR UPDATE`,
      [alertId, accountId, this.options.environment],
    );
    if (!row) throw alertNotFound(alertId);
    return row;
  }

  /** Appends to an alert's history (and changes its status) and says so in alert.updated. */
  async #record(
    tx: Queryable,
    accountId: string,
    alertId: string,
    entry: Omit<HistoryEntry, "at">,
    change: { status?: AlertStatus; closeReason?: string | null } = {},
  ): Promise<void> {
    const [{ now }] = (await tx.query<{ now: Date | string }>("SELECT now() AS now")) as [{ now: Date | string }];
    const full: HistoryEntry = { ...entry, at: new Date(now).toISOString() };
    if (full.note === undefined) delete full.note;
    await tx.query(
      `UPDATE compliance_alerts SET history = history || $2::jsonb, status = coalesce($3, status),
         close_reason = CASE WHEN $3::text IS NULL THEN close_reason ELSE $4 END, updated_at = now()
       WHERE id = $1`,
      [alertId, JSON.stringify([full]), change.status ?? null, change.closeReason ?? null],
    );
    await this.#emit(tx, accountId, "alert.updated", { alert: await this.#present(tx, accountId, alertId) });
  }

  /** A screener lets the alert's held mint, redemption or position action move on. */
  async release(accountId: string, agentId: string, alertId: string, note?: string): Promise<Alert> {
    await this.db.transaction(async (tx) => {
      await this.#agent(tx, accountId, agentId, true);
      const alert = await this.#locked(tx, accountId, alertId);
      const subject = await this.#heldSubject(tx, alert);
      await this.#decide(tx, accountId, subject, "PASSED", { agentId }, note);
      await this.#record(tx, accountId, alertId, { status: "released", by: agentId, note });
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
      const alert = await this.#locked(tx, accountId, alertId);
      const subject = await this.#heldSubject(tx, alert);
      await this.#decide(tx, accountId, subject, "REJECTED", { agentId }, reasonCode);
      await this.#record(tx, accountId, alertId, { status: "rejected", by: agentId, note: reasonCode });
    });
    this.options.onQueued?.();
    return this.get(accountId, alertId);
  }

  async #heldSubject(tx: Queryable, alert: AlertRow): Promise<HeldSubject> {
    const [hold] = await tx.query<{ state: HoldState }>(
      "SELECT state FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 FOR UPDATE",
      [alert.subject_type, alert.subject_id],
    );
    if (!hold || (hold.state !== "held" && hold.state !== "awaiting_verdict")) {
      throw new DomainError(
        "conflict",
        "not_held",
        "Nothing held",
        `The ${alert.subject_type} ${alert.subject_id} is not held${hold ? ` (its hold was ${hold.state})` : ""}.`,
      );
    }
    return { type: alert.subject_type as HeldSubject["type"], id: alert.subject_id };
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
      await this.#holdable(tx, accountId, subject);
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
      return this.#decide(tx, accountId, subject, verdict, { agentId }, reason);
    });
    this.options.onQueued?.();
    return { state };
  }

  /** Verdicts that did not come in time take the configured default. Returns how many. */
  async expireVerdicts(): Promise<number> {
    const due = await this.db.query<{ subject_type: HoldableType; subject_id: string; account_id: string }>(
      `SELECT subject_type, subject_id, account_id FROM compliance_holds
       WHERE state = 'awaiting_verdict' AND verdict_deadline <= now() ORDER BY verdict_deadline LIMIT 50`,
    );
    let count = 0;
    for (const hold of due) {
      await this.db.transaction(async (tx) => {
        const [still] = await tx.query(
          `SELECT 1 FROM compliance_holds WHERE subject_type = $1 AND subject_id = $2 AND state = 'awaiting_verdict'
           FOR UPDATE`,
          [hold.subject_type, hold.subject_id],
        );
        if (!still) return;
        await this.#decide(
          tx,
          hold.account_id,
          { type: hold.subject_type, id: hold.subject_id },
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

  /**
   * Applies a decision to a held subject. PASSED releases it. REJECTED fails
   * a queued mint (its proof given back), a queued position action, or a
   * redemption not yet burned; a
   * burned one stays rejected until the payouts fail it on-chain (its ZEC
   * held for the owner to redirect).
   */
  async #decide(
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
    if (subject.type === "position_action") {
      // Never sent: the relay takes only queued actions nobody holds, and a rejected hold holds for good.
      const [failed] = await tx.query<ActionRow>(
        `UPDATE position_actions SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
           settled_at = now(), updated_at = now()
         WHERE id = $1 AND status = 'queued' RETURNING *`,
        [subject.id, reason],
      );
      if (failed) {
        // As the relay tells a failure (PositionService.emit): the action as GET answers it, less its envelope.
        const view = presentAction(failed) as Record<string, unknown>;
        for (const envelope of ["object", "createdAt", "updatedAt"]) delete view[envelope];
        await this.#emit(tx, accountId, "position.action.failed", view);
      }
    } else if (subject.type === "mint") {
      const failed = await tx.query(
        `UPDATE mints SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
           settled_at = now(), updated_at = now()
         WHERE id = $1 AND status = 'queued' RETURNING id`,
        [subject.id, reason],
      );
      if (failed.length > 0) {
        // Its proof is given back: the deposit is the holder's to use otherwise.
        await tx.query(
          `UPDATE proofs SET status = 'verified', mint_id = NULL, updated_at = now()
           WHERE mint_id = $1 AND status = 'consumed'`,
          [subject.id],
        );
        await this.#emit(tx, accountId, "mint.failed", {
          mintId: subject.id,
          failureCode: "compliance_rejected",
          failureReason: reason,
        });
      }
    } else {
      const failed = await tx.query(
        `UPDATE redemption_requests SET status = 'failed', relay_status = 'done', failure_code = 'compliance_rejected',
           failure_reason = $2, updated_at = now()
         WHERE id = $1 AND status = 'requested' AND relay_status = 'queued' RETURNING id`,
        [subject.id, reason],
      );
      if (failed.length > 0) {
        await this.#emit(tx, accountId, "redemption.failed", {
          redemptionId: subject.id,
          failureCode: "compliance_rejected",
          failureReason: reason,
          zecHeld: null,
          payoutId: null,
          redirect: null,
        });
      }
    }
    return "rejected";
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
    return emitEvent(tx, { account: accountId, environment: this.options.environment, type: type as never, data });
  }
}

const SELECT_ALERT = `SELECT a.*, h.state AS hold_state FROM compliance_alerts a
  LEFT JOIN compliance_holds h ON h.alert_id = a.id AND h.subject_type = a.subject_type AND h.subject_id = a.subject_id`;

function toAlert(row: AlertRow): Alert {
  return {
    alertId: row.id,
    raisedBy: row.raised_by,
    subject: { type: row.subject_type, id: row.subject_id },
    severity: row.severity,
    category: row.category,
    reason: row.reason,
    action: row.action,
    status: row.status,
    closeReason: row.close_reason,
    hold: row.action === "hold" ? row.hold_state : null,
    history: typeof row.history === "string" ? (JSON.parse(row.history) as HistoryEntry[]) : row.history,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
