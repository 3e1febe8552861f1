// zsd: the SDK's flows from a shell. The key comes from ZSD_API_KEY (never a
// flag: flags show in process lists), the note from --note or ZSD_NOTE (the
// private way), the base address from --base-url or ZSD_BASE_URL. Results go
// to stdout (--json for scripts), progress to stderr.
import { parseArgs } from "node:util";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type MintStep, type RedeemStep, Zsd, ZsdError } from "../client/index.ts";

const USAGE = `usage: zsd <command> [options]

  note new                                   a fresh note (keep it secret: it is the deposit)
  deposit --note N --amount ZEC              sandbox: a simulated deposit for the note (N may be in ZSD_NOTE)
  prove --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             the proof of a mint, made here (the body of POST /v1/proofs/submit)
  mint --note N --amount ZSD --recipient 0x [--floor ZEC]
                                             prove, submit, mint and wait until confirmed
  redeem --amount ZSD --to ZADDR             sign (key in ZSD_PRIVATE_KEY) and redeem; wait until paid
  status ID                                  a mint (mint_…), redemption (red_…) or proof (prf_…)
  ledger                                     supply, collateral and the peg price

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

async function main(): Promise<void> {
  const [command, sub] = positionals;
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
        amount: need("amount"),
        recipient: need("recipient") as Address,
        floor: values.floor,
        onProgress: mintProgress,
      });
      return out(mint, `minted ${mint.amount} ZSD to ${mint.recipient} (${mint.mintId}, tx ${mint.txHash})`);
    }
    case "redeem": {
      const key = process.env.ZSD_PRIVATE_KEY;
      if (!key) throw new UsageError("ZSD_PRIVATE_KEY (the owner's 0x… private key) is required to sign");
      const zsd = client();
      const redemption = await zsd.redeem({
        amount: need("amount"),
        withdrawAddress: need("to"),
        signer: privateKeyToAccount(key as Hex),
        onProgress: redeemProgress,
      });
      return out(
        redemption,
        `redeemed ${redemption.amount} ZSD for ${redemption.zecDue} ZEC (${redemption.id}, Zcash tx ${redemption.zcashTxId})`,
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
            : undefined;
      if (!found) throw new UsageError("an id is mint_…, red_… or prf_…");
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
