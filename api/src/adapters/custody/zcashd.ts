// Production custody through zcashd / Zallet JSON-RPC: deposits are found with
// z_listreceivedbyaddress (the memo carries the note commitment), redemptions
// paid with z_sendmany and followed with z_getoperationstatus (the relay's
// Payouts start one payout at a time, so two never compete for the same notes).
import { formatZec } from "@zsd/sdk/units";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import type { Database, Queryable } from "../db/index.ts";
import type { CustodyCalls } from "./custody-calls.ts";
import {
  type Custody,
  DEPOSIT_MEMO_PREFIX,
  PAYOUT_MEMO_PREFIX,
  PayoutNotSent,
  type PayoutOrder,
  PayoutRefused,
  type PayoutState,
  type RecordedDeposit,
  depositMemoHex,
  textMemoHex,
} from "./index.ts";
import { DepositWindow, recordDepositBatch } from "./deposits.ts";
import { hasDepositIn } from "./ledger.ts";
import { isRevert, unavailable } from "../errors.ts";

export class ZcashdError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "ZcashdError";
  }
}

export interface ReceivedNote {
  txid: string;
  amountZat: number;
  memo: string;
  confirmations: number;
  outindex?: number;
  change?: boolean;
}

interface Operation {
  id: string;
  status: "queued" | "executing" | "success" | "failed" | "cancelled";
  result?: { txid: string };
  error?: { code: number; message: string };
}

export class ZcashdUnreachable extends Error {
  override name = "ZcashdUnreachable";
}

/**
 * How zcashd words the failures of an operation that never built a
 * transaction. Any other failure (a commit or broadcast error) may have left a
 * signed transaction in the wallet, which rebroadcasts it: not a refusal.
 */
const FAILED_BEFORE_BUILDING =
  /insufficient|not enough|could not find any|privacy policy|invalid|too many|exceeds|dust|minconf/i;

/** zcashd's JSON-RPC (1.0 envelope, HTTP basic auth). */
export class ZcashdClient {
  #id = 0;
  constructor(
    private readonly url: string,
    private readonly auth: { user: string; password: string },
    private readonly timeoutMs = 10_000,
  ) {}

  /**
   * Throws ZcashdError when zcashd answered with an error (it did not do the
   * call), ZcashdUnreachable when the request never reached it, and a plain
   * Error for anything else (a proxy's 502 after forwarding, a dropped
   * answer): then nobody knows whether the call was carried out.
   */
  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers: {
          "content-type": "text/plain",
          authorization: `Basic ${Buffer.from(`${this.auth.user}:${this.auth.password}`).toString("base64")}`,
        },
        body: JSON.stringify({ jsonrpc: "1.0", id: ++this.#id, method, params }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code === "ECONNREFUSED")
        throw new ZcashdUnreachable(`zcashd at ${new URL(this.url).host} refused the connection`);
      throw error;
    }
    if (response.status === 401) throw new ZcashdError(-401, "zcashd refused the RPC credentials");
    const body = (await response.json().catch(() => ({}))) as {
      result?: T;
      error?: { code: number; message: string } | null;
    };
    if (body.error) throw new ZcashdError(body.error.code, body.error.message);
    if (!response.ok) throw new Error(`zcashd answered HTTP ${response.status}`);
    return body.result as T;
  }
}

/** The note commitment in a deposit memo (hex of the 512-byte memo), if any. */
export function parseDepositMemo(memoHex: string): bigint | undefined {
  const text = Buffer.from(memoHex, "hex").toString("utf8").replace(/\0+$/, "");
  const match = new RegExp(`^${DEPOSIT_MEMO_PREFIX}(0x[0-9a-fA-F]{64})$`).exec(text);
  return match ? BigInt(match[1]!) : undefined;
}

/** The sandbox's way in: deposits paid into the simulated Zcash ledger, then recorded like any other. */
export interface SandboxDeposits {
  /** Deposits recorded within this many ms of the first go in one batch (the chain shows their total only). */
  windowMs: number;
  /** Tells the depositing account's agents, in the ledger line's transaction. */
  onDeposit?: (tx: Queryable, accountId: string, deposit: RecordedDeposit) => Promise<unknown>;
  /** How long a payment may take to reach its confirmations before the deposit is refused as unavailable. */
  confirmTimeoutMs?: number;
}

export class ZcashdCustody implements Custody {
  readonly kind = "zcashd";
  /** Sandbox only (with a simulated node): pays a deposit into the ledger, then records it. */
  readonly simulateDeposit?: (noteCommitment: bigint, amountZat: bigint, accountId: string) => Promise<RecordedDeposit>;
  /** Txids a sandbox deposit of this process is recording itself: the scan leaves them to it. */
  readonly #recordingHere = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly custodyCalls: CustodyCalls,
    private readonly zcashd: ZcashdClient,
    private readonly options: {
      address: string;
      minConfirmations: number;
      /** zcashd's privacy policy for payouts; FullPrivacy refuses to reveal amounts across pools. */
      privacyPolicy?: string;
      sandbox?: SandboxDeposits;
    },
  ) {
    const sandbox = options.sandbox;
    if (sandbox) {
      const window = new DepositWindow(db, custodyCalls, sandbox.windowMs);
      this.simulateDeposit = (noteCommitment, amountZat, accountId) =>
        this.#simulateDeposit(window, sandbox, noteCommitment, amountZat, accountId);
    }
  }

  /**
   * As if a depositor paid `amountZat` to custody with this note commitment in the memo: the
   * simulated node's funding call (zsd_receive) makes the payment, and once custody's own view
   * shows it with its confirmations, it goes to the attestors and the chain as a scanned deposit does.
   */
  async #simulateDeposit(
    window: DepositWindow,
    sandbox: SandboxDeposits,
    noteCommitment: bigint,
    amountZat: bigint,
    accountId: string,
  ): Promise<RecordedDeposit> {
    const memo = depositMemoHex(noteCommitment);
    let displayTxId: string;
    try {
      displayTxId = await this.zcashd.call<string>("zsd_receive", [this.options.address, amountZat.toString(), memo]);
    } catch (error) {
      if (error instanceof ZcashdError || error instanceof ZcashdUnreachable) {
        throw unavailable("The sandbox's simulated Zcash node");
      }
      throw error;
    }
    const zcashTxId = zcashTxIdFromDisplay(displayTxId);
    this.#recordingHere.add(zcashTxId);
    try {
      const deadline = Date.now() + (sandbox.confirmTimeoutMs ?? 30_000);
      for (;;) {
        const notes = await this.zcashd.call<ReceivedNote[]>("z_listreceivedbyaddress", [
          this.options.address,
          this.options.minConfirmations,
        ]);
        if (notes.some((n) => n.txid === displayTxId && n.confirmations >= this.options.minConfirmations)) break;
        if (Date.now() > deadline) throw unavailable("Confirmation of the sandbox deposit");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const onDeposit = sandbox.onDeposit;
      return await window.record({
        noteCommitment,
        amountZat,
        zcashTxId,
        accountId,
        alsoIn: onDeposit && ((tx, deposit) => onDeposit(tx, accountId, deposit)),
      });
    } finally {
      this.#recordingHere.delete(zcashTxId);
    }
  }

  /**
   * Records every new deposit that carries a note commitment; returns those
   * recorded now. Those found in one scan go on the chain in one batch, so the
   * chain shows their total, not each amount.
   */
  async scanDeposits(): Promise<RecordedDeposit[]> {
    const notes = await this.zcashd.call<ReceivedNote[]>("z_listreceivedbyaddress", [
      this.options.address,
      this.options.minConfirmations,
    ]);
    const found: { noteCommitment: bigint; amountZat: bigint; zcashTxId: string }[] = [];
    for (const note of notes) {
      if (note.change || note.confirmations < this.options.minConfirmations) continue;
      const commitment = parseDepositMemo(note.memo);
      if (commitment === undefined) continue;
      // zcashd prints txids byte-reversed (display form); the chain and the ledger keep the hash's own order.
      const zcashTxId = zcashTxIdFromDisplay(note.txid);
      if (this.#recordingHere.has(zcashTxId)) continue;
      if (await hasDepositIn(this.db, zcashTxId, commitment)) continue;
      found.push({ noteCommitment: commitment, amountZat: BigInt(note.amountZat), zcashTxId });
    }
    if (found.length === 0) return [];
    const outcomes = await recordDepositBatch(this.db, this.custodyCalls, found);
    // Recorded before a crash, or the same note twice: found again, or skipped (the chain and the ledger have it).
    const failed = outcomes.find((o) => "error" in o && !isRevert(o.error, "DepositAlreadyRecorded"));
    if (failed && "error" in failed) throw failed.error;
    return outcomes.flatMap((o) => ("recorded" in o ? [o.recorded] : []));
  }

  async send(order: PayoutOrder): Promise<string> {
    const amount = formatZec(order.zat);
    let opid: unknown;
    try {
      opid = await this.zcashd.call<unknown>("z_sendmany", [
        this.options.address,
        [
          {
            address: order.address,
            amount: Number(amount),
            memo: textMemoHex(`${PAYOUT_MEMO_PREFIX}${order.redemptionId}`),
          },
        ],
        this.options.minConfirmations,
        null,
        this.options.privacyPolicy ?? "FullPrivacy",
      ]);
    } catch (error) {
      // zcashd answered with an error: the payment was not started.
      if (error instanceof ZcashdError) throw new PayoutRefused(`z_sendmany refused: ${error.message}`);
      if (error instanceof ZcashdUnreachable) throw new PayoutNotSent(error.message);
      throw error;
    }
    if (typeof opid !== "string" || !opid)
      throw new Error(`z_sendmany answered no operation id: ${JSON.stringify(opid)}`);
    return opid;
  }

  async operation(operationId: string): Promise<PayoutState> {
    const [op] = await this.zcashd.call<Operation[]>("z_getoperationstatus", [[operationId]]);
    if (!op) return { state: "unknown", reason: "zcashd no longer knows the operation (restarted?)" };
    if (op.status === "success" && op.result?.txid)
      return { state: "success", zcashTxId: zcashTxIdFromDisplay(op.result.txid) };
    const reason = `z_sendmany ${op.status}: ${op.error?.message ?? "no reason given"}`;
    if (op.status === "cancelled") return { state: "failed", reason };
    if (op.status === "failed") {
      return FAILED_BEFORE_BUILDING.test(op.error?.message ?? "")
        ? { state: "failed", reason }
        : { state: "unknown", reason: `${reason} (possibly after the transaction was built)` };
    }
    return { state: "pending" };
  }
}
