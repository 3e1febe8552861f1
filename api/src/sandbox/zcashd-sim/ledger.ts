// The simulated shielded ledger under the simulated zcashd: blocks, notes
// (one per transaction output) and the keys that let a wallet spend or see
// them. It knows nothing of JSON-RPC or wallets' credentials (server.ts); it
// holds the one truth that every wallet's view is cut from, so that a party
// reading another party's address through a viewing key reads the same notes.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { bech32 } from "bech32";
import { formatZec } from "@zsd/sdk/units";
import { type ZcashNetwork, encodeSaplingAddress, parseShieldedAddress } from "@zsd/sdk/zcash";

/** ZIP 302: a memo is 512 bytes; 0xF6 then zeros means "no memo". */
export const MEMO_BYTES = 512;
export const NO_MEMO_HEX = "f6" + "00".repeat(MEMO_BYTES - 1);
/** 21 million ZEC: zcashd refuses amounts beyond it (MAX_MONEY). */
export const MAX_MONEY_ZAT = 21_000_000n * 100_000_000n;
/** ZIP 317's marginal fee for the one or two logical actions a plain payment has. */
export const DEFAULT_FEE_ZAT = 10_000n;

export interface Note {
  /** As zcashd prints txids (display form, byte-reversed hex). */
  txid: string;
  outindex: number;
  address: string;
  amountZat: bigint;
  /** 1024 hex digits. */
  memo: string;
  /** The block the note was mined in; undefined while its transaction waits in the mempool. */
  height?: number;
  /** The sender's own change output. */
  change: boolean;
  /** The txid of the transaction that spent it (mined or in the mempool). */
  spentBy?: string;
}

export interface Block {
  height: number;
  hash: string;
  /** Unix seconds. */
  time: number;
  txids: string[];
}

export interface Output {
  address: string;
  amountZat: bigint;
  memo?: string;
}

export class InsufficientFunds extends Error {
  override name = "InsufficientFunds";
  constructor(
    readonly haveZat: bigint,
    readonly needZat: bigint,
    readonly feeZat: bigint,
  ) {
    // zcashd's wording, which callers (the custody adapter) recognise as "nothing was built".
    super(
      `Insufficient funds: have ${formatZec(haveZat)}, need ${formatZec(needZat)} (including fee ${formatZec(feeZat)})`,
    );
  }
}

/** A memo as zcashd stores it: the hex given, zero-padded to 512 bytes; undefined when it is not one. */
export function normaliseMemo(hex: string | undefined): string | undefined {
  if (hex === undefined || hex === "") return NO_MEMO_HEX;
  if (!/^([0-9a-fA-F]{2})+$/.test(hex) || hex.length > MEMO_BYTES * 2) return undefined;
  return hex.toLowerCase().padEnd(MEMO_BYTES * 2, "0");
}

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

interface KeyMaterial {
  /** Stands in for the spending key: whoever created the address holds it. */
  secret: Buffer;
  viewingKey: string;
}

export class Ledger {
  readonly network: ZcashNetwork;
  readonly blocks: Block[] = [];
  readonly notes: Note[] = [];
  /** Transactions not yet in a block, in arrival order. */
  readonly mempool: string[] = [];
  readonly #keys = new Map<string, KeyMaterial>();
  readonly #byViewingKey = new Map<string, string>();
  readonly #byTxid = new Map<string, Note[]>();

  constructor(options: { network?: ZcashNetwork } = {}) {
    this.network = options.network ?? "testnet";
    this.#mine([]);
  }

  get tip(): number {
    return this.blocks.length - 1;
  }

  /** tip − height + 1 once mined, 0 while in the mempool. */
  confirmations(note: Pick<Note, "height">): number {
    return note.height === undefined ? 0 : this.tip - note.height + 1;
  }

  /**
   * A new Sapling address, valid to every wallet (its diversifier and pk_d are
   * points a sender can build an output for: the API and wallets check that).
   * Random bytes pass about one time in thirty, so this tries until one does.
   */
  newAddress(): string {
    for (;;) {
      const address = encodeSaplingAddress(randomBytes(43), this.network);
      try {
        parseShieldedAddress(address, this.network);
      } catch {
        continue;
      }
      const secret = randomBytes(32);
      const prefix = this.network === "mainnet" ? "zxviews" : "zxviewtestsapling";
      // Derived from the secret, not the address: knowing an address must not give its viewing key.
      const body = Buffer.concat([createHmac("sha512", secret).update("viewing key").digest(), sha256(address)]);
      const viewingKey = bech32.encode(prefix, bech32.toWords(body), 1000);
      this.#keys.set(address, { secret, viewingKey });
      this.#byViewingKey.set(viewingKey, address);
      return address;
    }
  }

  /** Whether the ledger made this address (and so some wallet may hold its keys). */
  knows(address: string): boolean {
    return this.#keys.has(address);
  }

  viewingKeyOf(address: string): string | undefined {
    return this.#keys.get(address)?.viewingKey;
  }

  addressOfViewingKey(viewingKey: string): string | undefined {
    return this.#byViewingKey.get(viewingKey);
  }

  /** Whether anyone on this network could pay `address`. */
  payable(address: string): boolean {
    try {
      return parseShieldedAddress(address, this.network).address === address;
    } catch {
      return false;
    }
  }

  notesOf(address: string): Note[] {
    return this.notes.filter((n) => n.address === address);
  }

  transaction(txid: string): Note[] | undefined {
    return this.#byTxid.get(txid);
  }

  /** Unspent notes of `address` with at least `minconf` confirmations, oldest first. */
  unspent(address: string, minconf = 1): Note[] {
    return this.notesOf(address).filter((n) => n.spentBy === undefined && this.confirmations(n) >= minconf);
  }

  balance(address: string, minconf = 1): bigint {
    return this.unspent(address, minconf).reduce((sum, n) => sum + n.amountZat, 0n);
  }

  /** ZEC arriving from outside the system (a transparent or another wallet's payment): mined in the next block. */
  receive(address: string, amountZat: bigint, memo?: string): string {
    return this.#submit([], [{ address, amountZat, memo }], false);
  }

  /**
   * Spends `from`'s notes that have `minconf` confirmations, oldest first, for
   * `outputs` and the fee; the rest returns to `from` as a change note. The
   * transaction waits in the mempool until the next block. Throws
   * InsufficientFunds, spending nothing, when those notes fall short.
   */
  transfer(from: string, outputs: Output[], options: { minconf?: number; feeZat?: bigint } = {}): string {
    const feeZat = options.feeZat ?? DEFAULT_FEE_ZAT;
    const need = outputs.reduce((sum, o) => sum + o.amountZat, 0n) + feeZat;
    const available = this.unspent(from, options.minconf ?? 1);
    const inputs: Note[] = [];
    let have = 0n;
    for (const note of available) {
      if (have >= need) break;
      inputs.push(note);
      have += note.amountZat;
    }
    if (have < need) throw new InsufficientFunds(have, need, feeZat);
    const change = have - need;
    return this.#submit(
      inputs,
      change > 0n ? [...outputs, { address: from, amountZat: change }] : outputs,
      change > 0n,
    );
  }

  /** Mines the mempool into `count` new blocks (the first takes all of it); returns their hashes. */
  generate(count = 1): string[] {
    const hashes: string[] = [];
    for (let i = 0; i < count; i++) hashes.push(this.#mine(this.mempool.splice(0)).hash);
    return hashes;
  }

  #submit(inputs: Note[], outputs: Output[], lastIsChange: boolean): string {
    for (const output of outputs) {
      if (!this.knows(output.address) && !this.payable(output.address))
        throw new RangeError(`not a ${this.network} shielded address: ${output.address}`);
      if (output.amountZat <= 0n || output.amountZat > MAX_MONEY_ZAT) throw new RangeError("amount out of range");
      if (normaliseMemo(output.memo) === undefined) throw new RangeError("not a memo");
    }
    const txid = randomBytes(32).toString("hex");
    const created = outputs.map((o, i): Note => ({
      txid,
      outindex: i,
      address: o.address,
      amountZat: o.amountZat,
      memo: normaliseMemo(o.memo)!,
      change: lastIsChange && i === outputs.length - 1,
    }));
    for (const input of inputs) input.spentBy = txid;
    this.notes.push(...created);
    this.#byTxid.set(txid, created);
    this.mempool.push(txid);
    return txid;
  }

  #mine(txids: string[]): Block {
    const height = this.blocks.length;
    const previous = this.blocks.at(-1)?.hash ?? "00".repeat(32);
    const block: Block = {
      height,
      hash: sha256(previous, String(height), ...txids)
        .reverse()
        .toString("hex"),
      time: Math.floor(Date.now() / 1000),
      txids,
    };
    for (const txid of txids) for (const note of this.#byTxid.get(txid) ?? []) note.height = height;
    this.blocks.push(block);
    return block;
  }
}
