// The Shielded Dollar API client, shaped like stripe-node:
//
//   const zsd = new Zsd(process.env.ZSD_API_KEY);
//   const note = zsd.notes.create();
//   await zsd.sandbox.deposit({ amount: "4", noteCommitment: zsd.notes.commitment(note) });
//   const mint = await zsd.mint({ note, amount: "100", recipient });
import { Webhook } from "standardwebhooks";
import type { Address } from "viem";
import { type Note, createNote, decodeNote, encodeNote, noteCommitment } from "../notes/index.ts";
import { DEFAULT_MIN_ANONYMITY, minAnonymityFromEnvironment } from "./anonymity.ts";
import { Flows, type MintParams, type RedeemParams } from "./flows.ts";
import {
  type ClosePositionParams,
  type LiquidateParams,
  PositionFlows,
  type RepayParams,
  type TopUpParams,
  type WithdrawCollateralParams,
  type WithdrawNoteParams,
} from "./position-flows.ts";
import {
  type DelegateParams,
  GovernanceFlows,
  type ProposalActionParams,
  type ProposeParams,
  type VoteParams,
} from "./governance-flows.ts";
import { HttpClient, type HttpOptions } from "./http.ts";
import { type RedirectParams, redirectPayout } from "./redirect-flow.ts";
import {
  AgentsResource,
  AlertsResource,
  GovernanceResource,
  KeysResource,
  LedgerResource,
  MintsResource,
  ProofsResource,
  PositionsResource,
  RedemptionsResource,
  WithdrawalsResource,
  RelayResource,
  SandboxResource,
} from "./resources.ts";

export * from "./errors.ts";
export type * from "./types.ts";
export { chooseFloor, describeHold, describePayout, roundFloorUp } from "./flows.ts";
export { DEFAULT_MIN_ANONYMITY } from "./anonymity.ts";
export type { AnonymityWarning } from "./anonymity.ts";
export type {
  Hold,
  MintParams,
  MintStep,
  PayoutProgress,
  ProveStep,
  RedeemParams,
  RedeemStep,
  TypedDataSigner,
} from "./flows.ts";
export { parseCall } from "./governance-flows.ts";
export type {
  DelegateParams,
  Delegation,
  GovernanceProposalAction,
  ProposalActionParams,
  ProposalCall,
  Proposed,
  ProposeParams,
  Support,
  Vote,
  VoteParams,
} from "./governance-flows.ts";
export { checkAddress, networkOf } from "./sealing.ts";
export type { PayoutRedirect, RedirectParams } from "./redirect-flow.ts";
export type { SealTarget } from "./sealing.ts";
export type {
  ClosePositionParams,
  LiquidateParams,
  PositionAction,
  PositionStep,
  ReleaseTo,
  RepayParams,
  TopUpParams,
  WithdrawCollateralParams,
  WithdrawNoteParams,
  Withdrawal,
} from "./position-flows.ts";

export interface ZsdOptions {
  /** The API's base address, without /v1. Default: the local sandbox for sk_test_ keys. */
  baseUrl?: string;
  /** Per attempt, in milliseconds (default 30 s). */
  timeout?: number;
  /** Retries after the first attempt (default 2). */
  maxNetworkRetries?: number;
  /** For tests: the first back-off step and its cap, in milliseconds. */
  initialRetryDelay?: number;
  maxRetryDelay?: number;
  /** A 429 or 503 asking to wait longer than this (milliseconds, default 60 s) throws at once instead. */
  maxRetryAfter?: number;
  /** The fetch to send requests with (a proxy's, or a recorder in tests). */
  fetch?: typeof fetch;
  /**
   * A mint warns (its onWarning) when its floor leaves fewer deposits than this that could back it.
   * Default: ZSD_MIN_ANONYMITY where there is an environment, else 20.
   */
  minAnonymity?: number;
}

/** Where a sandbox key talks to unless told: the stack `npm start` runs. */
export const SANDBOX_BASE_URL = "http://127.0.0.1:3000";

/** A webhook delivery's event, once its signature is verified. */
export interface WebhookEvent {
  id: string;
  type: string;
  createdAt: string;
  environment: "sandbox" | "production";
  data: Record<string, unknown>;
}

export class Zsd {
  readonly relay: RelayResource;
  readonly keys: KeysResource;
  readonly ledger: LedgerResource;
  readonly proofs: ProofsResource;
  readonly mints: MintsResource;
  readonly redemptions: RedemptionsResource;
  readonly positions: PositionsResource;
  readonly withdrawals: WithdrawalsResource;
  readonly sandbox: SandboxResource & {
    depositNote(note: Note, amount: string): ReturnType<SandboxResource["deposit"]>;
  };
  readonly agents: AgentsResource;
  readonly alerts: AlertsResource;
  readonly governance: GovernanceResource;
  readonly #flows: Flows;
  readonly #positionFlows: PositionFlows;
  readonly #governanceFlows: GovernanceFlows;

  /** Notes: the depositor's secrets, and their copyable string form (zsdnote1…, with a checksum). */
  readonly notes = {
    create: (): Note => createNote(),
    commitment: (note: Note): string => noteCommitment(note).toString(),
    encode: (note: Note): string => encodeNote(note),
    decode: (encoded: string): Note => decodeNote(encoded),
  };

  /** Standard Webhooks signatures of the deliveries agents receive. */
  readonly webhooks = {
    /** The event, if `headers` sign `payload` (the raw body) with `secret` (whsec_…); throws otherwise. */
    verify: (payload: string, headers: Record<string, string | string[] | undefined>, secret: string): WebhookEvent => {
      const flat = Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value[0] : value]),
      ) as Record<string, string>;
      return new Webhook(secret).verify(payload, flat) as WebhookEvent;
    },
  };

  constructor(apiKey: string | undefined, options: ZsdOptions = {}) {
    if (!apiKey) throw new TypeError("An API key is required (sk_test_… or sk_live_…), e.g. from ZSD_API_KEY.");
    const baseUrl = options.baseUrl ?? (apiKey.startsWith("sk_test_") ? SANDBOX_BASE_URL : undefined);
    if (!baseUrl) throw new TypeError("A production key (sk_live_…) needs the API's baseUrl.");
    const http = new HttpClient({
      baseUrl,
      apiKey,
      timeout: options.timeout ?? 30_000,
      maxNetworkRetries: options.maxNetworkRetries ?? 2,
      initialRetryDelay: options.initialRetryDelay,
      maxRetryDelay: options.maxRetryDelay,
      maxRetryAfter: options.maxRetryAfter,
      fetch: options.fetch,
    } satisfies HttpOptions);
    this.relay = new RelayResource(http);
    this.keys = new KeysResource(http);
    this.ledger = new LedgerResource(http);
    this.proofs = new ProofsResource(http);
    this.mints = new MintsResource(http);
    this.redemptions = new RedemptionsResource(http);
    this.positions = new PositionsResource(http);
    this.withdrawals = new WithdrawalsResource(http);
    const sandbox = new SandboxResource(http);
    this.sandbox = Object.assign(sandbox, {
      /** A simulated deposit of `amount` ZEC for this note. */
      depositNote: (note: Note, amount: string) =>
        sandbox.deposit({ amount, noteCommitment: noteCommitment(note).toString() }),
    });
    this.agents = new AgentsResource(http);
    this.alerts = new AlertsResource(http);
    this.governance = new GovernanceResource(http);
    this.#flows = new Flows(http, this, {
      minAnonymity: options.minAnonymity ?? minAnonymityFromEnvironment() ?? DEFAULT_MIN_ANONYMITY,
    });
    this.#positionFlows = new PositionFlows(this.#flows, this);
    this.#governanceFlows = new GovernanceFlows(this);
  }

  /** Proves on this machine and mints; resolves once the mint is confirmed. */
  mint(params: MintParams) {
    return this.#flows.mint(params);
  }

  /** Only the proof of a mint, made on this machine: the body for proofs.submit (the CLI's `zsd prove`). */
  prove(params: Omit<MintParams, "timeoutMs">) {
    return this.#flows.prove(params);
  }

  /**
   * Only the owner's signature of a redemption: the body for redemptions.create (the CLI's `zsd redeem sign`).
   * `sealedBy: "api"` gives the spec's body, the address in the clear, signed over the API's seal of it.
   */
  signRedemption(
    params: Pick<RedeemParams, "amount" | "withdrawAddress" | "signer" | "minZec"> & { sealedBy?: "sdk" | "api" },
  ) {
    return this.#flows.signRedemption(params);
  }

  /**
   * Custody's seal key and what a sealed address is bound to (chain, Redemptions), as
   * GET /v1/relay publishes them; read once per client (`fresh` reads them again).
   */
  sealTarget(fresh = false) {
    return this.#flows.sealer.target(fresh);
  }

  /** `address`, checked for the API's network and sealed to custody's key for a payout owned by `owner`. */
  sealAddress(address: string, owner: Address) {
    return this.#flows.sealer.seal(address, owner);
  }

  /** Signs with the caller's wallet and redeems; resolves once the ZEC is paid. */
  redeem(params: RedeemParams) {
    return this.#flows.redeem(params);
  }

  /**
   * Redirects a failed payout's held ZEC (custody could not pay it), signed by
   * the payout's owner: to another address (checked and sealed) or into a new note.
   */
  redirectPayout(params: RedirectParams) {
    return redirectPayout(this, this.#flows.sealer, params);
  }

  waitForMint(mintId: string, params?: Pick<MintParams, "onProgress" | "timeoutMs">) {
    return this.#flows.waitForMint(mintId, params);
  }

  waitForRedemption(id: string, params?: Pick<RedeemParams, "onProgress" | "timeoutMs">) {
    return this.#flows.waitForRedemption(id, params);
  }

  /** Burns the signer's ZSD against a position's debt; resolves once confirmed. */
  repayPosition(params: RepayParams) {
    return this.#positionFlows.repay(params);
  }

  /** Takes ZEC out of a position, signed with the owner key of the note that opened it. */
  withdrawFromPosition(params: WithdrawCollateralParams) {
    return this.#positionFlows.withdrawCollateral(params);
  }

  /** Repays what is owed (from `payer`, when given) and releases the collateral to an address or a new note. */
  closePosition(params: ClosePositionParams) {
    return this.#positionFlows.close(params);
  }

  /** Liquidates with the signer's ZSD (it signs; the relay pays the gas); the seized ZEC goes to `to`. */
  liquidatePosition(params: LiquidateParams) {
    return this.#positionFlows.liquidate(params);
  }

  /** Proves on this machine and adds a note's ZEC to a position. */
  topUpPosition(params: TopUpParams) {
    return this.#positionFlows.topUp(params);
  }

  /** Proves on this machine and pays a note's ZEC to a shielded address; resolves once the chain has it. */
  withdrawNote(params: WithdrawNoteParams) {
    return this.#positionFlows.withdrawNote(params);
  }

  /** Signs a ballot with the voter's wallet (EIP-712) and relays it, gas paid; resolves once counted. */
  vote(params: VoteParams) {
    return this.#governanceFlows.vote(params);
  }

  /** Signs a delegation with the holder's wallet (EIP-712) and relays it, gas paid; resolves once it counts. */
  delegateVotes(params: DelegateParams) {
    return this.#governanceFlows.delegate(params);
  }

  /** Sends a proposal on-chain from the proposer's account (which pays the gas); resolves once mined. */
  propose(params: ProposeParams) {
    return this.#governanceFlows.propose(params);
  }

  /**
   * Queues a succeeded proposal in the timelock through the relay (no signature, no gas); resolves once
   * confirmed, with its eta. `waitMs` waits for a proposal still being voted on to succeed.
   */
  queueProposal(params: ProposalActionParams) {
    return this.#governanceFlows.queue(params);
  }

  /**
   * Executes a queued proposal through the relay once the timelock's delay is over; resolves once
   * confirmed (its calls have run). `waitMs` waits for the eta.
   */
  executeProposal(params: ProposalActionParams) {
    return this.#governanceFlows.execute(params);
  }

  waitForPositionAction(positionId: string, actionId: string, params?: Pick<RepayParams, "onProgress" | "timeoutMs">) {
    return this.#positionFlows.waitForAction(positionId, actionId, params);
  }
}
