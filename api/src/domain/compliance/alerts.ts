// Compliance alerts: how one is written, read, listed, moved on
// (open → in_review → dismissed | confirmed) and given a line of history, each
// change told in alert.raised or alert.updated. Apart from the service
// (compliance.ts), which decides who may act and what a hold does: this file
// moves only alerts (their SQL is in store.ts) and never touches a held subject.
import type { Queryable } from "../../adapters/db/index.ts";
import { transactionNow } from "../../adapters/db/clock.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { emitEvent } from "../agents/events.ts";
import { randomId } from "../../adapters/ids.ts";
import type { Environment } from "../accounts/keys.ts";
import {
  type Actor,
  type AlertFilters,
  type AlertInput,
  type AlertStatus,
  type HistoryEntry,
  type HoldState,
  type Severity,
  type Subject,
  type SubjectType,
  actorName,
} from "./types.ts";
import { type AlertRow, appendAlertHistory, findAlert, insertAlert, listAlerts, lockAlert } from "./store.ts";

export type { AlertRow, AlertStatus, HistoryEntry };

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

const TRANSITIONS: Record<AlertStatus, AlertStatus[]> = {
  open: ["in_review", "dismissed", "confirmed"],
  in_review: ["dismissed", "confirmed"],
  dismissed: [],
  confirmed: [],
};

const alertNotFound = (id: string) => domainErrors.notFound(`Alert ${id}`);

/** The alerts of one environment. */
export class AlertBook {
  constructor(private readonly environment: Environment) {}

  /** Writes an alert (its alert.raised event is the caller's, once any hold is written); returns its id. */
  async insert(tx: Queryable, accountId: string, actor: Actor, input: AlertInput): Promise<string> {
    const id = randomId("alt");
    const by = actorName(actor);
    const history: HistoryEntry[] = [{ status: "open", at: new Date(await transactionNow(tx)).toISOString(), by }];
    await insertAlert(tx, {
      id,
      accountId,
      environment: this.environment,
      raisedBy: by,
      subject: input.subject,
      severity: input.severity,
      category: input.category,
      reason: input.reason,
      action: input.action,
      history: JSON.stringify(history),
    });
    return id;
  }

  async emitRaised(tx: Queryable, accountId: string, alertId: string): Promise<void> {
    await this.#emit(tx, accountId, "alert.raised", { alert: await this.present(tx, accountId, alertId) });
  }

  async list(db: Queryable, accountId: string, filters: AlertFilters): Promise<{ data: Alert[]; hasMore: boolean }> {
    // One more than a page: whether there is a next one.
    const rows = await listAlerts(db, accountId, this.environment, { ...filters, limit: filters.limit + 1 });
    return { data: rows.slice(0, filters.limit).map(toAlert), hasMore: rows.length > filters.limit };
  }

  async present(db: Queryable, accountId: string, alertId: string): Promise<Alert> {
    const row = await findAlert(db, alertId, accountId, this.environment);
    if (!row) throw alertNotFound(alertId);
    return toAlert(row);
  }

  /** The account's alert, locked for a change. */
  async locked(tx: Queryable, accountId: string, alertId: string): Promise<AlertRow> {
    const row = await lockAlert(tx, alertId, accountId, this.environment);
    if (!row) throw alertNotFound(alertId);
    return row;
  }

  /** Moves a locked alert on, if its status allows it, saying who and why (a closed alert says why). */
  async move(
    tx: Queryable,
    accountId: string,
    alert: AlertRow,
    by: string,
    change: { status: AlertStatus; closeReason?: string },
  ): Promise<void> {
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
    await this.record(
      tx,
      accountId,
      alert.id,
      { status: change.status, by, note: change.closeReason },
      {
        status: change.status,
        closeReason: closing ? change.closeReason! : null,
      },
    );
  }

  /** Appends to an alert's history (and changes its status) and says so in alert.updated. */
  async record(
    tx: Queryable,
    accountId: string,
    alertId: string,
    entry: Omit<HistoryEntry, "at">,
    change: { status?: AlertStatus; closeReason?: string | null } = {},
  ): Promise<void> {
    const full: HistoryEntry = { ...entry, at: new Date(await transactionNow(tx)).toISOString() };
    if (full.note === undefined) delete full.note;
    await appendAlertHistory(tx, alertId, JSON.stringify([full]), change.status ?? null, change.closeReason ?? null);
    await this.#emit(tx, accountId, "alert.updated", { alert: await this.present(tx, accountId, alertId) });
  }

  #emit(tx: Queryable, accountId: string, type: string, data: Record<string, unknown>) {
    return emitEvent(tx, { account: accountId, environment: this.environment, type: type as never, data });
  }
}

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
