// The one sender of a relayer key's transactions, for mints and redemptions
// alike. Write-ahead: every signed transaction is recorded (by the caller's
// `record`) before it is broadcast, so a crash between the two leaves it on
// record and the next pass sends it again or learns from the chain what became
// of its nonce. Each relay decides what a mined transaction means for its job.
import { type Address, type Hex, keccak256, parseTransaction } from "viem";
import type { Chain } from "../../adapters/chain.ts";
import { RELAY_HEADROOM, gasLimit } from "../../adapters/gas.ts";

/** A transaction as the relays record it: the columns mints and redemption_requests share. */
export interface SentTransaction {
  tx_hash: Hex;
  raw_tx: Hex;
  nonce: number;
  submitted_at: Date;
}

/** What a relay's row holds of its transaction (nothing before the first send). */
export interface RecordedTransaction {
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
}

/** Writes a transaction onto the job's row; false if the row moved on meanwhile (then nothing is sent). */
export type RecordSent = (sent: SentTransaction) => Promise<boolean>;

export class TransactionSender {
  readonly address: Address;
  readonly #wallet: ReturnType<Chain["wallet"]>;
  #followed = false;

  constructor(
    private readonly chain: Chain,
    relayerKey: Hex,
    /** A transaction pending longer than this is replaced with higher fees. */
    private readonly stuckAfterMs: number,
  ) {
    this.#wallet = chain.wallet(relayerKey);
    this.address = this.#wallet.account.address;
  }

  /**
   * Whether a transaction was sent or followed since the last call: the worker
   * keeps its fast poll while one of its transactions waits to be confirmed.
   */
  takeFollowed(): boolean {
    const followed = this.#followed;
    this.#followed = false;
    return followed;
  }

  /** Signs a call at the key's next pending nonce (its limit: `gas` estimated plus `headroom`), records it, then broadcasts it. */
  async send(to: Address, data: Hex, gas: bigint, record: RecordSent, headroom = RELAY_HEADROOM): Promise<void> {
    this.#followed = true;
    const [nonce, fees] = await Promise.all([
      this.chain.client.getTransactionCount({ address: this.address, blockTag: "pending" }),
      this.chain.client.estimateFeesPerGas(),
    ]);
    const raw = await this.#wallet.signTransaction({
      to,
      data,
      // Not a proportion of the estimate: what a transaction mined first can add is fixed (adapters/gas.ts).
      gas: gasLimit(gas, headroom),
      nonce,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    if (await record(sent(raw, nonce))) await this.#broadcast(raw);
  }

  /** The receipt of a recorded transaction, once it is mined. */
  receipt(hash: string) {
    this.#followed = true;
    return this.chain.client.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined);
  }

  /**
   * Moves on a recorded transaction that is not mined: one the node no longer
   * knows is sent again, and one pending longer than stuckAfterMs is replaced
   * (recorded by `record` first). Answers "nonce taken" when its nonce went to
   * another transaction — another sender's ("nonce too low", or one that was
   * pooled first with higher fees, "replacement transaction underpriced"), or
   * one this transaction replaced or was replaced by: the caller learns from
   * the chain which, and otherwise signs its call again at a fresh nonce.
   * `call`, when given, is what a replacement carries instead of the waiting
   * transaction's own call (a batch some of whose items went meanwhile).
   */
  async advance(
    tx: RecordedTransaction,
    record: RecordSent,
    call?: { data: Hex; gas: bigint },
  ): Promise<"waiting" | "nonce taken"> {
    this.#followed = true;
    if (!tx.tx_hash || !tx.raw_tx) return "waiting";
    const pending = await this.chain.client.getTransaction({ hash: tx.tx_hash as Hex }).catch(() => undefined);
    if (!pending) {
      const next = await this.chain.client.getTransactionCount({ address: this.address, blockTag: "latest" });
      if (tx.nonce !== null && next > tx.nonce) return "nonce taken";
      await this.#broadcast(tx.raw_tx as Hex);
    } else if (tx.submitted_at && Date.now() - new Date(tx.submitted_at).getTime() > this.stuckAfterMs) {
      await this.#replace(tx.raw_tx as Hex, record, call);
    }
    return "waiting";
  }

  /**
   * Replaces a waiting transaction at the same nonce with fees raised by a
   * quarter (nodes want at least +10% to replace it). Either of the two may
   * be mined: the relays reconcile their jobs from the chain.
   */
  async #replace(raw: Hex, record: RecordSent, call?: { data: Hex; gas: bigint }): Promise<void> {
    const previous = parseTransaction(raw);
    const current = await this.chain.client.estimateFeesPerGas();
    const bump = (old: bigint | undefined, now: bigint) => {
      const raised = ((old ?? 0n) * 125n + 99n) / 100n;
      return raised > now ? raised : now;
    };
    const replacement = await this.#wallet.signTransaction({
      to: previous.to!,
      data: call?.data ?? previous.data!,
      gas: call?.gas ?? previous.gas!,
      nonce: previous.nonce!,
      maxFeePerGas: bump(previous.maxFeePerGas, current.maxFeePerGas),
      maxPriorityFeePerGas: bump(previous.maxPriorityFeePerGas, current.maxPriorityFeePerGas),
    });
    // "replacement underpriced" or the old one mined meanwhile: the next pass decides.
    if (await record(sent(replacement, previous.nonce!))) await this.#broadcast(replacement);
  }

  async #broadcast(raw: Hex): Promise<void> {
    try {
      await this.chain.client.sendRawTransaction({ serializedTransaction: raw });
    } catch {
      // Already known, nonce used, or the node is down: advance() decides from the chain.
    }
  }
}

function sent(raw: Hex, nonce: number): SentTransaction {
  return { tx_hash: keccak256(raw), raw_tx: raw, nonce, submitted_at: new Date() };
}
