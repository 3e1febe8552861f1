// How custody records the deposits it sees: always by
// leaf, in a batch (the registry's recordDeposits), so the chain shows the
// leaves and the batch's total, never one deposit's amount as such. The
// zcashd worker batches what one scan finds; the sandbox batches what
// arrives within a short window (DepositWindow). A batch of one still shows
// its total, which is its amount: the window is what gives it company.
import { depositLeaf } from "@zsd/sdk/notes";
import type { Database, Queryable } from "../db/index.ts";
import type { CustodyCalls } from "./custody-calls.ts";
import type { RecordedDeposit } from "./index.ts";
import { hasDepositOf, insertDepositLine } from "./ledger.ts";
import { ContractRevertError, isRevert } from "../errors.ts";
import { randomId } from "../ids.ts";

export interface DepositToRecord {
  noteCommitment: bigint;
  amountZat: bigint;
  zcashTxId: string;
  /** The account that made it (a sandbox deposit's); a deposit zcashd finds has none. */
  accountId?: string;
  /** Runs in the transaction that writes the ledger line (the deposit.recorded event of its account). */
  alsoIn?: (tx: Queryable, recorded: RecordedDeposit) => Promise<unknown>;
}

/** What became of one deposit of a batch: recorded (now, or before a crash), or refused. */
export type DepositOutcome = { recorded: RecordedDeposit } | { error: unknown };

/**
 * Records deposits on the chain in one batch, then in the ZEC ledger in one
 * transaction; one outcome per deposit, in order. A deposit the chain holds
 * already (the registry names its leaf) is taken out and the rest go again:
 * recorded before a crash and missing from the ledger, its line is written
 * now; in the ledger already, or twice in this batch, it is refused as
 * DepositAlreadyRecorded (a second claim on the same ZEC).
 */
export async function recordDepositBatch(
  db: Database,
  custodyCalls: CustodyCalls,
  deposits: readonly DepositToRecord[],
): Promise<DepositOutcome[]> {
  const outcomes: DepositOutcome[] = new Array(deposits.length);
  const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.noteCommitment));
  let pending: number[] = [];
  const seen = new Set<bigint>();
  for (const [i, leaf] of leaves.entries()) {
    if (seen.has(leaf)) outcomes[i] = { error: new ContractRevertError("DepositAlreadyRecorded", [leaf]) };
    else (seen.add(leaf), pending.push(i));
  }
  while (pending.length > 0) {
    let onChain: Awaited<ReturnType<CustodyCalls["recordDeposits"]>>;
    try {
      onChain = await custodyCalls.recordDeposits(pending.map((i) => deposits[i]!));
    } catch (error) {
      if (!isRevert(error, "DepositAlreadyRecorded")) {
        for (const i of pending) outcomes[i] = { error };
        break;
      }
      const leaf = error.args[0] as bigint;
      const at = pending.find((i) => leaves[i] === leaf);
      if (at === undefined) {
        // Not one of ours (a node answering for another call): nothing is known of this batch.
        for (const i of pending) outcomes[i] = { error };
        break;
      }
      outcomes[at] = await recoverRecorded(db, custodyCalls, deposits[at]!, error).then(
        (recorded) => ({ recorded }),
        (failure: unknown) => ({ error: failure }),
      );
      pending = pending.filter((i) => i !== at);
      continue;
    }
    const recorded = pending.map((i, k): RecordedDeposit => ({
      id: randomId("dep"),
      leafIndex: Number(onChain.firstIndex) + k,
      leaf: leaves[i]!,
      root: onChain.root,
      amountZat: deposits[i]!.amountZat,
      noteCommitment: deposits[i]!.noteCommitment,
      txHash: onChain.txHash,
    }));
    try {
      await db.transaction(async (tx) => {
        for (const [k, i] of pending.entries()) await writeLedgerLine(tx, deposits[i]!, recorded[k]!);
      });
      for (const [k, i] of pending.entries()) outcomes[i] = { recorded: recorded[k]! };
    } catch (error) {
      // On the chain, not in the ledger: found again (recoverRecorded) when the deposit is seen again.
      for (const i of pending) outcomes[i] = { error };
    }
    break;
  }
  return outcomes;
}

/**
 * A deposit the registry already holds: if the ledger lacks it (the database
 * went down between the chain and the ledger), this is that deposit and its
 * line is written now; else it is refused with the registry's refusal.
 */
async function recoverRecorded(
  db: Database,
  custodyCalls: CustodyCalls,
  deposit: DepositToRecord,
  refusal: ContractRevertError,
): Promise<RecordedDeposit> {
  const inLedger = await hasDepositOf(db, deposit.noteCommitment, deposit.amountZat);
  const onChain = inLedger ? undefined : await custodyCalls.recordedDeposit(deposit.noteCommitment, deposit.amountZat);
  if (!onChain) throw refusal;
  const recorded: RecordedDeposit = {
    id: randomId("dep"),
    leafIndex: Number(onChain.index),
    leaf: onChain.leaf,
    root: onChain.root,
    amountZat: deposit.amountZat,
    noteCommitment: deposit.noteCommitment,
    txHash: onChain.txHash,
  };
  // Another process may recover the same deposit at the same moment: the first line stands, the other is refused.
  const written = await db.transaction((tx) => writeLedgerLine(tx, deposit, recorded, "unless written"));
  if (!written) throw refusal;
  return recorded;
}

/** Writes a deposit's ledger line; "unless written" leaves one already there for its leaf (false). */
async function writeLedgerLine(
  tx: Queryable,
  deposit: DepositToRecord,
  recorded: RecordedDeposit,
  mode: "new" | "unless written" = "new",
): Promise<boolean> {
  const written = await insertDepositLine(
    tx,
    {
      amountZat: deposit.amountZat,
      noteCommitment: deposit.noteCommitment,
      leafIndex: recorded.leafIndex,
      zcashTxId: deposit.zcashTxId,
      txHash: recorded.txHash,
      publicId: recorded.id,
      accountId: deposit.accountId ?? null,
    },
    mode,
  );
  if (!written) return false;
  await deposit.alsoIn?.(tx, recorded);
  return true;
}

/** The deposits of a window go in one batch of at most this many (recordDeposits' gas grows with each leaf). */
export const DEPOSIT_BATCH_MAX = 16;

/**
 * Sandbox deposits gathered for `waitMs` from the first, then recorded in one
 * batch (at once when DEPOSIT_BATCH_MAX are waiting). One batch is on the
 * chain at a time; what arrives meanwhile waits for the next, so a busy
 * sandbox makes larger batches, not more of them.
 */
export class DepositWindow {
  #waiting: { deposit: DepositToRecord; at: number; settle: (outcome: DepositOutcome) => void }[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly custodyCalls: CustodyCalls,
    private readonly waitMs: number,
  ) {}

  record(deposit: DepositToRecord): Promise<RecordedDeposit> {
    return new Promise<DepositOutcome>((settle) => {
      this.#waiting.push({ deposit, at: Date.now(), settle });
      this.#flushSoon();
    }).then((outcome) => {
      if ("error" in outcome) throw outcome.error;
      return outcome.recorded;
    });
  }

  /** Flushes when the oldest waiting deposit has waited waitMs, or at once with a full batch. */
  #flushSoon(): void {
    if (this.#flushing || this.#waiting.length === 0) return; // the batch on the chain calls again when done
    const full = this.#waiting.length >= DEPOSIT_BATCH_MAX;
    if (this.#timer && !full) return;
    clearTimeout(this.#timer);
    const delayMs = full ? 0 : Math.max(0, this.#waiting[0]!.at + this.waitMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flush().finally(() => {
        this.#flushing = undefined;
        this.#flushSoon();
      });
    }, delayMs);
  }

  async #flush(): Promise<void> {
    const batch = this.#waiting.splice(0, DEPOSIT_BATCH_MAX);
    const outcomes = await recordDepositBatch(
      this.db,
      this.custodyCalls,
      batch.map((b) => b.deposit),
    ).catch((error: unknown) => batch.map((): DepositOutcome => ({ error })));
    for (const [i, { settle }] of batch.entries()) settle(outcomes[i]!);
  }
}
