// zsd: the SDK's flows from a shell. The key comes from ZSD_API_KEY (never a
// flag: flags show in process lists), the note from --note or ZSD_NOTE (the
// private way), the base address from --base-url or ZSD_BASE_URL. Results go
// to stdout (--json for scripts), progress to stderr.
import { parseArgs } from "node:util";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type MintStep, type PositionStep, type RedeemStep, type ReleaseTo, Zsd, ZsdError } from "../client/index.ts";
import type { Note } from "../notes/index.ts";

const USAGE = `usage: zsd <command> [options]

  note new                                   a fresh note (keep it secret: it is the deposit)
  deposit --note N --amount ZEC              sandbox: a simulated deposit for the note (N may be in ZSD_NOTE)
  prove --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             the proof of a mint, made here (the body of POST /v1/proofs/submit)
  mint --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             prove, submit, mint and wait until confirmed; the mint opens a position
  redeem --amount ZSD --to ZADDR             sign (key in ZSD_PRIVATE_KEY) and redeem; wait until paid
  position ID                                a position: collateral, debt, ratio, liquidation price
  position ID repay --amount ZSD             burn ZSD against its debt (the payer's key in ZSD_PRIVATE_KEY)
  position ID withdraw --note N --amount ZEC --to ZADDR|note
                                             take ZEC out, signed with the owner key of the note that opened it
  position ID close --note N --to ZADDR|note close it (with ZSD_PRIVATE_KEY set, that wallet repays the debt first)
  position ID top-up --note N [--amount ZEC] add a note's ZEC (proven here)
  withdraw --note N --to ZADDR [--amount ZEC]
                                             pay a note's ZEC out to a shielded address (a deposit that will not mint)
  status ID                                  a mint (mint_…), redemption (red_…), proof (prf_…) or withdrawal (wdr_…)
  ledger                                     supply, collateral and the peg price

--to note releases into a fresh note, printed (stderr) before anything is sent: keep it, it mints again. A note that is not a deposit
(a change or released note) needs --note-amount ZEC (what it holds), for mint, prove, top-up and withdraw.

options: --json (machine-readable output), --base-url URL (or ZSD_BASE_URL); the API key is ZSD_API_KEY.`;

const { values, positionals } = parseArgs({
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
    help: { type: "boolean", short: "h", default: false },
  },
});

const progress = (line: string) => {
  if (!values.json || process.env.ZSD_PROGRESS === "1") process.stderr.write(`${line}\n`);
};
const out = (result: unknown, human: string): void => {
  process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${human}\n`);
};

function need(name: "note" | "amount" | "recipient" | "to"): string {
  // A note may come from ZSD_NOTE instead: a command line is readable by every local user (ps).
  const value = values[name] ?? (name === "note" ? process.env.ZSD_NOTE : undefined);
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

class UsageError extends Error {}

function client(): Zsd {
  return new Zsd(process.env.ZSD_API_KEY, { baseUrl: values["base-url"] ?? process.env.ZSD_BASE_URL });
}

const mintProgress = (step: MintStep) => {
  if (step.step === "tree") progress(`tree: ${step.leaves} deposit leaves`);
  else if (step.step === "proving") progress(`proving with a collateral floor of ${step.collateralFloor} ZEC…`);
  else if (step.step === "submitted") progress(`proof ${step.proofId} verified`);
  else progress(`mint ${step.mintId}: ${step.status}`);
};
const redeemProgress = (step: RedeemStep) =>
  progress(step.step === "signing" ? "signing the redemption…" : `redemption ${step.id}: ${step.status}`);
const positionProgress = (step: PositionStep) => {
  if (step.step === "tree") progress(`tree: ${step.leaves} deposit leaves`);
  else if (step.step === "proving") progress(`proving ${step.collateralFloor} ZEC of the note…`);
  else if (step.step === "signing") progress(`signing as ${step.signer}…`);
  else progress(`${step.id}: ${step.status}`);
};

function signerKey(required: boolean) {
  const key = process.env.ZSD_PRIVATE_KEY;
  if (!key && required) throw new UsageError("ZSD_PRIVATE_KEY (the signer's 0x… private key) is required to sign");
  return key ? privateKeyToAccount(key as Hex) : undefined;
}

/** `--to`: a shielded address, or `note` for a fresh note (answered, to keep). */
function releaseTo(zsd: Zsd): { to: ReleaseTo; fresh?: Note } {
  const to = need("to");
  if (to !== "note") return { to: { zcashAddress: to } };
  const fresh = zsd.notes.create();
  // Told before anything is sent: if the wait is cut short, the ZEC may still land in this note.
  process.stderr.write(`new note, for the released ZEC (keep it secret): ${zsd.notes.encode(fresh)}\n`);
  return { to: { note: fresh }, fresh };
}

async function position(zsd: Zsd, positionId: string | undefined, action: string | undefined): Promise<void> {
  if (!positionId) throw new UsageError("zsd position <id> [repay|withdraw|close|top-up]");
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
      const a = await zsd.closePosition({ ...common, note: noteArg(zsd), to, payer: signerKey(false) });
      return done(a, fresh, `closed; released ${a.released ?? "0"} ZEC (${a.actionId}, tx ${a.txHash})`);
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

const noteArg = (zsd: Zsd) => zsd.notes.decode(need("note"));

async function main(): Promise<void> {
  const [command, sub, action] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  switch (command) {
    case "note": {
      if (sub !== "new") throw new UsageError("zsd note new");
      const zsd = new Zsd("sk_test_offline", {});
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
      const body = await zsd.prove({
        note: zsd.notes.decode(need("note")),
        noteAmount: values["note-amount"],
        amount: need("amount"),
        recipient: need("recipient") as Address,
        floor: values.floor,
        onProgress: mintProgress,
      });
      return out(body, JSON.stringify(body, null, 2));
    }
    case "mint": {
      const zsd = client();
      const mint = await zsd.mint({
        note: zsd.notes.decode(need("note")),
        noteAmount: values["note-amount"],
        amount: need("amount"),
        recipient: need("recipient") as Address,
        floor: values.floor,
        onProgress: mintProgress,
      });
      return out(
        mint,
        `minted ${mint.amount} ZSD to ${mint.recipient} (${mint.mintId}, position ${mint.positionId}, tx ${mint.txHash})`,
      );
    }
    case "redeem": {
      const signer = signerKey(true)!;
      const zsd = client();
      const redemption = await zsd.redeem({
        amount: need("amount"),
        withdrawAddress: need("to"),
        signer,
        onProgress: redeemProgress,
      });
      return out(
        redemption,
        `redeemed ${redemption.amount} ZSD for ${redemption.zecDue} ZEC (${redemption.id}, Zcash tx ${redemption.zcashTxId})`,
      );
    }
    case "position":
      return position(client(), sub, action);
    case "withdraw": {
      const zsd = client();
      const w = await zsd.withdrawNote({
        note: noteArg(zsd),
        noteAmount: values["note-amount"],
        amount: values.amount,
        zcashAddress: need("to"),
        onProgress: positionProgress,
      });
      return out(
        w,
        `paid ${w.amount} ZEC of the note to ${w.zcashAddress} (${w.withdrawalId}, tx ${w.txHash}; payout owner ${w.owner}, who may redirect it)`,
      );
    }
    case "status": {
      const zsd = client();
      if (!sub) throw new UsageError("zsd status <id>");
      const found = sub.startsWith("mint_")
        ? await zsd.mints.get(sub)
        : sub.startsWith("red_")
          ? await zsd.redemptions.get(sub)
          : sub.startsWith("prf_")
            ? await zsd.proofs.get(sub)
            : sub.startsWith("wdr_")
              ? await zsd.withdrawals.get(sub)
              : undefined;
      if (!found) throw new UsageError("an id is mint_…, red_…, prf_… or wdr_…");
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

try {
  await main();
  // The prover's worker threads would keep the process alive.
  process.exit(0);
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`zsd: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const e = error as Error;
  const detail =
    error instanceof ZsdError
      ? { error: e.message, code: error.code, requestId: error.requestId ?? null }
      : { error: e.message, code: "error" };
  process.stderr.write(values.json ? `${JSON.stringify(detail)}\n` : `zsd: ${detail.error}\n`);
  process.exit(1);
}
