// The commands themselves, loaded only once options.ts has found the flags
// sound: viem, the prover and the client cost most of a second to load.
import type { Address, Hex } from "viem";
import { privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import {
  type AnonymityWarning,
  type Hold,
  type MintStep,
  type PositionStep,
  type RedeemStep,
  type ReleaseTo,
  Zsd,
  ZsdError,
  describeHold,
  describePayout,
} from "../client/index.ts";
import { type Note, positionOwnerKey } from "../notes/index.ts";
import { parseShieldedAddress } from "../zcash/index.ts";
import { governance } from "./governance.ts";
import { UsageError, type Values, noteText, usageErrorText } from "./options.ts";

let values: Values;
// The request a flow was following when it stopped (mint_…, pact_…, wdr_…): its JSON error names it, so a
// script (the Python SDK) reads the failed record itself rather than the message.
let followed: string | undefined;

const progress = (line: string) => {
  if (!values.json || process.env.ZSD_PROGRESS === "1") process.stderr.write(`${line}\n`);
};
const out = (result: unknown, human: string): void => {
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${human}\n`);
};

function need(name: "note" | "amount" | "recipient" | "to"): string {
  const value = name === "note" ? noteText(values) : values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

/** A shielded address, checked whole (checksum, receivers) on the network its prefix names. */
function zcashAddress(text: string): string {
  const network = /^(zs|u)1/i.test(text) ? "mainnet" : "testnet";
  try {
    return parseShieldedAddress(text, network).address;
  } catch (error) {
    throw new UsageError(`--to: ${(error as Error).message}`);
  }
}

function client(): Zsd {
  return new Zsd(process.env.ZSD_API_KEY, { baseUrl: values["base-url"] ?? process.env.ZSD_BASE_URL });
}

/**
 * Where the ZEC a proof leaves of its note goes: told even with --json (as a
 * released note is), since that change note is the only way back to it.
 */
const tellChange = (amount: string, note: string) =>
  process.stderr.write(
    `change: the other ${amount} ZEC of the note is not spent; once this proof is used it is in the note's ` +
      `change note ${note} (keep it secret). It is no deposit: spend it with ` +
      `--note <that note> --note-amount ${amount}\n`,
  );

/**
 * A floor that leaves the deposit among few: told even with --json,
 * as one JSON line ({"warning": …}) a script (the Python SDK) can read; the
 * mint goes on, as the SDK's does.
 */
const warn = (warning: AnonymityWarning) =>
  process.stderr.write(
    values.json
      ? `${JSON.stringify({ warning })}\n`
      : `warning: ${warning.message} (ZSD_MIN_ANONYMITY sets the minimum, ${warning.minimum} now; --floor a lower one)\n`,
  );

/**
 * Where a step stands, and who holds it: a hold is told even with --json (one
 * JSON line, {"held": …}, as a warning is), since a held request otherwise
 * waits in silence until the command gives up.
 */
const following = (kind: string, id: string, step: { status: string; hold: Hold | null }) => {
  followed = id;
  if (step.hold && values.json && process.env.ZSD_PROGRESS !== "1") {
    process.stderr.write(`${JSON.stringify({ held: { id, ...step.hold } })}\n`);
  } else progress(`${kind}${id}: ${step.hold ? describeHold(step.hold) : step.status}`);
};

/** When the queue was last told: the SDK reports it every second, a line every 10 s is enough to read. */
let pendingToldAt = 0;
/** A change note's leaf queued for the tree: the command waits rather than failing at once. */
const tellPending = (step: { sequence: number; queuedFor: number }) => {
  if (Date.now() - pendingToldAt < 10_000) return;
  pendingToldAt = Date.now();
  progress(
    `waiting for the tree: the note's leaf is number ${step.sequence} in the registry's queue, queued ` +
      `${Math.round(step.queuedFor / 1000)} s ago; it can be proven once an insertion takes it…`,
  );
};

const mintProgress = (step: MintStep) => {
  if (step.step === "tree") progress(`tree: ${step.leaves} deposit leaves`);
  else if (step.step === "pending") tellPending(step);
  else if (step.step === "change") tellChange(step.amount, step.note);
  else if (step.step === "proving") progress(`proving with a collateral floor of ${step.collateralFloor} ZEC…`);
  else if (step.step === "submitted") progress(`proof ${step.proofId} verified`);
  // A held mint says who holds it: a bare "queued" reads as a stuck relay.
  else following("mint ", step.mintId, step);
};
const redeemProgress = (step: RedeemStep) => {
  if (step.step === "signing") return progress("signing the redemption…");
  // Burned, the payout's stage and confirmations are told as they move (a quarter minute at npm start's pace).
  if (step.payout && !step.hold)
    return following("redemption ", step.id, { ...step, status: `${step.status}: ${describePayout(step.payout)}…` });
  following("redemption ", step.id, step);
};
const positionProgress = (step: PositionStep) => {
  if (step.step === "tree") progress(`tree: ${step.leaves} deposit leaves`);
  else if (step.step === "pending") tellPending(step);
  else if (step.step === "change") tellChange(step.amount, step.note);
  else if (step.step === "proving") progress(`proving ${step.collateralFloor} ZEC of the note…`);
  else if (step.step === "signing") progress(`signing as ${step.signer}…`);
  // As for a mint: a held action says who holds it rather than "queued".
  else following("", step.id, step);
};

function signerKey(required: boolean) {
  const key = process.env.ZSD_PRIVATE_KEY;
  if (!key && required) throw new UsageError("ZSD_PRIVATE_KEY (the signer's 0x… private key) is required to sign");
  return key ? privateKeyToAccount(key as Hex) : undefined;
}

/** `--to`: a shielded address, or `note` for a fresh note (answered, to keep). */
function releaseTo(zsd: Zsd): { to: ReleaseTo; fresh?: Note } {
  const to = need("to");
  if (to !== "note") return { to: { zcashAddress: zcashAddress(to) } };
  const fresh = zsd.notes.create();
  // Told before anything is sent: if the wait is cut short, the ZEC may still land in this note.
  process.stderr.write(`new note, for the released ZEC (keep it secret): ${zsd.notes.encode(fresh)}\n`);
  return { to: { note: fresh }, fresh };
}

async function position(zsd: Zsd, positionId: string | undefined, action: string | undefined): Promise<void> {
  if (!positionId) throw new UsageError("zsd position <id> [repay|withdraw|close|top-up|liquidate]");
  const common = { positionId, onProgress: positionProgress };
  const done = (result: Record<string, unknown>, fresh: Note | undefined, human: string) => {
    const note = fresh ? zsd.notes.encode(fresh) : undefined;
    out(
      note ? { ...result, note } : result,
      note
        ? `${human}
new note: ${note} (keep it secret)`
        : human,
    );
  };
  switch (action) {
    case undefined: {
      const p = await zsd.positions.get(positionId);
      return out(
        p,
        `position ${p.id} (${p.status}): ${p.collateral} ZEC, ${p.debt} ZSD, ratio ${p.collateralRatio ?? "-"}, ` +
          `liquidation under $${p.liquidationPrice ?? "-"} (ZEC at $${p.price})`,
      );
    }
    case "repay": {
      const a = await zsd.repayPosition({ ...common, amount: need("amount"), signer: signerKey(true)! });
      return done(a, undefined, `repaid ${a.amount} ZSD (${a.actionId}, tx ${a.txHash})`);
    }
    case "withdraw": {
      const { to, fresh } = releaseTo(zsd);
      const a = await zsd.withdrawFromPosition({ ...common, note: noteArg(zsd), amount: need("amount"), to });
      return done(a, fresh, `withdrew ${a.released ?? a.amount} ZEC (${a.actionId}, tx ${a.txHash})`);
    }
    case "close": {
      const { to, fresh } = releaseTo(zsd);
      const a = await zsd.closePosition({
        ...common,
        note: noteArg(zsd),
        to,
        payer: signerKey(false),
        maxDebt: values["max-debt"],
        minZec: values["min-zec"],
      });
      return done(a, fresh, `closed; released ${a.released ?? "0"} ZEC (${a.actionId}, tx ${a.txHash})`);
    }
    case "liquidate": {
      const { to, fresh } = releaseTo(zsd);
      const a = await zsd.liquidatePosition({
        ...common,
        signer: signerKey(true)!,
        to,
        maxDebt: values["max-debt"],
        minSeizedZec: values["min-seized-zec"],
        minSeizedValue: values["min-seized-value"],
      });
      return done(a, fresh, `liquidated; seized ${a.released ?? "0"} ZEC (${a.actionId}, tx ${a.txHash})`);
    }
    case "top-up": {
      const a = await zsd.topUpPosition({
        ...common,
        note: noteArg(zsd),
        noteAmount: values["note-amount"],
        amount: values.amount,
      });
      return done(a, undefined, `added ${a.amount} ZEC (${a.actionId}, tx ${a.txHash})`);
    }
    default:
      throw new UsageError(`unknown position action ${action}`);
  }
}

/**
 * A held payout redirected by its owner, followed until its ZEC is somewhere again: paid to the new
 * address (a new payout, paid as any other) or in the fresh note's leaf, queued for the tree.
 */
async function redirect(zsd: Zsd, id: string): Promise<void> {
  const signer = signerKey(true)!;
  const { to, fresh } = releaseTo(zsd);
  const deadline = Date.now() + Number(values.wait ?? 300) * 1000;
  progress(`signing a redirect of ${id} as ${signer.address}…`);
  followed = id;
  let r = await zsd.redirectPayout({ id, to, signer, timeoutMs: Math.max(0, deadline - Date.now()) });
  progress(`redirect ${r.redirectId}: ${r.status} (tx ${r.txHash})`);
  if (fresh) {
    const note = zsd.notes.encode(fresh);
    return out(
      { ...r, note },
      `redirected payout ${r.payoutId} (${r.zecHeld} ZEC) into a fresh note, leaf queued as number ` +
        `${r.noteSequence} (tx ${r.txHash})\nnew note: ${note} (keep it secret)`,
    );
  }
  // The new payout is paid as any other: after its confirmations, by custody.
  for (let told = r.payoutStatus; r.payoutStatus !== "paid";) {
    if (r.payoutStatus === "held" || r.payoutStatus === "in_review") {
      throw new Error(
        `The redirect went through, but its new payout ${r.newPayoutId} is ${r.payoutStatus.replace("_", " ")}` +
          (r.payoutStatus === "held" ? `: custody could not pay it either; redirect ${r.newPayoutId} again` : ""),
      );
    }
    if (Date.now() > deadline) {
      throw new Error(`The new payout ${r.newPayoutId} is still ${r.payoutStatus ?? "not found"}; zsd status ${id}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    r = await zsd.redemptions.getRedirect(id);
    if (r.payoutStatus !== told) progress(`payout ${r.newPayoutId}: ${(told = r.payoutStatus)}`);
  }
  const address = "withdrawAddress" in r.destination ? r.destination.withdrawAddress : undefined;
  return out(
    r,
    `redirected payout ${r.payoutId}: ${r.zecHeld} ZEC paid to ${address ?? "the new address"} ` +
      `(payout ${r.newPayoutId}, Zcash tx ${r.zcashTxId})`,
  );
}

type PositionAction = Awaited<ReturnType<Zsd["positions"]["actionById"]>>;

/** A position action in a line: what, where it stands (who holds it, why it failed) and its transaction. */
function actionStatus(a: PositionAction): void {
  const what = `${a.action.replace("_", "-")}${a.amount === null ? "" : ` of ${a.amount} ${a.action === "repay" ? "ZSD" : "ZEC"}`}`;
  const standing = a.hold
    ? `${a.status}, ${describeHold(a.hold)}`
    : a.status === "failed"
      ? `failed: ${a.failureReason ?? a.failureCode ?? "no reason given"}`
      : a.status;
  const released = a.released === null ? "" : `; released ${a.released} ZEC`;
  out(
    a,
    `position action ${a.actionId} (${what} on position ${a.positionId}): ${standing}${released}; ` +
      `tx ${a.txHash ?? "not sent yet"}`,
  );
}

const noteArg = (zsd: Zsd) => zsd.notes.decode(need("note"));

/** What `prove` and `mint` take from their flags alike. */
const mintArgs = (zsd: Zsd) => ({
  note: noteArg(zsd),
  noteAmount: values["note-amount"],
  amount: need("amount"),
  recipient: need("recipient") as Address,
  floor: values.floor,
  onProgress: mintProgress,
  onWarning: warn,
});

async function main(positionals: string[]): Promise<void> {
  const [command, sub, action] = positionals;
  switch (command) {
    case "note": {
      const zsd = new Zsd("sk_test_offline", {});
      if (sub === "owner") {
        const privateKey = positionOwnerKey(noteArg(zsd));
        const address = privateKeyToAddress(privateKey);
        return out(
          { address, privateKey },
          `position owner: ${address}\nits private key (--json prints it) is as secret as the note: it moves the ` +
            `note's positions and redirects its payouts`,
        );
      }
      if (sub !== "new") throw new UsageError("zsd note new|owner");
      const note = zsd.notes.create();
      const result = { note: zsd.notes.encode(note), noteCommitment: zsd.notes.commitment(note) };
      return out(result, `note:       ${result.note}\ncommitment: ${result.noteCommitment}`);
    }
    case "deposit": {
      const zsd = client();
      const deposit = await zsd.sandbox.depositNote(zsd.notes.decode(need("note")), need("amount"));
      return out(deposit, `deposit of ${deposit.amount} ZEC recorded at leaf ${deposit.leafIndex}`);
    }
    case "prove": {
      const zsd = client();
      const body = await zsd.prove(mintArgs(zsd));
      return out(body, JSON.stringify(body, null, 2));
    }
    case "mint": {
      const zsd = client();
      const mint = await zsd.mint(mintArgs(zsd));
      return out(
        mint,
        `minted ${mint.amount} ZSD to ${mint.recipient} (${mint.mintId}, position ${mint.positionId}, tx ${mint.txHash})`,
      );
    }
    case "redeem": {
      const signer = signerKey(true)!;
      const zsd = client();
      if (sub === "sign") {
        // The spec's body: the address in the clear, signed over the seal the API answers for it.
        const body = await zsd.signRedemption({
          amount: need("amount"),
          withdrawAddress: zcashAddress(need("to")),
          signer,
          sealedBy: "api",
          minZec: values["min-zec"],
        });
        return out(body, JSON.stringify(body, null, 2));
      }
      const redemption = await zsd.redeem({
        amount: need("amount"),
        withdrawAddress: zcashAddress(need("to")),
        signer,
        minZec: values["min-zec"],
        onProgress: redeemProgress,
      });
      return out(
        redemption,
        `redeemed ${redemption.amount} ZSD for ${redemption.zecDue} ZEC (${redemption.id}, Zcash tx ${redemption.zcashTxId})`,
      );
    }
    case "redirect":
      return redirect(client(), sub!);
    case "position":
      return position(client(), sub, action);
    case "governance":
      return governance(client(), positionals.slice(1), { values, out, progress, signer: signerKey });
    case "withdraw": {
      const zsd = client();
      const w = await zsd.withdrawNote({
        note: noteArg(zsd),
        noteAmount: values["note-amount"],
        amount: values.amount,
        zcashAddress: zcashAddress(need("to")),
        onProgress: positionProgress,
        ...(values.wait === undefined ? {} : { timeoutMs: Number(values.wait) * 1000 }),
      });
      return out(
        w,
        `paid ${w.amount} ZEC of the note to ${w.zcashAddress} (${w.withdrawalId}, tx ${w.txHash}; payout owner ${w.owner}, who may redirect it)`,
      );
    }
    case "status": {
      const zsd = client();
      if (!sub) throw new UsageError("zsd status <id>");
      if (sub.startsWith("pact_")) return actionStatus(await zsd.positions.actionById(sub));
      const found = sub.startsWith("mint_")
        ? await zsd.mints.get(sub)
        : sub.startsWith("red_")
          ? await zsd.redemptions.get(sub)
          : sub.startsWith("prf_")
            ? await zsd.proofs.get(sub)
            : sub.startsWith("wdr_")
              ? await zsd.withdrawals.get(sub)
              : undefined;
      if (!found) throw new UsageError("an id is mint_…, red_…, pact_…, prf_… or wdr_…");
      return out(found, JSON.stringify(found, null, 2));
    }
    case "ledger": {
      const zsd = client();
      const [supply, collateral, peg] = await Promise.all([
        zsd.ledger.supply(),
        zsd.ledger.collateral(),
        zsd.ledger.pegPrice(),
      ]);
      return out(
        { supply, collateral, peg },
        `supply:     ${supply.circulating} ZSD\ncollateral: ${JSON.stringify(collateral)}\npeg:        ${JSON.stringify(peg)}`,
      );
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/** Runs a command whose flags options.ts found sound; answers the exit code. */
export async function run(checked: Values, positionals: string[]): Promise<number> {
  values = checked;
  try {
    await main(positionals);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(usageErrorText(error));
      return 2;
    }
    const e = error as Error;
    const detail =
      error instanceof ZsdError
        ? { error: e.message, code: error.code, requestId: error.requestId ?? null }
        : { error: e.message, code: "error" };
    if (followed) Object.assign(detail, { id: followed });
    process.stderr.write(values.json ? `${JSON.stringify(detail)}\n` : `zsd: ${detail.error}\n`);
    // A payout custody could not pay is not lost: its owner redirects it, and is told how.
    if (!values.json && detail.code === "payout_held" && followed) {
      process.stderr.write(`its ZEC is held for you: zsd redirect ${followed} --to ZADDR|note\n`);
    }
    return 1;
  }
}
