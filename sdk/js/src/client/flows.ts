// The whole flows, with no proof in the caller's hands. A mint fetches every
// deposit leaf (asking for one deposit's path would tell the API which is
// yours), rebuilds the tree and checks it against the chain's root, picks a
// collateral floor that does not single out the deposit, proves on this
// machine, submits, mints and waits. A redemption is signed by the caller's
// wallet and followed until it is paid.
import { type Address, type Hex, parseSignature, parseUnits } from "viem";
import {
  type AnyBinding,
  type Note,
  DepositTree,
  changeNote,
  depositLeaf,
  encodeNote,
  noteCommitment,
  nullifierHash,
  positionOwner,
  proveCollateral,
  publicSignalsToArray,
} from "../notes/index.ts";
import { redeemTypedData } from "../redeem.ts";
import { formatZec, formatZsd, parseZec, parseZsd, usdValueOfZat } from "../units/index.ts";
import { type AnonymityWarning, DEFAULT_MIN_ANONYMITY, anonymityWarning } from "./anonymity.ts";
import { FlowError, ZsdError } from "./errors.ts";
import { type HttpClient, sleep } from "./http.ts";
import type { LedgerResource, MintsResource, ProofsResource, RedemptionsResource, RelayResource } from "./resources.ts";
import { Sealer, checkAddress } from "./sealing.ts";
import type { Body, Mint, Redemption, Relay } from "./types.ts";

/**
 * A proof's steps on this machine: the tree rebuilt, then proving. When the proof
 * spends less than the note holds, "change" comes first: the rest (ZEC) goes to
 * the note's change note once the proof is used (`note`, encoded: a secret to
 * keep, as the note is), a note that is no deposit, so spending it needs its
 * amount (`noteAmount`, the CLI's --note-amount).
 */
export type ProveStep =
  | { step: "tree"; leaves: number }
  /**
   * The note's leaf (a change note's, known by value) is queued for the tree and not in it
   * yet: no path, nothing to prove until an insertion takes it. `sequence` is its
   * place in the registry's queue, `queuedFor` how long it has waited (ms: since its block's
   * time, and at least since this flow first saw it queued).
   */
  | { step: "pending"; sequence: number; queuedFor: number }
  | { step: "change"; amount: string; note: string }
  | { step: "proving"; collateralFloor: string };

/** The hold compliance keeps on a mint, a redemption or a position action (null when none does). */
export type Hold = NonNullable<Mint["hold"]>;

export type MintStep =
  | ProveStep
  | { step: "submitted"; proofId: string }
  | { step: "confirming"; mintId: string; status: string; hold: Hold | null };

/** What a burned redemption's payout waits for: the burn's confirmations, custody's payment, the settlement. */
export type PayoutProgress = NonNullable<Redemption["payout"]>;

export type RedeemStep =
  | { step: "signing" }
  | { step: "following"; id: string; status: string; hold: Hold | null; payout: PayoutProgress | null };

/** A burned redemption's wait in words: "burned" alone reads as stuck for the quarter minute a payout takes. */
export function describePayout(payout: PayoutProgress): string {
  if (payout.stage === "confirming")
    return payout.confirmations === null
      ? `waiting for ${payout.confirmationsRequired} confirmations before custody pays`
      : `${payout.confirmations} of ${payout.confirmationsRequired} confirmations before custody pays`;
  if (payout.stage === "paying") return "custody is paying the ZEC";
  return "paid on Zcash, being marked paid on-chain";
}

/** A hold in words: a held mint otherwise looks merely queued, as if the relay were stuck. */
export function describeHold(hold: Hold): string {
  return hold.state === "held"
    ? `held for review by ${hold.by ?? "compliance"} (alert ${hold.alertId})`
    : "held until a screener gives a verdict (screening is required)";
}

export interface MintParams {
  note: Note;
  /** ZSD to mint, e.g. "100". */
  amount: string;
  recipient: Address;
  /** The collateral floor to prove, in ZEC; by default the smallest round figure that covers the mint. */
  floor?: string;
  /**
   * The note's ZEC, when the API does not tell it: a change note, a note a
   * position released, or a deposit this account did not make (another
   * account's, or one custody found in its Zcash wallet). The chain shows no
   * deposit's amount: the leaf is then found by value.
   */
  noteAmount?: string;
  onProgress?: (step: MintStep) => void;
  /** Told when the floor would leave the deposit among too few (the client's minAnonymity); the mint goes on. */
  onWarning?: (warning: AnonymityWarning) => void;
  /** How long to wait for `confirmed` (default 2 minutes). */
  timeoutMs?: number;
  /** How long to wait for a queued change leaf to enter the tree before `leaf_pending` (default 2 minutes). */
  pendingTimeoutMs?: number;
}

/** How long a queued leaf is waited for by default: the relay inserts the queue every block or so. */
export const DEFAULT_PENDING_TIMEOUT_MS = 120_000;
/** How often the queue is read while a leaf waits in it (the tree is read again once it left). */
const PENDING_POLL_MS = 1_000;

/** Signs EIP-712 typed data: a viem local account, or a wallet client with its account. */
export interface TypedDataSigner {
  address?: Address;
  account?: { address: Address };
  signTypedData(typedData: never): Promise<Hex>;
}

export interface RedeemParams {
  /** ZSD to redeem. */
  amount: string;
  /**
   * A shielded Zcash address of the environment's network, in clear: the SDK
   * checks it, seals it to custody's key (GET /v1/relay) and sends only the seal.
   */
  withdrawAddress: string;
  /**
   * The least ZEC the redemption may pay, after the fee (the permit's signed `minZatOut`): the relay
   * cannot send it after the price rose or once redemptions pay pro rata. Usually the quote less a
   * slippage allowance; absent, any amount is accepted.
   */
  minZec?: string;
  signer: TypedDataSigner;
  onProgress?: (step: RedeemStep) => void;
  /** How long to wait for `paid` (default 5 minutes). */
  timeoutMs?: number;
}

/** Two significant figures, rounded up: many deposits prove the same floor. */
export function roundFloorUp(zat: bigint): bigint {
  if (zat <= 100n) return zat;
  const scale = 10n ** BigInt(zat.toString().length - 2);
  return ((zat + scale - 1n) / scale) * scale;
}

/**
 * The smallest collateral floor (zatoshi) worth `amount` × ratio at `price`,
 * with 2% for the price moving before the mint is mined, rounded up.
 */
export function chooseFloor(amountWei: bigint, minting: NonNullable<Relay["minting"]>): bigint {
  const ratioBps = parseUnits(minting.minCollateralRatio, 4);
  const price = parseUnits(minting.zecUsdPrice, 8);
  const requiredUsd = (amountWei * ratioBps * 102n) / (10_000n * 100n);
  const perZat = usdValueOfZat(1n, price);
  return roundFloorUp((requiredUsd + perZat - 1n) / perZat);
}

export class Flows {
  #artifacts: Promise<{ wasm: Uint8Array; zkey: Uint8Array }> | undefined;
  /** Custody's seal key, read once per client: every flow that pays an address seals with it. */
  readonly sealer: Sealer;

  constructor(
    private readonly http: HttpClient,
    private readonly r: {
      relay: RelayResource;
      ledger: LedgerResource;
      proofs: ProofsResource;
      mints: MintsResource;
      redemptions: RedemptionsResource;
    },
    private readonly options: { minAnonymity: number } = { minAnonymity: DEFAULT_MIN_ANONYMITY },
  ) {
    this.sealer = new Sealer(r.relay);
  }

  async mint(params: MintParams): Promise<Mint> {
    const body = await this.prove(params);
    const proof = await this.r.proofs.submit(body);
    params.onProgress?.({ step: "submitted", proofId: proof.proofId });
    const queued = (await this.r.mints.create({
      amount: body.mintAmount,
      collateralType: "ZEC",
      proofId: proof.proofId,
      recipient: params.recipient,
    })) as { mintId: string };
    return this.waitForMint(queued.mintId, params);
  }

  /** The proof of a mint, made on this machine, as POST /v1/proofs/submit takes it. */
  async prove(params: Omit<MintParams, "timeoutMs">): Promise<Body<"submitProof">> {
    const amountWei = parseZsd(params.amount);
    const relay = await this.r.relay.get();
    const minter = relay.contracts?.StableMinter?.address;
    if (!relay.relayer || !relay.minting || relay.chainId === null || !minter) {
      throw new FlowError("This API does not relay mints (no deployment or relayer).", { code: "relay_unavailable" });
    }
    // The mint would revert on-chain: say so before the seconds of proving, not after. (An API older than the
    // field does not say; the mint then refuses such an amount.)
    const minimum = relay.minting.minimumAmount as string | undefined;
    if (minimum !== undefined && amountWei < parseZsd(minimum)) {
      throw new FlowError(
        `A mint must be at least ${minimum} ZSD (a position owes nothing or at least that); nothing was proven or sent.`,
        { code: "amount_below_minimum" },
      );
    }
    const floorZat = params.floor !== undefined ? parseZec(params.floor) : chooseFloor(amountWei, relay.minting);
    const fee = parseZsd(relay.fee.minimum);
    const binding = {
      chainId: BigInt(relay.chainId),
      minter: minter as Address,
      recipient: params.recipient,
      relayer: relay.relayer as Address,
      fee,
      mintAmount: amountWei,
      owner: positionOwner(params.note),
    };
    const proved = await this.proveNote(relay, {
      note: params.note,
      noteAmount: params.noteAmount,
      floorZat: (amountZat) => {
        if (floorZat > amountZat) {
          throw new FlowError(
            `The note holds ${formatZec(amountZat)} ZEC; ${params.amount} ZSD needs a floor of ${formatZec(floorZat)} ZEC.`,
            { code: "collateral_insufficient" },
          );
        }
        return floorZat;
      },
      // Once the tree holds the note's deposit: the count then has it (the indexer has seen it), and a
      // spent note is refused without a word about its floor.
      beforeProving: async () => {
        const warning = await anonymityWarning(this.r.relay, floorZat, this.options.minAnonymity);
        if (warning) params.onWarning?.(warning);
      },
      binding,
      onProgress: params.onProgress,
      pendingTimeoutMs: params.pendingTimeoutMs,
    });
    return {
      proof: proved.proof,
      publicSignals: proved.publicSignals,
      mintAmount: formatZsd(amountWei),
      recipient: params.recipient,
      relayer: relay.relayer,
      fee: formatZsd(fee),
      owner: binding.owner,
    };
  }

  /** Follows a mint until it is confirmed (a failed one throws FlowError with its failureCode). */
  waitForMint(mintId: string, params: Pick<MintParams, "onProgress" | "timeoutMs"> = {}): Promise<Mint> {
    return follow({
      what: `Mint ${mintId}`,
      read: () => this.r.mints.get(mintId),
      until: "confirmed",
      failedCode: "mint_failed",
      how: "mints.get()",
      timeoutMs: params.timeoutMs ?? 120_000,
      onStatus: (status, hold) => params.onProgress?.({ step: "confirming", mintId, status, hold }),
    });
  }

  /**
   * Proves a note's spend on this machine for any action (`binding`): finds
   * its leaf without naming it to the API, proves `floorZat(amountZat)` of it
   * (the rest becomes the change note) and answers the proof as the API takes it.
   */
  async proveNote(
    relay: Relay,
    params: {
      note: Note;
      noteAmount?: string;
      floorZat: (amountZat: bigint) => bigint;
      binding: AnyBinding;
      onProgress?: (step: ProveStep) => void;
      /** Awaited once the note is found unspent, before anything is proven. */
      beforeProving?: () => Promise<void>;
      /** How long a leaf queued for the tree is waited for (DEFAULT_PENDING_TIMEOUT_MS). */
      pendingTimeoutMs?: number;
    },
  ) {
    const commitment = noteCommitment(params.note);
    const known = params.noteAmount === undefined ? undefined : parseZec(params.noteAmount);
    const { tree, amountZat } = await this.#tree(
      commitment,
      known,
      params.onProgress,
      params.pendingTimeoutMs ?? DEFAULT_PENDING_TIMEOUT_MS,
    );
    const floorZat = params.floorZat(amountZat);
    const leaf = depositLeaf(amountZat, commitment);
    // Asked before proving, which takes seconds to minutes: a spent note is told at once. The hash is
    // what the proof would reveal, and names no leaf.
    const nullifier = await this.r.proofs.nullifier(nullifierHash(params.note, leaf).toString());
    if (nullifier.spent) {
      throw new FlowError(
        "This note is already spent (a mint, top-up or withdrawal used it); nothing was proven or sent.",
        { code: "nullifier_spent" },
      );
    }
    await params.beforeProving?.();
    if (amountZat > floorZat) {
      const note = encodeNote(changeNote(params.note));
      params.onProgress?.({ step: "change", amount: formatZec(amountZat - floorZat), note });
    }
    params.onProgress?.({ step: "proving", collateralFloor: formatZec(floorZat) });
    const proved = await proveCollateral(
      {
        note: params.note,
        amountZat,
        path: tree.path({ leaf }),
        collateralFloorZat: floorZat,
        binding: params.binding,
      },
      await this.#circuit(relay),
    );
    return {
      proof: proved.proof as Body<"submitProof">["proof"],
      publicSignals: publicSignalsToArray(proved.publicSignals),
      floorZat,
    };
  }

  /**
   * Every leaf, in order, into a tree whose root is checked page by page
   * against the chain's. A deposit recorded a moment ago may not be indexed
   * yet: the whole list is read again for a few seconds before giving up. A
   * change leaf (known by value) that the registry queued and did not insert
   * yet is waited for longer, reading only the queue until it leaves it.
   */
  async #tree(
    commitment: bigint,
    knownAmountZat: bigint | undefined,
    onProgress: ((step: ProveStep) => void) | undefined,
    pendingTimeoutMs: number,
  ) {
    const wanted = knownAmountZat === undefined ? undefined : depositLeaf(knownAmountZat, commitment);
    let pendingSince: number | undefined;
    for (let attempt = 1; ; attempt++) {
      const found = await this.#readTree(commitment, knownAmountZat, onProgress);
      if (found.amountZat !== undefined) return { tree: found.tree, amountZat: found.amountZat };
      // Every wallet reads the same whole queue: asking for it names no leaf.
      let queued = wanted === undefined ? undefined : await this.#queued(wanted);
      if (queued) {
        pendingSince ??= Date.now();
        while (queued) {
          onProgress?.({
            step: "pending",
            sequence: queued.sequence,
            // A chain whose clock runs ahead of this machine's (a test chain moved forward) would say 0:
            // at least as long as this flow has seen it waiting.
            queuedFor: Math.max(Date.now() - Date.parse(queued.queuedAt), Date.now() - pendingSince),
          });
          if (Date.now() - pendingSince >= pendingTimeoutMs) {
            throw new FlowError(
              `This note's leaf waits in the registry's queue (number ${queued.sequence}) and is not in the tree yet, ` +
                `after ${Math.round((Date.now() - pendingSince) / 1000)} s: it cannot be proven until an insertion ` +
                "takes it (the relay sends one; anyone may call insertPendingLeaves). Retry later.",
              { code: "leaf_pending" },
            );
          }
          await sleep(PENDING_POLL_MS);
          queued = await this.#queued(wanted!);
        }
        // Out of the queue: the indexer wrote its leaf in the same block, so the tree has it now.
        attempt = 0;
        continue;
      }
      if (attempt >= 20) {
        throw new FlowError(
          knownAmountZat === undefined
            ? "No deposit of this account carries this note's commitment (yet): deposit first, or retry once it is " +
                "recorded. The chain shows no deposit's amount: for a deposit another account or a Zcash wallet made, " +
                "give the amount it holds (noteAmount, the CLI's --note-amount)."
            : `No leaf holds this note with ${formatZec(knownAmountZat)} ZEC (yet): check the amount, or retry once it is recorded.`,
          { code: "deposit_not_found" },
        );
      }
      await sleep(500);
    }
  }

  /** `leaf` in the registry's queue of leaves waiting for the tree, if it is there. */
  async #queued(leaf: bigint) {
    const queue = await this.r.ledger.pendingLeaves();
    return queue.data.find((item) => BigInt(item.leaf) === leaf);
  }

  /** The tree, and the note's amount once its leaf is seen: by commitment (a deposit) or by value (`knownAmountZat`). */
  async #readTree(commitment: bigint, knownAmountZat: bigint | undefined, onProgress?: (step: ProveStep) => void) {
    const tree = new DepositTree();
    const wanted = knownAmountZat === undefined ? undefined : depositLeaf(knownAmountZat, commitment);
    let amountZat: bigint | undefined;
    for (let from: number | null = 0; from !== null;) {
      const page = await this.r.ledger.depositLeaves({ from, limit: 5000 });
      for (const item of page.data) {
        if (item.index !== tree.size) {
          throw new FlowError(`The API skipped leaf ${tree.size}.`, { code: "tree_mismatch" });
        }
        const leaf = BigInt(item.leaf);
        tree.insert(leaf);
        if (wanted !== undefined ? leaf === wanted : BigInt(item.noteCommitment) === commitment) {
          amountZat = wanted !== undefined ? knownAmountZat : BigInt(item.amountZat);
        }
      }
      if (page.root !== null && BigInt(page.root) !== tree.root) {
        throw new FlowError("The rebuilt deposit tree does not have the chain's root.", { code: "tree_mismatch" });
      }
      onProgress?.({ step: "tree", leaves: tree.size });
      from = page.next;
    }
    return { tree, amountZat };
  }

  /** The circuit's files from the API (the same for every proof: fetched once per client). */
  #circuit(relay: Relay) {
    const fetchBytes = (path: string) =>
      this.http.bytes(path).catch((error: unknown) => {
        const status = error instanceof ZsdError && error.status !== undefined ? `answered ${error.status}` : "failed";
        throw new FlowError(`${path} ${status}: ${(error as Error).message}`, { code: "circuit_unavailable" });
      });
    this.#artifacts ??= Promise.all([fetchBytes(relay.circuit.wasm.url), fetchBytes(relay.circuit.zkey.url)]).then(
      ([wasm, zkey]) => ({ wasm, zkey }),
      (error: unknown) => {
        this.#artifacts = undefined;
        throw error;
      },
    );
    return this.#artifacts;
  }

  async redeem(params: RedeemParams): Promise<Redemption> {
    params.onProgress?.({ step: "signing" });
    const created = await this.sealer.retryOnRotation(async (fresh) =>
      this.r.redemptions.create(await this.signRedemption(params, fresh)),
    );
    return this.waitForRedemption(created.id, params);
  }

  /**
   * The owner's signed request, the body of POST /v1/redeem: the address
   * checked and sealed for the owner, signed at the owner's next nonce, sent by
   * no one yet. `freshKey` reads custody's seal key again instead of the cached one.
   */
  async signRedemption(
    params: Pick<RedeemParams, "amount" | "withdrawAddress" | "signer" | "minZec"> & { sealedBy?: "sdk" | "api" },
    freshKey = false,
  ): Promise<Body<"redeem">> {
    const owner = params.signer.address ?? params.signer.account?.address;
    if (!owner) throw new FlowError("The signer has no address.", { code: "signer_without_address" });
    const amountWei = parseZsd(params.amount);
    const minZatOut = parseZec(params.minZec ?? "0");
    const byApi = params.sealedBy === "api";
    // Sealed here, a bad address fails before anything is sent. Sealed by the API, the address is
    // signed as the terms seal it and sent in the clear (the API seals it again to the same bytes).
    const own = byApi ? undefined : await this.sealer.seal(params.withdrawAddress, owner, freshKey);
    const target = await this.sealer.target();
    // The API refuses any form but the canonical one; checked here, a bad address fails before anything is sent.
    const clear = byApi ? checkAddress(params.withdrawAddress, target.network) : undefined;
    const terms = await this.r.redemptions.terms(owner, clear);
    const sealedAddress = byApi ? (terms.sealedAddress as Hex | undefined) : own;
    if (!sealedAddress) {
      throw new FlowError("The API's redemption terms did not seal the address.", { code: "terms_mismatch" });
    }
    // The seal opens only for custody; what the terms say it holds is checked, so the owner never signs
    // (nor sends in the clear) another address than the one they named.
    if (byApi && terms.withdrawAddress !== clear) {
      throw new FlowError("The API's redemption terms sealed another address than the one asked for.", {
        code: "terms_mismatch",
      });
    }
    const domain = (terms.typedData as unknown as { domain: { chainId: number; verifyingContract: Address } }).domain;
    // The seal opens only for the contract and chain it names: a signature for another would pay no one.
    if (
      domain.verifyingContract.toLowerCase() !== target.redemptions.toLowerCase() ||
      domain.chainId !== target.chainId
    ) {
      throw new FlowError("The API's redemption terms name another contract or chain than its relay.", {
        code: "terms_mismatch",
      });
    }
    const signature = await params.signer.signTypedData({
      ...redeemTypedData(domain, {
        owner,
        amount: amountWei,
        minZatOut,
        sealedAddress,
        nonce: BigInt(terms.nonce),
        deadline: BigInt(terms.suggestedDeadline),
      }),
      ...(params.signer.account ? { account: params.signer.account } : {}),
    } as never);
    const { v, r, s } = parseSignature(signature);
    const permit = {
      deadline: terms.suggestedDeadline,
      ...(minZatOut === 0n ? {} : { minZec: formatZec(minZatOut) }),
      v: Number(v),
      r,
      s,
    };
    if (byApi) return { amount: formatZsd(amountWei), withdrawAddress: clear!, owner, permit };
    return { amount: formatZsd(amountWei), sealedAddress, owner, permit };
  }

  /** Follows a redemption until it is paid (a failed one throws FlowError with its failureCode). */
  waitForRedemption(id: string, params: Pick<RedeemParams, "onProgress" | "timeoutMs"> = {}): Promise<Redemption> {
    return follow({
      what: `Redemption ${id}`,
      read: () => this.r.redemptions.get(id),
      until: "paid",
      failedCode: "redemption_failed",
      how: "redemptions.get()",
      timeoutMs: params.timeoutMs ?? 300_000,
      onStatus: (status, hold, item) =>
        params.onProgress?.({ step: "following", id, status, hold, payout: item.payout ?? null }),
      // A payout's stage and confirmations are progress too, told as they move.
      progress: (item) => JSON.stringify(item.payout ?? null),
    });
  }
}

/**
 * Polls `read` until its status is `until` (answered), "failed" (a FlowError
 * with its failureCode) or the time is up (a FlowError saying how to go on).
 */
export async function follow<
  T extends { status: string; failureCode?: string | null; failureReason?: string | null; hold?: Hold | null },
>(o: {
  what: string;
  read: () => Promise<T>;
  until: string;
  failedCode: string;
  how: string;
  timeoutMs: number;
  /** Called when the status changes, a hold is placed or lifted, or `progress` says something else. */
  onStatus?: (status: string, hold: Hold | null, item: T) => void;
  /** Progress within a status, worth telling when it changes. */
  progress?: (item: T) => string;
}): Promise<T> {
  const deadline = Date.now() + o.timeoutMs;
  for (let last = ""; ;) {
    const item = await o.read();
    const hold = item.hold ?? null;
    const now = `${item.status} ${hold?.state ?? ""} ${hold?.alertId ?? ""} ${o.progress?.(item) ?? ""}`;
    if (now !== last) {
      last = now;
      o.onStatus?.(item.status, hold, item);
    }
    if (item.status === o.until) return item;
    if (item.status === "failed") {
      throw new FlowError(`${o.what} failed: ${item.failureReason ?? "no reason given"}`, {
        code: item.failureCode ?? o.failedCode,
      });
    }
    if (Date.now() > deadline) {
      throw new FlowError(`${o.what} is still ${item.status}; follow it with ${o.how}.`, { code: "flow_timeout" });
    }
    await sleep(500);
  }
}
