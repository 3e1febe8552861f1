// A simulated zcashd: the JSON-RPC calls ZSD makes (received-by-address with
// memos, send-many and its operations, balances, viewing keys, blocks) over
// one simulated shielded ledger (ledger.ts), so that the production zcashd
// adapter runs unchanged in the sandbox and in tests. Each RPC user is a
// wallet of its own, as each party (custody, every attestor) runs its own
// node: a wallet sees the notes of the addresses it created or whose viewing
// key it imported, and spends only those it created.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { Socket } from "node:net";
import { formatZec, parseZec } from "@zsd/sdk/units";
import type { ZcashNetwork } from "@zsd/sdk/zcash";
import { REFUSED_MESSAGE, SANDBOX_REFUSED_ADDRESS } from "../refused-address.ts";
import { DEFAULT_FEE_ZAT, InsufficientFunds, Ledger, MAX_MONEY_ZAT, type Note, normaliseMemo } from "./ledger.ts";

/** zcashd's (bitcoind's) RPC error codes. */
export const RPC = {
  MISC_ERROR: -1,
  TYPE_ERROR: -3,
  INVALID_ADDRESS_OR_KEY: -5,
  WALLET_INSUFFICIENT_FUNDS: -6,
  INVALID_PARAMETER: -8,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  PARSE_ERROR: -32700,
} as const;

/** The caps that keep one request from holding the process: a body, a batch, a payment's outputs, a listing. */
export const LIMITS = {
  bodyBytes: 1024 * 1024,
  batch: 100,
  outputs: 100,
  opids: 1000,
  generate: 1000,
  /** More notes than this for one address is refused loudly: a silently cut list would hide deposits. */
  notesPerResponse: 10_000,
  /** Operations a wallet keeps for z_getoperationstatus; the oldest go first. */
  operations: 1000,
  /** z_sendmany calls the handle's `sends` keeps; the oldest go first. */
  sends: 10_000,
};

const PRIVACY_POLICIES = new Set([
  "FullPrivacy",
  "LegacyCompat",
  "AllowRevealedAmounts",
  "AllowRevealedRecipients",
  "AllowRevealedSenders",
  "AllowFullyTransparent",
  "AllowLinkingAccountAddresses",
  "NoPrivacy",
]);

/** What a handler returns when it cut the connection instead of answering. */
const DROPPED = Symbol("dropped");

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Faults a test sets on the in-process handle; never reachable over RPC. */
export interface Knobs {
  /** The next z_sendmany is accepted, then its operation fails with this message (nothing is sent). */
  failNextSend?: string;
  /** The next z_sendmany is carried out, but its answer is lost (the connection drops). */
  dropNextSendAnswer?: boolean;
  /** The next z_sendmany is answered with this RPC error (-6) and nothing is sent. */
  refuseNextSend?: string;
  /** Every call is answered HTTP 503, as a node that is down behind a proxy. */
  unavailable: boolean;
  /** Operations stay "executing" while set. */
  holdOperations: boolean;
}

export interface WalletConfig {
  user: string;
  /** Random when not given (read it from the handle). */
  password?: string;
  /** May call zsd_receive, the sandbox's way for ZEC to arrive from outside. Other wallets do not have it. */
  funding?: boolean;
}

export interface SimulatorOptions {
  wallets: WalletConfig[];
  /** A block every this many ms, mining the mempool; 0: blocks come only from `generate`. */
  blockIntervalMs?: number;
  /** The fee z_sendmany charges when its fee parameter is null. */
  feeZat?: bigint;
  network?: ZcashNetwork;
  port?: number;
  host?: string;
}

/** A note only one wallet shows: what a lying (or compromised) node would report. */
export interface InjectedNote {
  address: string;
  amountZat: bigint;
  memo?: string;
  /** Confirmations it has now; it ages with the chain. Default 1. */
  confirmations?: number;
  txid?: string;
  outindex?: number;
}

/** A z_sendmany as it reached the node: what the caller asked for, and what became of it. */
export interface SendRecord {
  wallet: string;
  from: string;
  /** Each output as asked, its amount in ZEC. */
  amounts: { address: string; amount: number; memo?: string }[];
  minconf: number;
  fee: number | null;
  privacyPolicy?: string;
  opid: string;
  /** As zcashd prints txids; absent when the operation failed. */
  txid?: string;
}

interface Operation {
  id: string;
  creationTime: number;
  /** How often it was asked after: queued, then executing, then its outcome (a real one takes a while). */
  polls: number;
  params: unknown;
  txid?: string;
  error?: { code: number; message: string };
}

export interface WalletHandle {
  url: string;
  user: string;
  password: string;
  /** This wallet's own faults (one node down while the others answer); the simulator's knobs add to them. */
  knobs: Knobs;
  /** Addresses whose spending key it holds. */
  addresses(): string[];
  /** Addresses it sees through an imported viewing key. */
  watched(): string[];
  /** A new address of this wallet, as z_getnewaddress would give. */
  newAddress(): string;
  /** As after a restart of this node: the operations it knew are gone. */
  forgetOperations(): void;
}

export interface SimulatedZcashd {
  url: string;
  ledger: Ledger;
  /** Faults for every wallet. */
  knobs: Knobs;
  /** Every z_sendmany that reached any wallet, in order. */
  sends: SendRecord[];
  wallet(user: string): WalletHandle;
  /** Gives one wallet a note the ledger does not have: its node lies. */
  injectNote(user: string, note: InjectedNote): Note;
  /** Custody's ZEC leaving outside the system (a spending key used elsewhere): no wallet's operation, no record. */
  payOutside(fromAddress: string, toAddress: string, amountZat: bigint, memo?: string): string;
  /** Mines `count` blocks now. */
  generate(count?: number): string[];
  /**
   * While true the block timer mines nothing (`generate` still does): for a step that needs a
   * payment to stay in the mempool however slowly the machine runs.
   */
  blocksHeld: boolean;
  /** As after a restart of every node. */
  forgetOperations(): void;
  /** The address this node refuses every payment to, for the sandbox to name where its users look. */
  failingPayoutAddress: string;
  close(): Promise<void>;
}

class Wallet {
  readonly spending = new Set<string>();
  /** Address → the first height whose notes the wallet scanned for (a viewing key imported without a rescan sees only later ones). */
  readonly viewing = new Map<string, number>();
  readonly injected: Note[] = [];
  readonly operations = new Map<string, Operation>();
  readonly knobs: Knobs = { unavailable: false, holdOperations: false };
  readonly #auth: Buffer;

  constructor(
    readonly user: string,
    readonly password: string,
    readonly funding: boolean,
  ) {
    this.#auth = Buffer.from(`Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
  }

  authorizes(header: string | undefined): boolean {
    const given = Buffer.from(header ?? "");
    return given.length === this.#auth.length && timingSafeEqual(given, this.#auth);
  }

  sees(address: string): boolean {
    return this.spending.has(address) || this.viewing.has(address);
  }
}

const zecNumber = (zat: bigint) => Number(formatZec(zat));
/** zcashd prints some amounts (z_gettotalbalance) as strings with all eight decimals. */
const zecString = (zat: bigint) => {
  const [whole, fraction = ""] = formatZec(zat).split(".");
  return `${whole}.${fraction.padEnd(8, "0")}`;
};

/** A decimal in plain notation ("1e-8" → "0.00000001"), shifting digits rather than computing, so nothing rounds. */
function plainDecimal(text: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d{1,3}))?$/.exec(text);
  if (!match) return undefined;
  const [, sign, whole, fraction = "", exponentText = "0"] = match;
  const exponent = Number(exponentText);
  const digits = whole! + fraction;
  const point = whole!.length + exponent;
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A ZEC amount as zcashd reads one (AmountFromValue): a JSON number or a
 * numeric string, at most 8 decimals, within MAX_MONEY. A number is read
 * through its shortest decimal form, which is what JSON.stringify wrote, so
 * 1.23456789 is 123456789 zat, not the binary double's neighbour.
 */
export function zatFromAmount(value: unknown): bigint {
  if (typeof value !== "number" && typeof value !== "string")
    throw new RpcError(RPC.TYPE_ERROR, "Amount is not a number or string");
  const text = plainDecimal(typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value);
  if (text === undefined) throw new RpcError(RPC.TYPE_ERROR, "Invalid amount");
  let zat: bigint;
  try {
    zat = parseZec(text);
  } catch {
    throw new RpcError(RPC.TYPE_ERROR, "Invalid amount");
  }
  if (zat < 0n || zat > MAX_MONEY_ZAT) throw new RpcError(RPC.TYPE_ERROR, "Amount out of range");
  return zat;
}

const invalidParameter = (message: string) => new RpcError(RPC.INVALID_PARAMETER, message);

function minconfParam(value: unknown, fallback = 1): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new RpcError(RPC.TYPE_ERROR, "Expected type number for minconf");
  if (value < 0) throw invalidParameter("Minimum number of confirmations cannot be less than 0");
  return value;
}

function stringParam(value: unknown, name: string): string {
  if (typeof value !== "string") throw new RpcError(RPC.TYPE_ERROR, `Expected type string for ${name}`);
  return value;
}

/** A memo's text when it is one (ZIP 302: a first byte up to 0xF4, valid UTF-8), as zcashd's memoStr. */
function memoText(memoHex: string): string | undefined {
  const bytes = Buffer.from(memoHex, "hex");
  if (bytes[0]! > 0xf4) return undefined;
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, end));
  } catch {
    return undefined;
  }
}

export async function startSimulatedZcashd(options: SimulatorOptions): Promise<SimulatedZcashd> {
  if (options.wallets.length === 0) throw new Error("the simulated zcashd needs at least one wallet");
  const ledger = new Ledger({ network: options.network });
  const feeZat = options.feeZat ?? DEFAULT_FEE_ZAT;
  const wallets = new Map<string, Wallet>();
  for (const w of options.wallets) {
    if (wallets.has(w.user) || w.user.includes(":"))
      throw new Error(`wallet user ${JSON.stringify(w.user)} is taken or has a colon`);
    wallets.set(w.user, new Wallet(w.user, w.password ?? randomBytes(16).toString("hex"), w.funding ?? false));
  }
  const knobs: Knobs = { unavailable: false, holdOperations: false };
  const sends: SendRecord[] = [];

  /** A knob of the wallet, else of the simulator; one-shot knobs are used up. */
  function take<K extends "failNextSend" | "refuseNextSend" | "dropNextSendAnswer">(wallet: Wallet, name: K): Knobs[K] {
    for (const set of [wallet.knobs, knobs]) {
      const value = set[name];
      if (value) {
        set[name] = undefined;
        return value;
      }
    }
    return undefined;
  }

  /** The notes `wallet` shows for `address`: those it scanned for, and any it was made to believe in. */
  function notesSeen(wallet: Wallet, address: string): Note[] {
    const from = wallet.spending.has(address) ? 0 : (wallet.viewing.get(address) ?? Infinity);
    return [
      ...ledger.notesOf(address).filter((n) => n.height === undefined || n.height >= from),
      ...wallet.injected.filter((n) => n.address === address),
    ];
  }

  function ownedAddress(wallet: Wallet, value: unknown, spend: boolean): string {
    const address = stringParam(value, "address");
    // The address check costs curve arithmetic: custody asks after its own address many times a second.
    if (!wallet.sees(address) && !ledger.payable(address))
      throw new RpcError(RPC.INVALID_ADDRESS_OR_KEY, "Invalid zaddr.");
    if (spend ? !wallet.spending.has(address) : !wallet.sees(address))
      throw new RpcError(
        RPC.INVALID_ADDRESS_OR_KEY,
        spend
          ? "Invalid from address, no payment source found for address."
          : "From address does not belong to this node, zaddr spending key or viewing key not found.",
      );
    return address;
  }

  const balanceOf = (wallet: Wallet, address: string, minconf: number) =>
    notesSeen(wallet, address)
      .filter((n) => n.spentBy === undefined && ledger.confirmations(n) >= minconf)
      .reduce((sum, n) => sum + n.amountZat, 0n);

  function rememberOperation(wallet: Wallet, operation: Operation): void {
    wallet.operations.set(operation.id, operation);
    if (wallet.operations.size > LIMITS.operations) {
      const oldest = wallet.operations.keys().next().value;
      if (oldest !== undefined) wallet.operations.delete(oldest);
    }
  }

  function operationStatus(wallet: Wallet, operation: Operation) {
    const base = {
      id: operation.id,
      creation_time: operation.creationTime,
      method: "z_sendmany",
      params: operation.params,
    };
    if (knobs.holdOperations || wallet.knobs.holdOperations) return { ...base, status: "executing" };
    operation.polls++;
    if (operation.polls === 1) return { ...base, status: "queued" };
    if (operation.polls === 2) return { ...base, status: "executing" };
    return operation.error
      ? { ...base, status: "failed", error: operation.error }
      : { ...base, status: "success", result: { txid: operation.txid } };
  }

  function opidsParam(value: unknown): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
      throw new RpcError(RPC.TYPE_ERROR, "Expected type array of operation ids");
    if (value.length > LIMITS.opids) throw invalidParameter(`At most ${LIMITS.opids} operation ids`);
    return value as string[];
  }

  type Handler = (wallet: Wallet, params: unknown[], socket: Socket) => unknown;
  const methods = new Map<string, Handler>([
    ["getblockcount", () => ledger.tip],
    ["getbestblockhash", () => ledger.blocks.at(-1)!.hash],
    [
      "getblockchaininfo",
      () => ({
        chain: ledger.network === "mainnet" ? "main" : "test",
        blocks: ledger.tip,
        headers: ledger.tip,
        bestblockhash: ledger.blocks.at(-1)!.hash,
        verificationprogress: 1,
        initial_block_download_complete: true,
        simulated: true,
      }),
    ],
    [
      "getinfo",
      () => ({
        version: 6_000_050,
        protocolversion: 170_120,
        blocks: ledger.tip,
        testnet: ledger.network !== "mainnet",
        errors: "",
      }),
    ],
    [
      "generate",
      (_wallet, [count]) => {
        if (typeof count !== "number" || !Number.isInteger(count) || count < 0)
          throw new RpcError(RPC.TYPE_ERROR, "Expected type number for nblocks");
        if (count > LIMITS.generate) throw invalidParameter(`At most ${LIMITS.generate} blocks at a time`);
        return ledger.generate(count);
      },
    ],
    [
      "z_getnewaddress",
      (wallet, [type]) => {
        if (type !== undefined && type !== null && type !== "sapling")
          throw invalidParameter('Invalid address type; only "sapling" is supported');
        const address = ledger.newAddress();
        wallet.spending.add(address);
        return address;
      },
    ],
    [
      "z_listaddresses",
      (wallet, [includeWatchonly]) => [
        ...wallet.spending,
        ...(includeWatchonly === true ? [...wallet.viewing.keys()].filter((a) => !wallet.spending.has(a)) : []),
      ],
    ],
    [
      "z_listreceivedbyaddress",
      (wallet, [addressParam, minconfParamValue]) => {
        const address = ownedAddress(wallet, addressParam, false);
        const minconf = minconfParam(minconfParamValue);
        const notes = notesSeen(wallet, address).filter((n) => ledger.confirmations(n) >= minconf);
        if (notes.length > LIMITS.notesPerResponse)
          throw new RpcError(RPC.MISC_ERROR, `More than ${LIMITS.notesPerResponse} notes for this address`);
        return notes.map((n) => {
          const mined = n.height === undefined ? undefined : ledger.blocks[n.height];
          const text = memoText(n.memo);
          return {
            pool: "sapling",
            txid: n.txid,
            amount: zecNumber(n.amountZat),
            amountZat: Number(n.amountZat),
            memo: n.memo,
            ...(text === undefined ? {} : { memoStr: text }),
            outindex: n.outindex,
            confirmations: ledger.confirmations(n),
            ...(mined
              ? {
                  blockheight: mined.height,
                  blockindex: Math.max(0, mined.txids.indexOf(n.txid)),
                  blocktime: mined.time,
                }
              : {}),
            change: n.change,
          };
        });
      },
    ],
    [
      "z_getbalance",
      (wallet, [addressParam, minconfParamValue, inZat]) => {
        const zat = balanceOf(wallet, ownedAddress(wallet, addressParam, false), minconfParam(minconfParamValue));
        return inZat === true ? Number(zat) : zecNumber(zat);
      },
    ],
    [
      "z_gettotalbalance",
      (wallet, [minconfParamValue, includeWatchonly]) => {
        const minconf = minconfParam(minconfParamValue);
        const addresses =
          includeWatchonly === true ? [...wallet.spending, ...wallet.viewing.keys()] : [...wallet.spending];
        const zat = [...new Set(addresses)].reduce((sum, a) => sum + balanceOf(wallet, a, minconf), 0n);
        return { transparent: zecString(0n), private: zecString(zat), total: zecString(zat) };
      },
    ],
    [
      "z_exportviewingkey",
      (wallet, [addressParam]) => {
        const address = stringParam(addressParam, "zaddr");
        if (!ledger.payable(address)) throw new RpcError(RPC.INVALID_ADDRESS_OR_KEY, "Invalid zaddr");
        if (!wallet.spending.has(address))
          throw new RpcError(
            RPC.INVALID_ADDRESS_OR_KEY,
            "Wallet does not hold private key or viewing key for this zaddr",
          );
        return ledger.viewingKeyOf(address);
      },
    ],
    [
      "z_importviewingkey",
      (wallet, [keyParam, rescanParam, startHeightParam]) => {
        const key = stringParam(keyParam, "vkey");
        const rescan = rescanParam ?? "whenkeyisnew";
        if (rescan !== "yes" && rescan !== "no" && rescan !== "whenkeyisnew" && typeof rescan !== "boolean")
          throw invalidParameter('rescan must be "yes", "no" or "whenkeyisnew"');
        const startHeight = startHeightParam ?? 0;
        if (
          typeof startHeight !== "number" ||
          !Number.isInteger(startHeight) ||
          startHeight < 0 ||
          startHeight > ledger.tip
        )
          throw invalidParameter("Block height out of range");
        const address = ledger.addressOfViewingKey(key);
        if (address === undefined) throw new RpcError(RPC.INVALID_ADDRESS_OR_KEY, "Invalid viewing key");
        if (!wallet.spending.has(address)) {
          const known = wallet.viewing.get(address);
          const scans = rescan === "yes" || rescan === true || (rescan === "whenkeyisnew" && known === undefined);
          const from = scans ? startHeight : ledger.tip + 1;
          wallet.viewing.set(address, Math.min(known ?? Infinity, from));
        }
        return { type: "sapling", address };
      },
    ],
    [
      "z_sendmany",
      (wallet, params, socket) => {
        const [fromParam, amountsParam, minconfParamValue, feeParam, policyParam] = params;
        const from = ownedAddress(wallet, fromParam, true);
        if (!Array.isArray(amountsParam)) throw new RpcError(RPC.TYPE_ERROR, "Expected type array for amounts");
        if (amountsParam.length === 0) throw invalidParameter("Invalid parameter, amounts array is empty.");
        if (amountsParam.length > LIMITS.outputs)
          throw invalidParameter(`Invalid parameter, too many outputs (at most ${LIMITS.outputs}).`);
        const seen = new Set<string>();
        const outputs = amountsParam.map((entry: unknown) => {
          if (typeof entry !== "object" || entry === null || Array.isArray(entry))
            throw invalidParameter("Invalid parameter, expected object");
          const { address, amount, memo } = entry as Record<string, unknown>;
          if (typeof address !== "string") throw invalidParameter("Invalid parameter, missing address");
          if (!ledger.payable(address))
            throw new RpcError(RPC.INVALID_ADDRESS_OR_KEY, `Invalid parameter, unknown address format: ${address}`);
          if (seen.has(address)) throw invalidParameter(`Invalid parameter, duplicated address: ${address}`);
          seen.add(address);
          if (memo !== undefined && typeof memo !== "string")
            throw invalidParameter("Invalid parameter, expected memo data in hexadecimal format.");
          if (typeof memo === "string" && !/^([0-9a-fA-F]{2})*$/.test(memo))
            throw invalidParameter("Invalid parameter, expected memo data in hexadecimal format.");
          if (typeof memo === "string" && memo.length > 1024)
            throw invalidParameter("Invalid parameter, memo is longer than the maximum allowed 512 bytes.");
          const amountZat = zatFromAmount(amount);
          if (amountZat === 0n) throw invalidParameter("Invalid parameter, amount must be positive");
          return { address, amountZat, memo: memo as string | undefined };
        });
        // As the caller wrote them, bounded: the operation and the handle's record keep them.
        const asked = outputs.map((o) => ({
          address: o.address,
          amount: Number(formatZec(o.amountZat)),
          ...(o.memo === undefined ? {} : { memo: o.memo }),
        }));
        const minconf = minconfParam(minconfParamValue, 10);
        const fee = feeParam === undefined || feeParam === null ? feeZat : zatFromAmount(feeParam);
        if (
          policyParam !== undefined &&
          policyParam !== null &&
          (typeof policyParam !== "string" || !PRIVACY_POLICIES.has(policyParam))
        )
          throw invalidParameter(`Unknown privacy policy name '${String(policyParam)}'`);

        const refusal = take(wallet, "refuseNextSend");
        if (refusal) throw new RpcError(RPC.WALLET_INSUFFICIENT_FUNDS, refusal);
        // The sandbox's failing-payout address: refused every time, as a wallet refuses a payment it will not make.
        if (outputs.some((o) => o.address === SANDBOX_REFUSED_ADDRESS))
          throw new RpcError(RPC.INVALID_PARAMETER, REFUSED_MESSAGE);
        const operation: Operation = {
          id: `opid-${randomUUID()}`,
          creationTime: Math.floor(Date.now() / 1000),
          polls: 0,
          params: { fromaddress: from, amounts: asked, minconf, fee: Number(formatZec(fee)) },
        };
        const failure = take(wallet, "failNextSend");
        if (failure) operation.error = { code: RPC.WALLET_INSUFFICIENT_FUNDS, message: failure };
        else {
          // Built and sent at once: the funds are gone from the moment zcashd accepts, as with a real node, whose
          // operation only reports later.
          try {
            operation.txid = ledger.transfer(from, outputs, { minconf, feeZat: fee });
          } catch (error) {
            if (!(error instanceof InsufficientFunds)) throw error;
            operation.error = { code: RPC.WALLET_INSUFFICIENT_FUNDS, message: error.message };
          }
        }
        rememberOperation(wallet, operation);
        sends.push({
          wallet: wallet.user,
          from,
          amounts: asked,
          minconf,
          fee: feeParam === undefined || feeParam === null ? null : Number(formatZec(fee)),
          privacyPolicy: typeof policyParam === "string" ? policyParam : undefined,
          opid: operation.id,
          txid: operation.txid,
        });
        if (sends.length > LIMITS.sends) sends.splice(0, sends.length - LIMITS.sends);
        if (take(wallet, "dropNextSendAnswer")) {
          socket.destroy();
          return DROPPED;
        }
        return operation.id;
      },
    ],
    [
      "z_getoperationstatus",
      (wallet, [ids]) => {
        const wanted = opidsParam(ids) ?? [...wallet.operations.keys()];
        return wanted.flatMap((id) => {
          const operation = wallet.operations.get(id);
          return operation ? [operationStatus(wallet, operation)] : [];
        });
      },
    ],
    [
      "z_getoperationresult",
      (wallet, [ids]) => {
        const wanted = opidsParam(ids) ?? [...wallet.operations.keys()];
        return wanted.flatMap((id) => {
          const operation = wallet.operations.get(id);
          if (!operation) return [];
          const status = operationStatus(wallet, operation);
          if (status.status !== "success" && status.status !== "failed") return [];
          wallet.operations.delete(id);
          return [status];
        });
      },
    ],
    [
      "zsd_receive",
      (wallet, [addressParam, amountZatParam, memoParam]) => {
        if (!wallet.funding) throw new RpcError(RPC.METHOD_NOT_FOUND, "Method not found");
        const address = stringParam(addressParam, "address");
        if (!ledger.payable(address))
          throw new RpcError(RPC.INVALID_ADDRESS_OR_KEY, `Invalid parameter, unknown address format: ${address}`);
        const amountZat =
          typeof amountZatParam === "number" && Number.isSafeInteger(amountZatParam)
            ? BigInt(amountZatParam)
            : typeof amountZatParam === "string" && /^\d{1,16}$/.test(amountZatParam)
              ? BigInt(amountZatParam)
              : undefined;
        if (amountZat === undefined || amountZat <= 0n || amountZat > MAX_MONEY_ZAT)
          throw new RpcError(RPC.TYPE_ERROR, "Amount out of range");
        const memo =
          memoParam === undefined || memoParam === null ? undefined : normaliseMemo(stringParam(memoParam, "memo"));
        if (memo === undefined && memoParam !== undefined && memoParam !== null)
          throw invalidParameter("Invalid parameter, expected memo data in hexadecimal format.");
        return ledger.receive(address, amountZat, memo);
      },
    ],
  ]);

  /** One JSON-RPC request's reply object; DROPPED when the connection was cut instead. */
  function answer(
    wallet: Wallet,
    request: unknown,
    socket: Socket,
  ): { result: unknown; error: unknown; id: unknown } | typeof DROPPED {
    const isObject = typeof request === "object" && request !== null && !Array.isArray(request);
    const id = isObject && "id" in request ? (request as { id: unknown }).id : null;
    const fail = (code: number, message: string) => ({ result: null, error: { code, message }, id });
    if (!isObject) return fail(RPC.INVALID_REQUEST, "Invalid Request object");
    const { method, params: given } = request as { method?: unknown; params?: unknown };
    const params = given ?? [];
    if (typeof method !== "string") return fail(RPC.INVALID_REQUEST, "Method must be a string");
    if (!Array.isArray(params)) return fail(RPC.INVALID_REQUEST, "Params must be an array");
    const handler = methods.get(method);
    if (!handler) return fail(RPC.METHOD_NOT_FOUND, "Method not found");
    try {
      const result = handler(wallet, params, socket);
      if (result === DROPPED) return DROPPED;
      return { result: result ?? null, error: null, id };
    } catch (error) {
      if (error instanceof RpcError) return fail(error.code, error.message);
      return fail(RPC.MISC_ERROR, error instanceof Error ? error.message : String(error));
    }
  }

  /** bitcoind's mapping: a bad request 400, an unknown method 404, any other error 500. */
  const httpStatus = (error: unknown) => {
    const code = (error as { code?: number } | null)?.code;
    return code === undefined ? 200 : code === RPC.INVALID_REQUEST ? 400 : code === RPC.METHOD_NOT_FOUND ? 404 : 500;
  };

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const send = (status: number, payload?: unknown) => {
      if (res.destroyed) return;
      if (payload === undefined) res.writeHead(status).end();
      else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload) + "\n");
    };
    const user = [...wallets.values()].find((w) => w.authorizes(req.headers.authorization));
    if (knobs.unavailable || user?.knobs.unavailable) return send(503);
    if (!user) return send(401);
    if (req.method !== "POST") return send(405);
    let request: unknown;
    try {
      request = JSON.parse(body.toString("utf8"));
    } catch {
      return send(500, { result: null, error: { code: RPC.PARSE_ERROR, message: "Parse error" }, id: null });
    }
    if (Array.isArray(request)) {
      if (request.length > LIMITS.batch)
        return send(400, {
          result: null,
          error: { code: RPC.INVALID_REQUEST, message: `At most ${LIMITS.batch} calls in a batch` },
          id: null,
        });
      const replies = [];
      for (const item of request) {
        const reply = answer(user, item, req.socket);
        if (reply === DROPPED) return;
        replies.push(reply);
      }
      return send(200, replies);
    }
    const reply = answer(user, request, req.socket);
    if (reply === DROPPED) return;
    send(httpStatus(reply.error), reply);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > LIMITS.bodyBytes) {
        if (!tooLarge) {
          tooLarge = true;
          res.writeHead(413, { connection: "close" }).end();
          req.destroy();
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", () => req.destroy());
    req.on("end", () => {
      if (tooLarge) return;
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch {
        if (!res.headersSent) res.writeHead(500).end();
      }
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as { address: string; port: number };
  const url = `http://${address.address}:${address.port}`;

  let blocksHeld = false;
  const blocks =
    options.blockIntervalMs && options.blockIntervalMs > 0
      ? setInterval(() => {
          if (!blocksHeld) ledger.generate(1);
        }, options.blockIntervalMs)
      : undefined;
  blocks?.unref();

  const walletOf = (user: string) => {
    const wallet = wallets.get(user);
    if (!wallet) throw new Error(`no wallet ${JSON.stringify(user)} in this simulated zcashd`);
    return wallet;
  };

  return {
    url,
    ledger,
    knobs,
    sends,
    wallet(user) {
      const wallet = walletOf(user);
      return {
        url,
        user: wallet.user,
        password: wallet.password,
        knobs: wallet.knobs,
        addresses: () => [...wallet.spending],
        watched: () => [...wallet.viewing.keys()],
        newAddress: () => {
          const created = ledger.newAddress();
          wallet.spending.add(created);
          return created;
        },
        forgetOperations: () => wallet.operations.clear(),
      };
    },
    injectNote(user, note) {
      const wallet = walletOf(user);
      const memo = normaliseMemo(note.memo);
      if (memo === undefined) throw new RangeError("not a memo");
      const confirmations = note.confirmations ?? 1;
      const injected: Note = {
        txid: note.txid ?? randomBytes(32).toString("hex"),
        outindex: note.outindex ?? 0,
        address: note.address,
        amountZat: note.amountZat,
        memo,
        height: confirmations > 0 ? Math.max(0, ledger.tip - confirmations + 1) : undefined,
        change: false,
      };
      wallet.injected.push(injected);
      return injected;
    },
    payOutside(fromAddress, toAddress, amountZat, memo) {
      return ledger.transfer(fromAddress, [{ address: toAddress, amountZat, memo }], { feeZat });
    },
    generate: (count = 1) => ledger.generate(count),
    get blocksHeld() {
      return blocksHeld;
    },
    set blocksHeld(held: boolean) {
      blocksHeld = held;
    },
    forgetOperations() {
      for (const wallet of wallets.values()) wallet.operations.clear();
    },
    failingPayoutAddress: SANDBOX_REFUSED_ADDRESS,
    async close() {
      if (blocks) clearInterval(blocks);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
