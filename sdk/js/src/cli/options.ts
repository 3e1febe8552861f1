// The CLI's flags and their checks. This module is loaded on every call, so it
// imports nothing heavier than node:util: `--help` and a mistyped flag answer
// at once, before viem, snarkjs or the network are touched.
import { parseArgs } from "node:util";

export const USAGE = `usage: zsd <command> [options]

  note new                                   a fresh note (keep it secret: it is the deposit)
  note owner --note N                        the position owner the note derives: the address that signs its
                                             positions' actions and owns its payouts; --json adds its private key,
                                             as secret as the note (for a wallet outside this CLI, e.g. Python's)
  deposit --note N --amount ZEC              sandbox: a simulated deposit for the note (N may be in ZSD_NOTE)
  prove --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             the proof of a mint, made here (the body of POST /v1/proofs/submit)
  mint --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             prove, submit, mint and wait until confirmed; the mint opens a position
  redeem --amount ZSD --to ZADDR [--min-zec ZEC]
                                             sign (key in ZSD_PRIVATE_KEY) and redeem; wait until paid
  redeem sign --amount ZSD --to ZADDR [--min-zec ZEC]
                                             only sign: the body of POST /v1/redeem, sent by no one yet
                                             (the address sealed to custody's key from GET /v1/relay)
  redirect ID --to ZADDR|note [--wait SECONDS]
                                             a payout custody could not pay (its ZEC held for its owner): sign
                                             (ZSD_PRIVATE_KEY, the payout's owner) a redirect to another address or
                                             into a fresh note; wait (default 300 s) until it is paid or in the note.
                                             ID is a redemption's red_… (its id, not its on-chain redemptionId) or
                                             the on-chain payoutId a position action or a withdrawal answered
  position ID                                a position: collateral, debt, ratio, liquidation price
  position ID repay --amount ZSD             burn at most ZSD against its debt (the payer's key in ZSD_PRIVATE_KEY);
                                             a debt a redemption shrank below it is repaid whole, and no more
  position ID withdraw --note N --amount ZEC --to ZADDR|note
                                             take ZEC out, signed with the owner key of the note that opened it
  position ID close --note N --to ZADDR|note [--max-debt ZSD] [--min-zec ZEC]
                                             close it (with ZSD_PRIVATE_KEY set, that wallet repays the debt first)
  position ID top-up --note N [--amount ZEC] add a note's ZEC (proven here)
  position ID liquidate --to ZADDR|note [--max-debt ZSD] [--min-seized-zec ZEC] [--min-seized-value ZSD]
                                             repay an undercollateralised position's debt with ZSD_PRIVATE_KEY's ZSD;
                                             the seized ZEC goes to --to
  withdraw --note N --to ZADDR [--amount ZEC] [--wait SECONDS]
                                             pay a note's ZEC out to a shielded address (a deposit that will not mint);
                                             wait up to SECONDS (default 120) for it to confirm
  status ID                                  a mint (mint_…), redemption (red_…), position action (pact_…: its hold
                                             and tx), proof (prf_…) or withdrawal (wdr_…)
  ledger                                     supply, collateral and the peg price
  governance [list]                          the governor's parameters and its proposals
  governance show ID                         a proposal: its calls in words, state, tallies, quorum, times
  governance holder [0x]                     tokens, votes and delegate of an address (default: ZSD_PRIVATE_KEY's)
  governance delegate [--delegatee 0x]       sign (ZSD_PRIVATE_KEY) a delegation, relayed gas-free: tokens count
                                             as votes only once delegated (to yourself by default)
  governance propose --title T --call C [--call C…] [--description D] [--rpc-url URL]
                                             send a proposal from ZSD_PRIVATE_KEY's account (it pays the gas, through
                                             --rpc-url or ZSD_RPC_URL; http://127.0.0.1:8545 on a local chain), C as
                                             Contract.function(args), e.g. "PositionManager.setMinCollateralRatio(17000)"
  governance vote ID for|against|abstain [--reason R] [--wait SECONDS | --no-wait]
                                             sign (ZSD_PRIVATE_KEY) a ballot, relayed gas-free; wait until counted.
                                             A proposal still pending (its voting delay not passed) is waited for
                                             up to --wait seconds (default 600); --no-wait refuses it at once
  governance queue ID [--wait SECONDS | --no-wait]
                                             queue a succeeded proposal in the timelock, relayed (no key, no gas);
                                             one still being voted on is waited for, as vote waits
  governance execute ID [--wait SECONDS | --no-wait]
                                             execute a queued proposal once the timelock's delay is over, relayed;
                                             its calls run (waits for the delay as queue waits for the vote)

Signed bounds: a relay can send a signature only within them (a breach reverts and moves nothing). --max-debt is
the most ZSD burned, --min-zec the least ZEC released (a redemption's, after the fee), --min-seized-zec the least
ZEC a liquidation takes, --min-seized-value the least ZSD that ZEC is worth at its price. Unset, close and liquidate
sign the position as read just before (a liquidation: never at a loss), and a redemption no minimum.
A --to address is checked, then sealed to custody's key: the chain and the relay see only ciphertext.
--to note releases into a fresh note, printed (stderr) before anything is sent: keep it, it mints again. A note the API does not
know the amount of (a change or released note, or a deposit another account or a Zcash wallet made: the chain shows no deposit's
amount) needs --note-amount ZEC (what it holds), for mint, prove, top-up and withdraw.

prove and mint warn (stderr; with --json a {"warning": …} line) when fewer than ZSD_MIN_ANONYMITY deposits (default 20)
could back the floor: anyone could narrow the deposit down to them. A lower --floor hides it among more.

options: --json (machine-readable output), --base-url URL (or ZSD_BASE_URL); the API key is ZSD_API_KEY.`;

/** A mistake in the command line: told with a pointer to the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * How a UsageError is told: the mistake and where the usage is, not the usage itself, whose
 * fifty lines pushed the mistake off the screen.
 */
export function usageErrorText(error: UsageError): string {
  return `zsd: ${error.message}\n(zsd --help lists every command and its flags)\n`;
}

export type Values = {
  json: boolean;
  help: boolean;
  "base-url"?: string;
  note?: string;
  amount?: string;
  recipient?: string;
  floor?: string;
  "note-amount"?: string;
  to?: string;
  title?: string;
  description?: string;
  call?: string[];
  delegatee?: string;
  reason?: string;
  "rpc-url"?: string;
  wait?: string;
  "no-wait"?: boolean;
  "max-debt"?: string;
  "min-zec"?: string;
  "min-seized-zec"?: string;
  "min-seized-value"?: string;
};

export function parse(args: string[]): { values: Values; positionals: string[] } {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: "boolean", default: false },
        "base-url": { type: "string" },
        note: { type: "string" },
        amount: { type: "string" },
        recipient: { type: "string" },
        floor: { type: "string" },
        "note-amount": { type: "string" },
        to: { type: "string" },
        title: { type: "string" },
        description: { type: "string" },
        call: { type: "string", multiple: true },
        delegatee: { type: "string" },
        reason: { type: "string" },
        "rpc-url": { type: "string" },
        wait: { type: "string" },
        "no-wait": { type: "boolean" },
        "max-debt": { type: "string" },
        "min-zec": { type: "string" },
        "min-seized-zec": { type: "string" },
        "min-seized-value": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    }) as { values: Values; positionals: string[] };
  } catch (error) {
    // parseArgs' own message ("Unknown option '--amout'. To specify a positional…") names the flag.
    throw new UsageError((error as Error).message);
  }
}

/** The note from --note or ZSD_NOTE: a command line is readable by every local user (ps). */
export function noteText(values: Values): string | undefined {
  return values.note ?? process.env.ZSD_NOTE;
}

const ZSD_DECIMALS = 18;
const ZEC_DECIMALS = 8;

/** A positive decimal with at most `decimals` decimals; the message says which rule it breaks. */
function amountProblem(text: string, unit: "ZSD" | "ZEC", zeroAllowed = false): string | undefined {
  const decimals = unit === "ZSD" ? ZSD_DECIMALS : ZEC_DECIMALS;
  const example = unit === "ZSD" ? "100 or 12.5" : "1.5 or 0.25";
  if (/^\s*-/.test(text)) return `must be positive, e.g. ${example} (got ${text})`;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return `must be a ${unit} amount in plain decimal digits, e.g. ${example} (got ${JSON.stringify(text)})`;
  if ((match[2] ?? "").length > decimals) return `${unit} amounts have at most ${decimals} decimals (got ${text})`;
  if (!zeroAllowed && !/[1-9]/.test(text)) return `must be above 0 (got ${text})`;
  return undefined;
}

const NOTE_SHAPE = /^zsdnote1[02-9ac-hj-np-z]{20,}$|^zsdnote1[0-9a-f]{128}$/;
const ADDRESS_SHAPE = /^0x[0-9a-fA-F]{40}$/;
const PRIVATE_KEY_SHAPE = /^0x[0-9a-fA-F]{64}$/;
// The shielded address prefixes of both networks (Sapling, Unified); the full check (checksum,
// receivers, network) runs before the first request, once the SDK is loaded.
const SHIELDED_SHAPE = /^(zs|ztestsapling|u|utest)1[02-9ac-hj-np-z]+$/i;

/** The commands whose signature carries each bound flag. */
const BOUND_OF = {
  "max-debt": "position close and liquidate",
  "min-zec": "position close and redeem",
  "min-seized-zec": "position liquidate",
  "min-seized-value": "position liquidate",
} as const;

/** Where each command's flags are told apart from mistakes, before any network call or proof. */
const NEEDS: Record<string, { required: Flag[]; optional: Flag[]; signer?: "required" | "optional" }> = {
  "note new": { required: [], optional: [] },
  "note owner": { required: ["note"], optional: [] },
  deposit: { required: ["note", "amount:ZEC"], optional: [] },
  prove: { required: ["note", "amount:ZSD", "recipient"], optional: ["floor", "note-amount"] },
  mint: { required: ["note", "amount:ZSD", "recipient"], optional: ["floor", "note-amount"] },
  redeem: { required: ["amount:ZSD", "to:address"], optional: ["min-zec:ZEC"], signer: "required" },
  "redeem sign": { required: ["amount:ZSD", "to:address"], optional: ["min-zec:ZEC"], signer: "required" },
  redirect: { required: ["to:note"], optional: ["wait"], signer: "required" },
  position: { required: [], optional: [] },
  "position repay": { required: ["amount:ZSD"], optional: [], signer: "required" },
  "position withdraw": { required: ["note", "amount:ZEC", "to:note"], optional: [] },
  "position close": { required: ["note", "to:note"], optional: ["max-debt:ZSD", "min-zec:ZEC"], signer: "optional" },
  "position top-up": { required: ["note"], optional: ["amount:ZEC", "note-amount"] },
  "position liquidate": {
    required: ["to:note"],
    optional: ["max-debt:ZSD", "min-seized-zec:ZEC", "min-seized-value:ZSD"],
    signer: "required",
  },
  withdraw: { required: ["note", "to:address"], optional: ["amount:ZEC", "note-amount", "wait"] },
  status: { required: [], optional: [] },
  ledger: { required: [], optional: [] },
  "governance list": { required: [], optional: [] },
  "governance show": { required: [], optional: [] },
  "governance holder": { required: [], optional: [], signer: "optional" },
  "governance delegate": { required: [], optional: ["delegatee"], signer: "required" },
  "governance propose": {
    required: ["title", "call"],
    optional: ["description", "rpc-url"],
    signer: "required",
  },
  "governance vote": { required: [], optional: ["reason", "wait"], signer: "required" },
  "governance queue": { required: [], optional: ["wait"] },
  "governance execute": { required: [], optional: ["wait"] },
};
type Flag =
  | "note"
  | "amount:ZSD"
  | "amount:ZEC"
  | "recipient"
  | "floor"
  | "note-amount"
  | "to:address"
  | "to:note"
  | "title"
  | "description"
  | "call"
  | "delegatee"
  | "reason"
  | "rpc-url"
  | "wait"
  | "max-debt:ZSD"
  | "min-zec:ZEC"
  | "min-seized-zec:ZEC"
  | "min-seized-value:ZSD";

/** The contracts a proposal's call may name (the deployment's, with an ABI in the SDK). */
const CALL_CONTRACTS = [
  "StableToken",
  "CollateralRegistry",
  "PositionManager",
  "StableMinter",
  "Redemptions",
  "ZecUsdOracle",
  "SecondaryZecUsdOracle",
  "PriceFeed",
  "GovernanceToken",
  "StableGovernor",
  "StableTimelock",
];
const SUPPORTS = ["for", "against", "abstain"];

/** `governance <sub> …`: its positionals checked; answers its key in NEEDS. */
function governanceKey(positionals: string[]): string {
  const [, sub = "list", id, support, ...extra] = positionals;
  const key = `governance ${sub}`;
  if (!NEEDS[key])
    throw new UsageError(
      `unknown governance command ${sub}: list, show, holder, delegate, propose, vote, queue or execute`,
    );
  const proposalId = (what: string) => {
    if (!id) throw new UsageError(`zsd governance ${what}`);
    if (!/^\d{1,78}$/.test(id) || BigInt(id) >= 2n ** 256n) {
      throw new UsageError(`a proposal id is the governor's decimal number, as governance list shows it (got ${id})`);
    }
  };
  if (sub === "show" || sub === "queue" || sub === "execute") proposalId(`${sub} <proposalId>`);
  if (sub === "vote") {
    proposalId("vote <proposalId> for|against|abstain");
    if (!support || !SUPPORTS.includes(support)) {
      throw new UsageError(
        `a vote is for, against or abstain: zsd governance vote ${id} for (got ${support ?? "nothing"})`,
      );
    }
  }
  if (sub === "holder" && id !== undefined && !ADDRESS_SHAPE.test(id)) {
    throw new UsageError(`an address is 0x followed by 40 hexadecimal digits (got ${id})`);
  }
  const allowed = sub === "vote" ? 2 : ["show", "holder", "queue", "execute"].includes(sub) ? 1 : 0;
  const given = [id, support, ...extra].filter((p) => p !== undefined);
  if (given.length > allowed)
    throw new UsageError(`zsd governance ${sub}: unexpected ${given.slice(allowed).join(" ")}`);
  return key;
}

const ID_SHAPES: [RegExp, string][] = [
  [/^mint_[0-9A-Za-z]{20}$/, "mint"],
  [/^red_[0-9A-Za-z]{20}$/, "redemption"],
  [/^pact_[0-9A-Za-z]{20}$/, "position action"],
  [/^prf_[0-9A-Za-z]{20}$/, "proof"],
  [/^wdr_[0-9A-Za-z]{20}$/, "withdrawal"],
];

/**
 * Every flag the command uses, checked for presence and shape: a mistake is a
 * UsageError before anything slow starts. Answers the command's key in NEEDS.
 */
export function validate(values: Values, positionals: string[]): string {
  const [command, sub, action] = positionals;
  let key = command ?? "";
  if (command === "note") {
    if ((sub !== "new" && sub !== "owner") || action !== undefined) throw new UsageError("zsd note new|owner");
    key = `note ${sub}`;
  } else if (command === "position") {
    if (!sub) throw new UsageError("zsd position <id> [repay|withdraw|close|top-up|liquidate]");
    if (!/^\d{1,78}$/.test(sub)) throw new UsageError(`a position id is a whole number, e.g. 3 (got ${sub})`);
    if (action !== undefined) {
      key = `position ${action}`;
      if (!NEEDS[key])
        throw new UsageError(`unknown position action ${action}: repay, withdraw, close, top-up or liquidate`);
    }
  } else if (command === "redeem" && sub !== undefined) {
    if (sub !== "sign" || action !== undefined) throw new UsageError("zsd redeem [sign] --amount ZSD --to ZADDR");
    key = "redeem sign";
  } else if (command === "redirect") {
    if (!sub) throw new UsageError("zsd redirect <red_… | payoutId> --to ZADDR|note");
    if (!/^(red_[0-9A-Za-z]{20}|[1-9]\d{0,19})$/.test(sub)) {
      throw new UsageError(
        `a payout to redirect is a redemption's id (red_ followed by 20 letters and digits) or an on-chain payoutId, ` +
          `a whole number (got ${sub})`,
      );
    }
    if (action !== undefined) throw new UsageError(`zsd redirect ${sub}: unexpected ${action}`);
  } else if (command === "governance") {
    key = governanceKey(positionals);
  } else if (command === "status") {
    if (!sub) throw new UsageError("zsd status <id>");
    if (!ID_SHAPES.some(([shape]) => shape.test(sub))) {
      throw new UsageError(
        `an id is mint_, red_, pact_, prf_ or wdr_ followed by 20 letters and digits, e.g. mint_4Hn8pQ2rT6vX1zB3cD5f (got ${sub})`,
      );
    }
  }
  const needs = NEEDS[key];
  if (!needs) throw new UsageError(`unknown command ${command}`);
  if (values["no-wait"] && !["governance vote", "governance queue", "governance execute"].includes(key)) {
    throw new UsageError(
      "--no-wait is for zsd governance vote, queue and execute (a proposal the governor does not take yet)",
    );
  }
  const allowed = new Set([...needs.required, ...needs.optional].map((flag) => flag.split(":")[0]));
  for (const bound of ["max-debt", "min-zec", "min-seized-zec", "min-seized-value"] as const) {
    if (values[bound] !== undefined && !allowed.has(bound)) {
      throw new UsageError(`--${bound} is a signed bound of ${BOUND_OF[bound]}, not of ${key}`);
    }
  }
  for (const flag of needs.required) check(values, flag, true);
  for (const flag of needs.optional) check(values, flag, false);
  const privateKey = process.env.ZSD_PRIVATE_KEY;
  if (needs.signer === "required" && !privateKey) {
    throw new UsageError("ZSD_PRIVATE_KEY (the signer's 0x… private key) is required to sign");
  }
  if (needs.signer && privateKey && !PRIVATE_KEY_SHAPE.test(privateKey)) {
    throw new UsageError("ZSD_PRIVATE_KEY must be 0x followed by 64 hexadecimal digits");
  }
  // Read by every client the commands make: a mistake there would otherwise surface as a TypeError.
  const minAnonymity = process.env.ZSD_MIN_ANONYMITY;
  if (minAnonymity !== undefined && minAnonymity !== "" && !/^\d{1,9}$/.test(minAnonymity)) {
    throw new UsageError(`ZSD_MIN_ANONYMITY must be a whole number of deposits, e.g. 20 (got ${minAnonymity})`);
  }
  const baseUrl = values["base-url"] ?? process.env.ZSD_BASE_URL;
  if (baseUrl !== undefined && !key.startsWith("note ") && !/^https?:\/\/[^\s/]+/.test(baseUrl)) {
    throw new UsageError(
      `--base-url (or ZSD_BASE_URL) must be an http(s) address, e.g. http://127.0.0.1:3000 (got ${baseUrl})`,
    );
  }
  return key;
}

function check(values: Values, flag: Flag, required: boolean): void {
  const [name, kind] = flag.split(":") as [keyof Values & string, string | undefined];
  if (name === "call") {
    const calls = values.call ?? [];
    if (calls.length === 0 && required) {
      throw new UsageError(
        '--call is required: what the proposal does, e.g. --call "PositionManager.setMinCollateralRatio(17000)"',
      );
    }
    for (const call of calls) {
      const match = /^\s*(\w+)\.(\w+)\((.*)\)\s*$/s.exec(call);
      if (!match) {
        throw new UsageError(
          `--call is Contract.function(arguments), e.g. "PositionManager.setMinCollateralRatio(17000)" (got ${call})`,
        );
      }
      if (!CALL_CONTRACTS.includes(match[1]!)) {
        throw new UsageError(`--call names one of ${CALL_CONTRACTS.join(", ")} (got ${match[1]})`);
      }
    }
    return;
  }
  const value = name === "note" ? noteText(values) : (values[name] as string | undefined);
  if (value === undefined || value === "") {
    if (required) throw new UsageError(`--${name} is required`);
    return;
  }
  const problem = (() => {
    switch (name) {
      case "note":
        return NOTE_SHAPE.test(value.trim()) ? undefined : "must be a note as `zsd note new` prints it (zsdnote1…)";
      case "amount":
        return amountProblem(value, kind as "ZSD" | "ZEC");
      case "floor":
      case "note-amount":
        return amountProblem(value, "ZEC");
      // A bound of 0 is one: no ZEC required, no value required, nothing to burn.
      case "max-debt":
      case "min-zec":
      case "min-seized-zec":
      case "min-seized-value":
        return amountProblem(value, kind as "ZSD" | "ZEC", true);
      case "recipient":
        return ADDRESS_SHAPE.test(value)
          ? undefined
          : `must be an address, 0x followed by 40 hexadecimal digits (got ${value})`;
      case "to":
        if (kind === "note" && value === "note") return undefined;
        if (/^t[1-3m]/.test(value))
          return "must be a shielded Zcash address (zs…, ztestsapling…, u1…, utest1…), not a transparent one";
        return SHIELDED_SHAPE.test(value)
          ? undefined
          : `must be a shielded Zcash address (zs…, ztestsapling…, u1…, utest1…)${kind === "note" ? " or note" : ""}`;
      case "delegatee":
        return ADDRESS_SHAPE.test(value)
          ? undefined
          : `must be an address, 0x followed by 40 hexadecimal digits (got ${value})`;
      case "title":
        return value.includes("\n") ? "must be one line (put the rest in --description)" : undefined;
      case "wait":
        if (values["no-wait"]) return "and --no-wait contradict each other: give one";
        return /^\d{1,6}$/.test(value) ? undefined : `must be a whole number of seconds, e.g. 60 (got ${value})`;
      case "rpc-url":
        return /^https?:\/\/[^\s/]+/.test(value) ? undefined : `must be an http(s) address, e.g. http://127.0.0.1:8545`;
      default:
        return undefined;
    }
  })();
  if (problem) throw new UsageError(`--${name} ${problem}`);
}
