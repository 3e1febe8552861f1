// The words compliance and its built-in rules agent share: compliance.ts runs
// the rules agent, and the agent raises its alerts through compliance, so the
// types both speak live here, and neither file imports the other's module for them.
// The parts of compliance (compliance-alerts.ts, compliance-holds.ts) share them
// too, so that neither imports the other.
import type { Queryable } from "../../adapters/db/index.ts";

export type SubjectType = "mint" | "redemption" | "deposit" | "address" | "payout" | "position_action";
/** What an alert's hold keeps from moving: a queued mint, an unpaid redemption, a queued position action. */
export type HoldableType = "mint" | "redemption" | "position_action";
export type Severity = "low" | "medium" | "high" | "severe";

export interface Subject {
  type: SubjectType;
  id: string;
}

/** Who acted: a registered agent, the built-in rules agent, the verdict timeout's default, or the payouts. */
export type Actor = { agentId: string } | { builtIn: "rules" | "verdict_timeout" | "payouts" };

/** The name an actor is recorded under (an alert's raisedBy, a hold's decidedBy). */
export const actorName = (actor: Actor) => ("agentId" in actor ? actor.agentId : actor.builtIn);

export type Verdict = "PASSED" | "REJECTED";
/** awaiting_verdict: screening is required and no verdict came yet. */
export type HoldState = "awaiting_verdict" | "held" | "released" | "rejected";

export type AlertStatus = "open" | "in_review" | "dismissed" | "confirmed";

/** What a list of alerts is narrowed to, and its page. */
export interface AlertFilters {
  status?: AlertStatus;
  severity?: Severity;
  subjectType?: SubjectType;
  subjectId?: string;
  raisedBy?: string;
  limit: number;
  startingAfter?: string;
}

/** A line of an alert's history: a move of its own, or of the hold it placed. */
export interface HistoryEntry {
  status: AlertStatus | "released" | "rejected";
  at: string;
  by: string;
  note?: string;
}

export interface AlertInput {
  subject: Subject;
  severity: Severity;
  category: string;
  reason: string;
  action: "none" | "hold";
}

/** A new mint, redemption or position action, as the rules agent looks at it. */
export interface NewSubject {
  type: HoldableType;
  id: string;
  /** Wei of ZSD: the amount, or for ZEC moved by a position action its value at the oracle's price. */
  amount: bigint;
  /** The mint's recipient, the redemption's owner, or the position action's signer (its position's owner for a top-up). */
  address: string;
  /** Where a redemption or a position action sends ZEC, when it is a shielded Zcash address. */
  zcashAddress?: string;
  /**
   * A position action's own amount as its sender names it (ZSD repaid, ZEC withdrawn or added, the
   * collateral a close or liquidation releases): the sandbox's magic values are read from it, since
   * the cents of its value in ZSD are nothing its sender chose. `action` names it in words ("repayment").
   */
  named?: { action: string; amount: string; unit: "ZSD" | "ZEC" };
}

/** How the rules agent raises what it finds: ComplianceService.raiseIn. */
export interface AlertRaiser {
  raiseIn(tx: Queryable, accountId: string, actor: Actor, input: AlertInput): Promise<string>;
}
