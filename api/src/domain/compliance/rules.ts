// The built-in rules agent: it looks at each new mint, redemption and position
// action as it is written and raises alerts through the same path as an
// external agent (ComplianceService.raiseIn, in the same transaction). Three
// rules: a single amount over a threshold (ZEC a position action moves counts
// at its value), too many in a window for one address, and an address on the
// deny list (its owner or signer, and the Zcash address a redemption or a position action pays). In the sandbox, magic values fire each rule:
// an amount ending in .13 (large amount), .14 (velocity), .15 or an address
// ending in "dead" (deny list, which holds). A position action's amount is
// the one its sender names (ZSD repaid, ZEC moved), not its value in ZSD.
import { readFileSync } from "node:fs";
import type { Queryable } from "../../adapters/db/index.ts";
import { formatZsd } from "@zsd/sdk/units";
import type { AlertRaiser, NewSubject, Severity } from "./types.ts";
import { recentMintsTo } from "../mints/store.ts";
import { recentActionsBy } from "../positions/store.ts";
import { recentRequestsBy } from "../redemptions/store.ts";
import { denyListed } from "./store.ts";

export interface RulesOptions {
  enabled: boolean;
  /** A single mint, redemption or position action above this many ZSD (its value) raises an alert (in wei). */
  largeAmountWei: bigint;
  /** More than `velocityMax` mints to one recipient (or redemptions by one owner) within the window raise an alert. */
  velocityMax: number;
  velocityWindowSeconds: number;
  /** Addresses (lower case) denied besides those in the compliance_deny_list table. */
  denied: ReadonlySet<string>;
  /** The sandbox's magic values fire the rules. */
  magicValues: boolean;
}

interface Finding {
  severity: Severity;
  category: string;
  reason: string;
  action: "none" | "hold";
}

const WEI_PER_CENT = 10n ** 16n;

/** Where the velocity rule counts one address's recent subjects of a type. */
const VELOCITY: Record<NewSubject["type"], (tx: Queryable, address: string, seconds: number) => Promise<number>> = {
  mint: recentMintsTo,
  redemption: recentRequestsBy,
  position_action: recentActionsBy,
};

const label = (subject: NewSubject) => subject.type.replace("_", " ");

/** The amount's cents, as the magic values read them ("100.13" → 13). */
const cents = (wei: bigint) => Number((wei / WEI_PER_CENT) % 100n);

/**
 * The magic cents of a subject: a position action's own amount as its sender
 * named it, and only when it ends there ("1.15" ZEC, not "1.1534"), since a
 * close releases whatever redemptions left of the collateral.
 */
function magicCents(subject: NewSubject): number | undefined {
  if (!subject.named) return cents(subject.amount);
  const end = /\.(\d\d)$/.exec(subject.named.amount);
  return end ? Number(end[1]) : undefined;
}

/** The subject and its amount in words: "a mint of 10.13 ZSD", "a position action, a withdrawal of 1.13 ZEC worth 56.5 ZSD". */
function described(subject: NewSubject): string {
  const n = subject.named;
  if (!n) return `a ${label(subject)} of ${formatZsd(subject.amount)} ZSD`;
  const worth = n.unit === "ZEC" ? ` worth ${formatZsd(subject.amount)} ZSD` : "";
  return `a ${label(subject)}, a ${n.action} of ${n.amount} ${n.unit}${worth}`;
}

export class RulesAgent {
  constructor(
    private readonly compliance: AlertRaiser,
    private readonly options: RulesOptions,
  ) {}

  /** Looks at a new mint, redemption or position action inside the transaction that writes it; raises what it finds. */
  async inspect(tx: Queryable, accountId: string, subject: NewSubject): Promise<void> {
    if (!this.options.enabled) return;
    const findings = await this.#findings(tx, subject);
    for (const finding of findings) {
      await this.compliance.raiseIn(tx, accountId, { builtIn: "rules" }, { subject, ...finding });
    }
  }

  async #findings(tx: Queryable, subject: NewSubject): Promise<Finding[]> {
    const o = this.options;
    const address = subject.address.toLowerCase();
    const magic = o.magicValues;
    const found: Finding[] = [];
    const magicAt = magic ? magicCents(subject) : undefined;
    const what = described(subject);

    const listed = await denyListed(tx, address);
    // A magic value is named as the cause when it alone fired the rule: a reason quoting a
    // threshold the amount is under would contradict itself.
    if (listed || o.denied.has(address)) {
      found.push({
        severity: "severe",
        category: "denied_address",
        reason: `${subject.address} is on the deny list${listed ? ` (${listed.reason})` : ""}.`,
        action: "hold",
      });
    } else if (magic && address.endsWith("dead")) {
      found.push({
        severity: "severe",
        category: "denied_address",
        reason: `${subject.address} ends in "dead", the sandbox's magic value for the deny list.`,
        action: "hold",
      });
    } else if (magicAt === 15) {
      found.push({
        severity: "severe",
        category: "denied_address",
        reason: `The sandbox's magic cents .15 fire the deny-list rule for ${what} by ${subject.address} (not on the list): held for review.`,
        action: "hold",
      });
    }
    if (subject.zcashAddress) {
      // Only the table: the deny list file holds EVM addresses.
      const paid = await denyListed(tx, subject.zcashAddress.toLowerCase());
      if (paid) {
        found.push({
          severity: "severe",
          category: "denied_address",
          reason: `The Zcash address this ${label(subject)} pays is on the deny list (${paid.reason}).`,
          action: "hold",
        });
      }
    }

    const large = subject.amount > o.largeAmountWei;
    if (large || magicAt === 13) {
      const threshold = `the threshold is ${formatZsd(o.largeAmountWei)} ZSD`;
      found.push({
        severity: "high",
        category: "large_amount",
        reason: large
          ? `A single ${label(subject)} of ${formatZsd(subject.amount)} ZSD (${threshold}).`
          : `The sandbox's magic cents .13 fire this rule for ${what} (${threshold}).`,
        action: "none",
      });
    }

    const count = await VELOCITY[subject.type](tx, address, o.velocityWindowSeconds);
    const fast = count > o.velocityMax;
    if (fast || magicAt === 14) {
      const counted = `${count} ${label(subject)}s for ${subject.address} within ${o.velocityWindowSeconds} s (the most expected is ${o.velocityMax})`;
      found.push({
        severity: "medium",
        category: "velocity",
        reason: fast ? `${counted}.` : `The sandbox's magic cents .14 fire this rule for ${what} (${counted}).`,
        action: "none",
      });
    }
    return found;
  }
}

/** The deny list file: one EVM address per line, # starts a comment; none without a file. */
export function loadDenyList(file: string | undefined): ReadonlySet<string> {
  if (!file) return new Set();
  const addresses = readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim().toLowerCase())
    .filter(Boolean);
  const bad = addresses.find((a) => !/^0x[0-9a-f]{40}$/.test(a));
  if (bad) throw new Error(`RULES_DENY_LIST_FILE: "${bad}" is not an EVM address`);
  return new Set(addresses);
}
