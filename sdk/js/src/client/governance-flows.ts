// Governance with the EIP-712 signing done here: a holder's wallet signs a
// ballot or a delegation on the domains GET /v1/governance/holders/{address}
// reports, and the relay sends it (no gas for the holder). A proposal has no
// signed form in OpenZeppelin's Governor (no proposeBySig): the proposer sends
// it on-chain from its own key, through an RPC node. Queueing a succeeded
// proposal and executing it after the timelock's delay need no signature (the
// governor takes both from anyone): the relay sends them.
import {
  type Abi,
  type AbiFunction,
  type Account,
  type Address,
  type Hex,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  getAddress,
  http,
  isAddress,
  isHex,
  parseEventLogs,
} from "viem";
import {
  collateralRegistryAbi,
  governanceTokenAbi,
  positionManagerAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTimelockAbi,
  stableTokenAbi,
  priceFeedAbi,
  zecUsdOracleAbi,
} from "../generated/abis.ts";
import { FlowError, ZsdError } from "./errors.ts";
import { type TypedDataSigner, follow } from "./flows.ts";
import { sleep } from "./http.ts";
import type { GovernanceResource, RelayResource } from "./resources.ts";
import type { Answer } from "./types.ts";

export type Support = "against" | "for" | "abstain";
export type Vote = Answer<"getVote">;
export type Delegation = Answer<"getDelegation">;
export type GovernanceProposalAction = Answer<"getProposalAction">;

/** GovernorCountingSimple's vote types, in its order. */
const SUPPORT: Record<Support, number> = { against: 0, for: 1, abstain: 2 };
const BALLOT = [
  { name: "proposalId", type: "uint256" },
  { name: "support", type: "uint8" },
  { name: "voter", type: "address" },
  { name: "nonce", type: "uint256" },
] as const;

/** The chain Hardhat and `npm start` run: proposals go to its node unless told otherwise. */
const LOCAL_CHAIN_ID = 31337;
const LOCAL_RPC_URL = "http://127.0.0.1:8545";

/** Contracts a proposal's call may name, e.g. `PositionManager.setMinCollateralRatio(17000)`. */
const ABIS: Record<string, Abi> = {
  StableToken: stableTokenAbi,
  CollateralRegistry: collateralRegistryAbi,
  PositionManager: positionManagerAbi,
  StableMinter: stableMinterAbi,
  Redemptions: redemptionsAbi,
  ZecUsdOracle: zecUsdOracleAbi,
  SecondaryZecUsdOracle: zecUsdOracleAbi,
  PriceFeed: priceFeedAbi,
  GovernanceToken: governanceTokenAbi,
  StableGovernor: stableGovernorAbi,
  StableTimelock: stableTimelockAbi,
};

export interface VoteParams {
  /** The governor's proposal id (decimal). */
  proposalId: string;
  support: Support;
  /** Said on-chain with the vote (the ballot is then an ExtendedBallot). */
  reason?: string;
  signer: TypedDataSigner;
  /** The vote's id and each status it reaches (queued, submitted, confirmed). */
  onProgress?: (step: { id: string; status: string }) => void;
  /** How long to wait for `confirmed` (default 2 minutes); 0 answers the queued vote at once. */
  timeoutMs?: number;
  /**
   * How long to wait for a pending proposal (its voting delay not yet passed)
   * to open, the signed ballot sent again each second: by default 0, refused
   * at once (proposal_not_active).
   */
  waitForOpeningMs?: number;
  /**
   * While waiting for voting to open: the block after which it opens, and when (estimated for a future
   * block); null until the indexer has the proposal.
   */
  onWaiting?: (w: {
    proposalId: string;
    opensAfterBlock: number | null;
    at: string | null;
    estimated: boolean;
  }) => void;
}

/** How often a ballot waiting for its proposal to open is sent again. */
const OPENING_POLL_MS = 1_000;

export interface DelegateParams {
  signer: TypedDataSigner;
  /** Where the signer's tokens count; by default the signer itself, to vote in person. */
  delegatee?: Address;
  /** How long the signature stays valid (default an hour). */
  expiresInSeconds?: number;
  /** The delegation's id and each status it reaches (queued, submitted, confirmed). */
  onProgress?: (step: { id: string; status: string }) => void;
  /** How long to wait for `confirmed` (default 2 minutes); 0 answers the queued delegation at once. */
  timeoutMs?: number;
}

export interface ProposalActionParams {
  /** The governor's proposal id (decimal). */
  proposalId: string;
  /**
   * How long to wait for the governor to take it, the request made again each second: a queue for voting to
   * end, an execute for the timelock's delay to pass. By default 0, refused at once (proposal_not_succeeded,
   * proposal_not_ready).
   */
  waitMs?: number;
  /**
   * While waiting: what for (a queue: voting's end, its last block and time, estimated for a future block; an
   * execute: the eta), as the API and the indexer tell it.
   */
  onWaiting?: (w: {
    proposalId: string;
    proposalState: string;
    until: string | null;
    endBlock: number | null;
    estimated: boolean;
  }) => void;
  /** The action's id and each status it reaches (queued, submitted, confirmed). */
  onProgress?: (step: { id: string; status: string }) => void;
  /** How long to wait for `confirmed` once it is relayed (default 2 minutes); 0 answers the queued action at once. */
  timeoutMs?: number;
}

/** One call a proposal makes through the timelock. */
export type ProposalCall = { target: Address; calldata: Hex; value?: bigint };

export interface ProposeParams {
  /** The proposer: a viem account with gas on the chain (it sends the transaction). */
  account: Account;
  /** The first line of the description, shown as the proposal's title. */
  title: string;
  /** More lines after the title. */
  description?: string;
  /** At least one: `Contract.function(args)` as text (see parseCall), or target and calldata. */
  calls: (string | ProposalCall)[];
  /** The chain's RPC node; by default http://127.0.0.1:8545 on a local chain (31337), required elsewhere. */
  rpcUrl?: string;
}

export interface Proposed {
  proposalId: string;
  proposer: Address;
  txHash: Hex;
  blockNumber: number;
  /** The snapshot block: votes count as delegated then; voting opens after it. */
  voteStart: number;
  /** The last block votes are taken in. */
  voteEnd: number;
}

const signerAddress = (signer: TypedDataSigner): Address => {
  const address = signer.address ?? signer.account?.address;
  if (!address) throw new FlowError("The signer has no address.", { code: "signer_without_address" });
  return address;
};

/** Splits `a, b, c` at top-level commas (an argument may be a bracketed list). */
function splitArguments(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "[") depth++;
    else if (text[i] === "]") depth--;
    else if (text[i] === "," && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (text.trim() !== "") out.push(text.slice(start).trim());
  return out;
}

/** An argument as its Solidity type takes it: integers as bigints, bools, lists; addresses and bytes as given. */
function argumentOf(text: string, type: string): unknown {
  if (type.endsWith("[]")) {
    const inner = /^\[(.*)\]$/s.exec(text);
    if (!inner) throw new Error(`${text} is not a list [a, b, …] for ${type}`);
    return splitArguments(inner[1]!).map((item) => argumentOf(item, type.slice(0, -2)));
  }
  if (/^u?int\d*$/.test(type)) {
    if (!/^-?\d+$/.test(text)) throw new Error(`${text} is not a whole number for ${type}`);
    return BigInt(text);
  }
  if (type === "bool") {
    if (text !== "true" && text !== "false") throw new Error(`${text} is not true or false`);
    return text === "true";
  }
  if (type === "address" && !isAddress(text)) throw new Error(`${text} is not an address`);
  if (type.startsWith("bytes") && !isHex(text)) throw new Error(`${text} is not 0x-hex for ${type}`);
  return text;
}

/**
 * A call in words, `PositionManager.setMinCollateralRatio(17000)`, as target and
 * calldata: the contract by its name in the deployment, the function by its
 * name in that contract's ABI (the one with as many arguments as given).
 */
export function parseCall(text: string, contracts: Record<string, { address: string }>): ProposalCall {
  const match = /^\s*(\w+)\.(\w+)\((.*)\)\s*$/s.exec(text);
  if (!match)
    throw new Error(`a call is Contract.function(arguments), e.g. PositionManager.setMinCollateralRatio(17000)`);
  const [, contract, name, rest] = match as unknown as [string, string, string, string];
  const abi = ABIS[contract];
  const record = contracts[contract];
  if (!abi || !record) throw new Error(`${contract} is not one of ${Object.keys(ABIS).join(", ")}`);
  const args = splitArguments(rest);
  const candidates = abi.filter(
    (item): item is AbiFunction =>
      item.type === "function" && item.name === name && !["view", "pure"].includes(item.stateMutability),
  );
  const fn = candidates.find((item) => item.inputs.length === args.length);
  if (!fn) {
    throw new Error(
      candidates.length === 0
        ? `${contract} has no function ${name} that changes state`
        : `${contract}.${name} takes ${candidates.map((c) => c.inputs.length).join(" or ")} arguments (got ${args.length})`,
    );
  }
  const values = args.map((arg, i) => argumentOf(arg, fn.inputs[i]!.type));
  const calldata = encodeFunctionData({ abi: [fn], functionName: name, args: values });
  return { target: getAddress(record.address), calldata };
}

export class GovernanceFlows {
  constructor(private readonly r: { governance: GovernanceResource; relay: RelayResource }) {}

  /** Signs a ballot with the voter's wallet and relays it; resolves once it is counted on-chain. */
  async vote(params: VoteParams): Promise<Vote> {
    const voter = signerAddress(params.signer);
    if (!(params.support in SUPPORT)) throw new FlowError(`support is for, against or abstain`, { code: "invalid" });
    const proposalId = BigInt(params.proposalId);
    const { domains } = await this.r.governance.holder(voter);
    // The nonce keyed by the proposal (GovernorNoncesKeyed): key << 64 | 0, as a voter votes once on a proposal.
    const nonce = BigInt.asUintN(192, proposalId) << 64n;
    const message = { proposalId, support: SUPPORT[params.support], voter, nonce };
    const account = params.signer.account ? { account: params.signer.account } : {};
    const signature = await params.signer.signTypedData(
      (params.reason === undefined
        ? { ...account, domain: domains.governor, types: { Ballot: BALLOT }, primaryType: "Ballot", message }
        : {
            ...account,
            domain: domains.governor,
            types: {
              ExtendedBallot: [...BALLOT, { name: "reason", type: "string" }, { name: "params", type: "bytes" }],
            },
            primaryType: "ExtendedBallot",
            message: { ...message, reason: params.reason, params: "0x" },
          }) as never,
    );
    const queued = await this.#castWhenOpen(params, {
      proposalId: proposalId.toString(),
      support: params.support,
      voter,
      signature,
      nonce: nonce.toString(),
      ...(params.reason === undefined ? {} : { reason: params.reason }),
    });
    if (params.timeoutMs === 0) return queued;
    return follow({
      what: `Vote ${queued.voteId}`,
      read: () => this.r.governance.getVote(queued.voteId),
      until: "confirmed",
      failedCode: "vote_failed",
      how: "governance.getVote()",
      timeoutMs: params.timeoutMs ?? 120_000,
      onStatus: (status) => params.onProgress?.({ id: queued.voteId, status }),
    });
  }

  /**
   * Relays the ballot; while the governor still says the proposal is pending,
   * sends it again until voting opens or `waitForOpeningMs` has passed. The
   * chain is the judge (the API asks the governor's state() each time), not
   * the indexer, which trails it.
   */
  async #castWhenOpen(params: VoteParams, body: Parameters<GovernanceResource["vote"]>[0]) {
    const deadline = Date.now() + (params.waitForOpeningMs ?? 0);
    let opens = "";
    let start: { block: number; time: string; estimated: boolean } | undefined;
    for (;;) {
      try {
        return await this.r.governance.vote(body);
      } catch (error) {
        const pending =
          error instanceof ZsdError &&
          error.code === "proposal_not_active" &&
          error.problem?.proposalState === "pending";
        if (!pending || Date.now() >= deadline) {
          if (!pending || !params.waitForOpeningMs) throw error;
          throw new FlowError(
            `Proposal ${body.proposalId} is still pending after ${Math.round(params.waitForOpeningMs / 1000)} s: ` +
              `voting opens${opens}; vote then.`,
            { code: "proposal_not_active" },
          );
        }
        // When it opens, from the indexer: read until it answers (it trails the chain by a few blocks).
        start ??= await this.r.governance.proposal(body.proposalId).then(
          (p) => p.start,
          () => undefined,
        );
        if (start) opens = ` after block ${start.block} (${start.estimated ? "about " : ""}${start.time})`;
        params.onWaiting?.({
          proposalId: body.proposalId,
          opensAfterBlock: start?.block ?? null,
          at: start?.time ?? null,
          estimated: start?.estimated ?? true,
        });
        await sleep(Math.min(OPENING_POLL_MS, Math.max(0, deadline - Date.now())));
      }
    }
  }

  /** Signs a delegation with the holder's wallet and relays it; resolves once the votes count. */
  async delegate(params: DelegateParams): Promise<Delegation> {
    const delegator = signerAddress(params.signer);
    const delegatee = getAddress(params.delegatee ?? delegator);
    const holder = await this.r.governance.holder(delegator);
    const expiry = BigInt(Math.floor(Date.now() / 1000) + (params.expiresInSeconds ?? 3600));
    const nonce = BigInt(holder.delegationNonce);
    const signature = await params.signer.signTypedData({
      ...(params.signer.account ? { account: params.signer.account } : {}),
      domain: holder.domains.token,
      types: {
        Delegation: [
          { name: "delegatee", type: "address" },
          { name: "nonce", type: "uint256" },
          { name: "expiry", type: "uint256" },
        ],
      },
      primaryType: "Delegation",
      message: { delegatee, nonce, expiry },
    } as never);
    const queued = await this.r.governance.delegate({
      delegatee,
      delegator,
      nonce: nonce.toString(),
      expiry: Number(expiry),
      signature,
    });
    if (params.timeoutMs === 0) return queued;
    return follow({
      what: `Delegation ${queued.delegationId}`,
      read: () => this.r.governance.getDelegation(queued.delegationId),
      until: "confirmed",
      failedCode: "delegation_failed",
      how: "governance.getDelegation()",
      timeoutMs: params.timeoutMs ?? 120_000,
      onStatus: (status) => params.onProgress?.({ id: queued.delegationId, status }),
    });
  }

  /** Relays the governor's queue of a succeeded proposal; resolves once confirmed, with the eta. */
  queue(params: ProposalActionParams): Promise<GovernanceProposalAction> {
    return this.#proposalAction("queue", params);
  }

  /** Relays the governor's execute of a queued proposal whose timelock delay is over; resolves once confirmed. */
  execute(params: ProposalActionParams): Promise<GovernanceProposalAction> {
    return this.#proposalAction("execute", params);
  }

  async #proposalAction(action: "queue" | "execute", params: ProposalActionParams): Promise<GovernanceProposalAction> {
    const deadline = Date.now() + (params.waitMs ?? 0);
    // What the governor waits for: voting to end (a queue), the timelock's delay (an execute).
    const waiting = action === "queue" ? ["pending", "active"] : ["queued"];
    const refusal = action === "queue" ? "proposal_not_succeeded" : "proposal_not_ready";
    let end: { block: number; time: string; estimated: boolean } | undefined;
    let queued: GovernanceProposalAction;
    for (;;) {
      try {
        queued = await this.r.governance[action](params.proposalId);
        break;
      } catch (error) {
        const state = error instanceof ZsdError && error.code === refusal ? error.problem?.proposalState : undefined;
        if (typeof state !== "string" || !waiting.includes(state) || Date.now() >= deadline) {
          if (typeof state !== "string" || !waiting.includes(state) || !params.waitMs) throw error;
          throw new FlowError(
            `Proposal ${params.proposalId} is still ${state} after ${Math.round(params.waitMs / 1000)} s: ` +
              `${action} it later.`,
            { code: refusal },
          );
        }
        if (action === "queue") {
          // Voting's last block and its time, from the indexer: read until it answers.
          end ??= await this.r.governance.proposal(params.proposalId).then(
            (p) => p.end,
            () => undefined,
          );
        }
        const eta = (error as ZsdError).problem?.eta;
        params.onWaiting?.({
          proposalId: params.proposalId,
          proposalState: state,
          until: action === "queue" ? (end?.time ?? null) : typeof eta === "string" ? eta : null,
          endBlock: end?.block ?? null,
          estimated: action === "queue" ? (end?.estimated ?? true) : false,
        });
        await sleep(Math.min(OPENING_POLL_MS, Math.max(0, deadline - Date.now())));
      }
    }
    if (params.timeoutMs === 0) return queued;
    return follow({
      what: `The ${action} of proposal ${params.proposalId} (${queued.actionId})`,
      read: () => this.r.governance.getAction(queued.actionId),
      until: "confirmed",
      failedCode: `${action}_failed`,
      how: "governance.getAction()",
      timeoutMs: params.timeoutMs ?? 120_000,
      onStatus: (status) => params.onProgress?.({ id: queued.actionId, status }),
    });
  }

  /** Sends a proposal from the proposer's own account (it pays the gas); resolves once it is mined. */
  async propose(params: ProposeParams): Promise<Proposed> {
    if (params.calls.length === 0) throw new FlowError("A proposal makes at least one call.", { code: "invalid" });
    if (params.title.trim() === "" || params.title.includes("\n")) {
      throw new FlowError("A proposal's title is one line of text.", { code: "invalid" });
    }
    const relay = await this.r.relay.get();
    const governor = relay.contracts?.StableGovernor?.address;
    if (!governor || relay.chainId === null || !relay.contracts) {
      throw new FlowError("This API has no deployment with a governor.", { code: "no_governor" });
    }
    const rpcUrl = params.rpcUrl ?? (relay.chainId === LOCAL_CHAIN_ID ? LOCAL_RPC_URL : undefined);
    if (!rpcUrl) {
      throw new FlowError(
        `A proposal is sent through the chain's RPC node (chain ${relay.chainId}): give its rpcUrl.`,
        {
          code: "rpc_url_required",
        },
      );
    }
    const contracts = relay.contracts;
    const calls = params.calls.map((call) => {
      if (typeof call !== "string") return call;
      try {
        return parseCall(call, contracts);
      } catch (error) {
        throw new FlowError(`${call}: ${(error as Error).message}`, { code: "invalid_call" });
      }
    });
    const description = params.description ? `${params.title}\n\n${params.description}` : params.title;
    const chain = defineChain({
      id: relay.chainId,
      name: `chain ${relay.chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const wallet = createWalletClient({ account: params.account, chain, transport: http(rpcUrl) });
    const reader = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 250 });
    let txHash: Hex;
    try {
      txHash = await wallet.writeContract({
        address: getAddress(governor),
        abi: stableGovernorAbi,
        functionName: "propose",
        args: [calls.map((c) => c.target), calls.map((c) => c.value ?? 0n), calls.map((c) => c.calldata), description],
      });
    } catch (error) {
      const e = error as { shortMessage?: string; message: string };
      throw new FlowError(`The governor refused the proposal: ${e.shortMessage ?? e.message}`, {
        code: "proposal_refused",
      });
    }
    const receipt = await reader.waitForTransactionReceipt({ hash: txHash });
    const [created] = parseEventLogs({ abi: stableGovernorAbi, eventName: "ProposalCreated", logs: receipt.logs });
    if (receipt.status !== "success" || !created) {
      throw new FlowError(`The proposal's transaction ${txHash} reverted.`, { code: "transaction_reverted" });
    }
    return {
      proposalId: created.args.proposalId.toString(),
      proposer: created.args.proposer,
      txHash,
      blockNumber: Number(receipt.blockNumber),
      voteStart: Number(created.args.voteStart),
      voteEnd: Number(created.args.voteEnd),
    };
  }
}
