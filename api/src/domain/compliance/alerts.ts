// Compliance alerts as rows: how one is written, read, listed, moved on
// (open → in_review → dismissed | confirmed) and given a line of history, each
// change told in alert.raised or alert.updated. Apart from the service
// (compliance.ts), which decides who may act and what a hold does: this file
// knows only the compliance_alerts table and never touches a held subject.
import type { Queryable } from "../../adapters/db/index.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { emitEvent } from "../agents/events.ts";
import { randomId } from "../../adapters/ids.ts";
import type { Environment } from "../accounts/keys.ts";
import {
  type Actor,
  type AlertInput,
  type HoldState,
  type Severity,
  type Subject,
  type SubjectType,
  actorName,
} from "./types.ts";

export type AlertStatus = "open" | "in_review" | "dismissed" | "confirmed";

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

export interface AlertRow {
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

export interface AlertFilters {
  status?: AlertStatus;
  severity?: Severity;
  subjectType?: SubjectType;
  subjectId?: string;
  raisedBy?: string;
  limit: number;
  startingAfter?: string;
}

const TRANSITIONS: Record<AlertStatus, AlertStatus[]> = {
  open: ["in_review", "dismissed", "confirmed"],
  in_review: ["dismissed", "confirmed"],
  dismissed: [],
  confirmed: [],
};

const alertNotFound = (id: string) => domainErrors.notFound(`Alert ${id}`);

const SELECT_ALERT = `SELECT a.*, h.state AS hold_state FROM compliance_alerts a
  LEFT JOIN compliance_holds h ON h.alert_id = a.id AND h.subject_type = a.subject_type AND h.subject_id = a.subject_id`;

/** The alerts of one environment. */
export class AlertBook {
  constructor(private readonly environment: Environment) {}

  /** Writes an alert (its alert.raised event is the caller's, once any hold is written); returns its id. */
  async insert(tx: Queryable, accountId: string, actor: Actor, input: AlertInput): Promise<string> {
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
        this.environment,
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

  async emitRaised(tx: Queryable, accountId: string, alertId: string): Promise<void> {
    await this.#emit(tx, accountId, "alert.raised", { alert: await this.present(tx, accountId, alertId) });
  }

  async list(db: Queryable, accountId: string, filters: AlertFilters): Promise<{ data: Alert[]; hasMore: boolean }> {
    const where = ["a.account_id = $1", "a.environment = $2"];
    const values: unknown[] = [accountId, this.environment];
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
    const rows = await db.query<AlertRow>(
      `${SELECT_ALERT} WHERE ${where.join(" AND ")} ORDER BY a.created_at DESC, a.id DESC LIMIT $${values.length}`,
      values,
    );
    return { data: rows.slice(0, filters.limit).map(toAlert), hasMore: rows.length > filters.limit };
  }

  async present(db: Queryable, accountId: string, alertId: string): Promise<Alert> {
    const [row] = await db.query<AlertRow>(
      `${SELECT_ALERT} WHERE a.id = $1 AND a.account_id = $2 AND a.environment = $3`,
      [alertId, accountId, this.environment],
    );
    if (!row) throw alertNotFound(alertId);
    return toAlert(row);
  }

  /** The account's alert, locked for a change. */
  async locked(tx: Queryable, accountId: string, alertId: string): Promise<AlertRow> {
    const [row] = await tx.query<AlertRow>(
      `SELECT * FROM compliance_alerts WHERE id = $1 AND account_id = $2 AND environment = $3 FOR UPDATE`,
      [alertId, accountId, this.environment],
    );
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
    const [{ now }] = (await tx.query<{ now: Date | string }>("SELECT now() AS now")) as [{ now: Date | string }];
    const full: HistoryEntry = { ...entry, at: new Date(now).toISOString() };
    if (full.note === undefined) delete full.note;
    await tx.query(
      `UPDATE compliance_alerts SET history = history || $2::jsonb, status = coalesce($3, status),
         close_reason = CASE WHEN $3::text IS NULL THEN close_reason ELSE $4 END, updated_at = now()
       WHERE id = $1`,
      [alertId, JSON.stringify([full]), change.status ?? null, change.closeReason ?? null],
    );
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
