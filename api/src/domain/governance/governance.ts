// Governance through the relay: proposals as the indexer derives them (with
// their calls said in words, tallies, quorum and times), and gasless votes and
// delegations. A signed ballot or delegation is checked off-chain against the
// chain as it is now (the proposal is active, the voter has weight at its
// snapshot and has not voted, the signature is the voter's at an unused nonce)
// before anything is spent, then queued; the relay worker sends it
// (workers/relay/governance-relay.ts). So are the queue and the execute of a proposal,
// which the governor takes from anyone and need no signature: the relay sends
// them once the proposal has succeeded, and once the timelock's delay is over.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  type TypedDataDomain,
  encodeFunctionData,
  formatUnits,
  getAddress,
  keccak256,
  parseSignature,
  toHex,
} from "viem";
import { governanceTokenAbi, stableGovernorAbi, stableTimelockAbi } from "@zsd/sdk";
import type { Database } from "../../adapters/db/index.ts";
import type { GovernanceChain } from "../../adapters/governance.ts";
import type { Upstreams } from "../../adapters/upstreams.ts";
import { domainErrors } from "../errors.ts";
import { ballotNonce, conflict, delegationSigner, unprocessable } from "./ballots.ts";
import {
  type IndexedProposal,
  type IndexedVote,
  PROPOSAL_STATES,
  type ProposalAction,
  type ProposalState,
  SUPPORT,
  type Support,
  iso,
  presentDelegation,
  presentIndexedVote,
  presentProposal,
  presentProposalAction,
  presentVote,
  votes,
} from "./views.ts";
import { randomId } from "../../adapters/ids.ts";
import type { Environment } from "../accounts/keys.ts";
import { lockAccount } from "../accounts/store.ts";
import {
  delegationsInLastDay,
  findDelegation,
  findLiveDelegation,
  findPendingProposalAction,
  findPendingVote,
  findProposalAction,
  findVote,
  insertDelegation,
  insertProposalAction,
  insertVote,
} from "./store.ts";

export {
  PROPOSAL_ACTIONS,
  PROPOSAL_STATES,
  type ProposalAction,
  type ProposalState,
  SUPPORT,
  type Support,
  titleOf,
} from "./views.ts";

export interface Page {
  limit: number;
  startingAfter?: string;
}

export interface VoteInput {
  proposalId: string;
  support: Support;
  voter: Address;
  signature: Hex;
  reason?: string;
  /** The nonce the ballot was signed at, when the client says (else the current keyed and sequential nonces are tried). */
  nonce?: string;
}

export interface DelegationInput {
  delegatee: Address;
  delegator: Address;
  nonce: string;
  expiry: number;
  signature: Hex;
}

export interface GovernanceOptions {
  environment: Environment;
  /** Gasless delegations an account may submit per 24 hours. */
  delegationsPerDay: number;
  /** Whether a relay worker sends what is queued. */
  relaying: boolean;
}

/** What the governor has and the indexer does not yet: a vote's voter as a cursor is the caller's to get right. */
const notIndexed = (what: string) =>
  what.startsWith("Vote of")
    ? domainErrors.notFound(what)
    : domainErrors.unavailable(`${what} (the indexer is catching up)`, 2);

export class GovernanceService {
  readonly #blockTimes = new Map<bigint, bigint>();
  #domains: Promise<{ governor: TypedDataDomain; token: TypedDataDomain }> | undefined;

  constructor(
    private readonly db: Database,
    private readonly gov: GovernanceChain | undefined,
    private readonly upstreams: Upstreams,
    private readonly options: GovernanceOptions,
  ) {}

  #requireChain(): GovernanceChain {
    if (!this.gov) throw domainErrors.unavailable("Governance (no deployment with a governor is configured)");
    return this.gov;
  }

  #requireRelay(): GovernanceChain {
    const gov = this.#requireChain();
    if (!this.options.relaying) throw domainErrors.unavailable("Gasless governance (no relayer key is configured)");
    return gov;
  }

  /** The governor's parameters now. */
  async parameters() {
    const gov = this.#requireChain();
    const g = { address: gov.governor, abi: stableGovernorAbi } as const;
    const head = await gov.read(() => gov.client.getBlockNumber({ cacheTime: 0 }));
    const [delay, period, threshold, numerator, denominator, quorum, minDelay] = await gov.read(() =>
      Promise.all([
        gov.client.readContract({ ...g, functionName: "votingDelay" }),
        gov.client.readContract({ ...g, functionName: "votingPeriod" }),
        gov.client.readContract({ ...g, functionName: "proposalThreshold" }),
        gov.client.readContract({ ...g, functionName: "quorumNumerator" }),
        gov.client.readContract({ ...g, functionName: "quorumDenominator" }),
        // Quorum is defined for past blocks only: the newest mined one.
        gov.client.readContract({ ...g, functionName: "quorum", args: [head > 0n ? head - 1n : 0n] }),
        gov.client.readContract({ address: gov.timelock, abi: stableTimelockAbi, functionName: "getMinDelay" }),
      ]),
    );
    return {
      governor: gov.governor,
      token: gov.token,
      timelock: gov.timelock,
      votingDelayBlocks: Number(delay),
      votingPeriodBlocks: Number(period),
      proposalThreshold: votes(threshold),
      quorum: votes(quorum),
      quorumPercent: formatUnits((numerator * 100n * 10_000n) / denominator, 4),
      timelockDelaySeconds: Number(minDelay),
    };
  }

  /**
   * A holder as a signer needs it: tokens, votes and delegate now, the token
   * nonce a delegation signs, and both EIP-712 domains (so that a wallet signs
   * ballots and delegations with no chain of its own).
   */
  async holder(address: Address) {
    const gov = this.#requireChain();
    const t = { address: gov.token, abi: governanceTokenAbi } as const;
    const [balance, current, delegate, nonce] = await gov.read(() =>
      Promise.all([
        gov.client.readContract({ ...t, functionName: "balanceOf", args: [address] }),
        gov.client.readContract({ ...t, functionName: "getVotes", args: [address] }),
        gov.client.readContract({ ...t, functionName: "delegates", args: [address] }),
        gov.client.readContract({ ...t, functionName: "nonces", args: [address] }),
      ]),
    );
    return {
      object: "governance_holder" as const,
      address: getAddress(address),
      balance: votes(balance),
      votes: votes(current),
      delegate: BigInt(delegate) === 0n ? null : delegate,
      delegationNonce: nonce.toString(),
      domains: await this.#domainsOf(gov),
    };
  }

  /** Proposals newest first, optionally in one state. */
  async listProposals(query: Page & { state?: ProposalState }) {
    if (query.startingAfter) await this.#exists(query.startingAfter);
    const params = new URLSearchParams({ limit: String(query.limit) });
    if (query.state) params.set("state", query.state);
    if (query.startingAfter) params.set("startingAfter", query.startingAfter);
    const page = await this.#indexer<{ proposals: IndexedProposal[]; hasMore: boolean }>(
      `/proposals?${params}`,
      query.startingAfter ? `Proposal ${query.startingAfter}` : "Proposals",
    );
    const times = await this.#times(page.proposals.flatMap((p) => [BigInt(p.voteStart), BigInt(p.voteEnd)]));
    return { data: page.proposals.map((p) => presentProposal(p, times, this.gov)), hasMore: page.hasMore };
  }

  /**
   * The governor is the authority on which proposals exist: one it never had
   * is not found whatever the indexer says, and one it has that the indexer
   * has not reached yet is a lag (unavailable), not a missing one.
   */
  async #exists(id: string): Promise<void> {
    const gov = this.#requireChain();
    const snapshot = await gov.read(() =>
      gov.client.readContract({
        address: gov.governor,
        abi: stableGovernorAbi,
        functionName: "proposalSnapshot",
        args: [BigInt(id)],
      }),
    );
    if (snapshot === 0n) throw domainErrors.notFound(`Proposal ${id}`);
  }

  /** One proposal with its first page of votes. */
  async proposal(id: string, votesPage: Page) {
    await this.#exists(id);
    const p = await this.#indexer<IndexedProposal>(`/proposals/${id}`, `Proposal ${id}`);
    const [times, votesList] = await Promise.all([
      this.#times([BigInt(p.voteStart), BigInt(p.voteEnd)]),
      this.votes(id, votesPage, true),
    ]);
    return { ...presentProposal(p, times, this.gov), votes: votesList };
  }

  /** A proposal's votes in the order they were cast. */
  async votes(id: string, page: Page, known = false) {
    if (!known) await this.#exists(id);
    const params = new URLSearchParams({ limit: String(page.limit) });
    if (page.startingAfter) params.set("startingAfter", page.startingAfter);
    const result = await this.#indexer<{ votes: IndexedVote[]; hasMore: boolean }>(
      `/proposals/${id}/votes?${params}`,
      page.startingAfter ? `Vote of ${page.startingAfter} on proposal ${id}` : `Proposal ${id}`,
    );
    return {
      object: "list" as const,
      data: result.votes.map(presentIndexedVote),
      hasMore: result.hasMore,
    };
  }

  /** An indexer read; one the indexer does not have is not found (of `what`), anything else unavailable. */
  async #indexer<T>(path: string, what: string): Promise<T> {
    const result = await this.upstreams.indexerOrNotFound<T>(path);
    if (result === undefined) throw notIndexed(what);
    return result;
  }

  /**
   * Times of blocks: a mined block's own timestamp, a future one's estimated
   * from the head at the chain's average block time over the last 1,000 blocks.
   */
  async #times(blocks: bigint[]): Promise<Map<bigint, { time: string; estimated: boolean }>> {
    const out = new Map<bigint, { time: string; estimated: boolean }>();
    if (blocks.length === 0) return out;
    const gov = this.#requireChain();
    const head = await gov.read(() => gov.client.getBlock({ blockTag: "latest" }));
    const sampleNumber = head.number > 1000n ? head.number - 1000n : 0n;
    const sampleTime = await this.#blockTime(gov, sampleNumber);
    const span = head.number - sampleNumber;
    // Seconds per block, in thousandths; 12 s when the chain has no history to measure.
    const perBlockMs =
      span > 0n && head.timestamp > sampleTime ? ((head.timestamp - sampleTime) * 1000n) / span : 12_000n;
    for (const block of new Set(blocks)) {
      if (block <= head.number) {
        out.set(block, { time: iso(await this.#blockTime(gov, block))!, estimated: false });
      } else {
        const seconds = head.timestamp + ((block - head.number) * perBlockMs) / 1000n;
        out.set(block, { time: iso(seconds)!, estimated: true });
      }
    }
    return out;
  }

  async #blockTime(gov: GovernanceChain, block: bigint): Promise<bigint> {
    const known = this.#blockTimes.get(block);
    if (known !== undefined) return known;
    const { timestamp } = await gov.read(() => gov.client.getBlock({ blockNumber: block }));
    if (this.#blockTimes.size > 10_000) this.#blockTimes.clear();
    this.#blockTimes.set(block, timestamp);
    return timestamp;
  }

  /** The EIP-712 domains as the contracts report them (ERC-5267). */
  #domainsOf(gov: GovernanceChain) {
    const domain = async (address: Address, abi: typeof stableGovernorAbi | typeof governanceTokenAbi) => {
      const [, name, version, chainId, verifyingContract] = await gov.read(() =>
        gov.client.readContract({ address, abi, functionName: "eip712Domain" }),
      );
      return { name, version, chainId: Number(chainId), verifyingContract };
    };
    this.#domains ??= Promise.all([
      domain(gov.governor, stableGovernorAbi),
      domain(gov.token, governanceTokenAbi),
    ]).then(([governor, token]) => ({ governor, token }));
    this.#domains.catch(() => (this.#domains = undefined));
    return this.#domains;
  }

  /** Checks a signed ballot against the chain now and queues it for the relay worker. */
  async submitVote(accountId: string, input: VoteInput) {
    const gov = this.#requireRelay();
    const proposalId = BigInt(input.proposalId);
    const voter = getAddress(input.voter);
    const support = SUPPORT.indexOf(input.support);
    const g = { address: gov.governor, abi: stableGovernorAbi } as const;

    const snapshot = await gov.read(() =>
      gov.client.readContract({ ...g, functionName: "proposalSnapshot", args: [proposalId] }),
    );
    if (snapshot === 0n) throw domainErrors.notFound(`Proposal ${input.proposalId}`);
    const [stateIndex, voted, keyedNonce, sequentialNonce, code] = await gov.read(() =>
      Promise.all([
        gov.client.readContract({ ...g, functionName: "state", args: [proposalId] }),
        gov.client.readContract({ ...g, functionName: "hasVoted", args: [proposalId, voter] }),
        gov.client.readContract({ ...g, functionName: "nonces", args: [voter, BigInt.asUintN(192, proposalId)] }),
        gov.client.readContract({ ...g, functionName: "nonces", args: [voter] }),
        gov.client.getCode({ address: voter }),
      ]),
    );
    const state = PROPOSAL_STATES[stateIndex] ?? "pending";
    if (state !== "active") {
      throw conflict(
        "proposal_not_active",
        "Proposal not active",
        `Proposal ${input.proposalId} is ${state}; votes are taken while it is active.`,
        { proposalState: state },
      );
    }
    if (voted) {
      throw conflict("already_voted", "Already voted", `${voter} has already voted on proposal ${input.proposalId}.`);
    }
    const pending = await findPendingVote(this.db, input.proposalId, voter);
    if (pending) {
      // Its id is named to the account that relays it only.
      const own = pending.account_id === accountId;
      throw conflict(
        "already_voted",
        "Already voted",
        `A ballot of ${voter} on proposal ${input.proposalId} is already being relayed${own ? ` (${pending.id})` : ""}.`,
        own ? { voteId: pending.id } : {},
      );
    }
    // Votes at the snapshot can be read once it is past, as it is while the proposal is active.
    const weight = await gov.read(() =>
      gov.client.readContract({ ...g, functionName: "getVotes", args: [voter, snapshot] }),
    );
    if (weight === 0n) {
      throw unprocessable(
        "no_voting_power",
        "No voting power",
        `${voter} had no votes delegated to it at the proposal's snapshot (block ${snapshot}); ` +
          "tokens count once delegated, before the snapshot (POST /v1/governance/delegations).",
      );
    }

    const { governor: domain } = await this.#domainsOf(gov);
    const nonce = await ballotNonce({
      client: gov.client,
      domain,
      proposalId,
      support,
      voter,
      code,
      input,
      keyedNonce,
      sequentialNonce,
    });

    const id = randomId("vote");
    try {
      await insertVote(this.db, {
        id,
        accountId,
        environment: this.options.environment,
        proposalId: input.proposalId,
        voter,
        support,
        reason: input.reason ?? null,
        signature: input.signature,
        ballotNonce: nonce.toString(),
        weight: weight.toString(),
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw conflict(
        "already_voted",
        "Already voted",
        `A ballot of ${voter} on proposal ${input.proposalId} was just queued.`,
      );
    }
    return this.vote(accountId, id);
  }

  async vote(accountId: string, voteId: string) {
    const row = await findVote(this.db, voteId, accountId, this.options.environment);
    if (!row) throw domainErrors.notFound(`Vote ${voteId}`);
    return presentVote(row);
  }

  /** Checks a signed delegation (delegateBySig) and queues it, within the account's daily allowance. */
  async submitDelegation(accountId: string, input: DelegationInput) {
    const gov = this.#requireRelay();
    const delegator = getAddress(input.delegator);
    const delegatee = getAddress(input.delegatee);
    const nonce = BigInt(input.nonce);
    const expiry = BigInt(input.expiry);
    const [current, now] = await Promise.all([
      gov.read(() =>
        gov.client.readContract({
          address: gov.token,
          abi: governanceTokenAbi,
          functionName: "nonces",
          args: [delegator],
        }),
      ),
      gov.chain.now(),
    ]);
    if (expiry <= now) {
      throw unprocessable(
        "delegation_expired",
        "Delegation expired",
        `The delegation expired at ${iso(expiry)} by the chain's clock (${iso(now)}): sign again with a later expiry.`,
      );
    }
    const { token: domain } = await this.#domainsOf(gov);
    const signer = await delegationSigner(domain, { delegatee, nonce, expiry }, input.signature);
    if (signer !== delegator) {
      throw unprocessable(
        "delegation_signature_invalid",
        "Invalid delegation signature",
        `The signature is not ${delegator}'s EIP-712 Delegation to ${delegatee} at nonce ${nonce} with this expiry.`,
      );
    }
    if (nonce < current) {
      throw conflict(
        "nonce_used",
        "Nonce already used",
        `${delegator}'s nonce ${nonce} on the governance token is used (it is at ${current}): sign again at ${current}.`,
      );
    }
    if (nonce > current) {
      throw unprocessable(
        "nonce_invalid",
        "Nonce not yet usable",
        `${delegator}'s nonce on the governance token is ${current}, not ${nonce}: sign at ${current}.`,
      );
    }
    const { v, r, s } = parseSignature(input.signature);
    const id = randomId("dlg");
    const queue = this.db.transaction(async (tx) => {
      // One submission of the account at a time counts against its allowance.
      await lockAccount(tx, accountId);
      const count = await delegationsInLastDay(tx, accountId, this.options.environment);
      if (count >= this.options.delegationsPerDay) {
        throw conflict(
          "delegation_limit_reached",
          "Delegation limit reached",
          `This account submitted ${count} delegations in the last 24 hours, the most allowed; ` +
            "retry later, or delegate directly with the token's delegate().",
          { perDay: this.options.delegationsPerDay },
        );
      }
      const taken = await findLiveDelegation(tx, delegator, nonce.toString());
      if (taken) {
        const own = taken.account_id === accountId;
        throw conflict(
          "nonce_used",
          "Nonce already used",
          `A delegation of ${delegator} at nonce ${nonce} is already being relayed${own ? ` (${taken.id})` : ""}.`,
          own ? { delegationId: taken.id } : {},
        );
      }
      await insertDelegation(tx, {
        id,
        accountId,
        environment: this.options.environment,
        delegator,
        delegatee,
        delegationNonce: nonce.toString(),
        expiry: expiry.toString(),
        signature: { v: Number(v ?? 0n), r, s },
      });
    });
    await queue.catch((error: unknown) => {
      if (!isUniqueViolation(error)) throw error;
      throw conflict(
        "nonce_used",
        "Nonce already used",
        `A delegation of ${delegator} at nonce ${nonce} was just queued.`,
      );
    });
    return this.delegation(accountId, id);
  }

  /**
   * Checks that the governor takes a queue (a succeeded proposal) or an execute (a queued one whose
   * timelock delay is over) now, and queues it for the relay worker with the proposal's calls, read
   * from the indexer and proven the proposal's by the governor's own hash of them.
   */
  async submitProposalAction(accountId: string, proposalId: string, action: ProposalAction) {
    const gov = this.#requireRelay();
    const id = BigInt(proposalId);
    const g = { address: gov.governor, abi: stableGovernorAbi } as const;
    const snapshot = await gov.read(() =>
      gov.client.readContract({ ...g, functionName: "proposalSnapshot", args: [id] }),
    );
    if (snapshot === 0n) throw domainErrors.notFound(`Proposal ${proposalId}`);
    const [stateIndex, deadline, eta, now] = await gov.read(() =>
      Promise.all([
        gov.client.readContract({ ...g, functionName: "state", args: [id] }),
        gov.client.readContract({ ...g, functionName: "proposalDeadline", args: [id] }),
        gov.client.readContract({ ...g, functionName: "proposalEta", args: [id] }),
        gov.chain.now(),
      ]),
    );
    const state = PROPOSAL_STATES[stateIndex] ?? "pending";
    if (action === "queue" && state !== "succeeded") {
      const why =
        state === "pending" || state === "active"
          ? `; voting ends after block ${deadline}, and a proposal that then has a quorum and more votes for ` +
            "than against is queued"
          : "; only a succeeded proposal is queued";
      throw conflict("proposal_not_succeeded", "Proposal not succeeded", `Proposal ${proposalId} is ${state}${why}.`, {
        proposalState: state,
      });
    }
    const notReady = (why: string) =>
      conflict("proposal_not_ready", "Proposal not ready", `Proposal ${proposalId} is ${why}.`, {
        proposalState: state,
        eta: eta === 0n ? null : iso(eta),
      });
    if (action === "execute" && state !== "queued") {
      throw notReady(
        state === "succeeded"
          ? "succeeded but not queued: queue it first (POST /v1/governance/proposals/{proposalId}/queue)"
          : `${state}; only a queued proposal whose timelock delay is over is executed`,
      );
    }
    const pending = await findPendingProposalAction(this.db, proposalId, action);
    if (pending) throw this.#actionPending(proposalId, action, accountId, pending);
    const p = await this.#indexer<IndexedProposal>(`/proposals/${proposalId}`, `Proposal ${proposalId}`);
    const args = [
      p.targets.map((t) => getAddress(t)),
      p.values.map((v) => BigInt(v)),
      p.calldatas,
      keccak256(toHex(p.description)),
    ] as const;
    const hashed = await gov.read(() => gov.client.readContract({ ...g, functionName: "hashProposal", args }));
    if (hashed !== id)
      throw domainErrors.unavailable(`Proposal ${proposalId}'s calls (the indexer's are not the governor's)`);
    const calldata = encodeFunctionData({ abi: stableGovernorAbi, functionName: action, args });
    // The newest block may be older than the eta while the next one will not be: the governor is asked, as
    // the relay's transaction will be, in the block to come.
    if (action === "execute" && eta > now) {
      const ready = await gov.client
        .simulateContract({ ...g, functionName: "execute", args, blockTag: "pending" })
        .then(
          () => true,
          (error: unknown) => {
            // The timelock refuses an operation before its time with an error of its own, not in the governor's ABI.
            if (error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionRevertedError))
              return false;
            throw domainErrors.unavailable("The chain node");
          },
        );
      if (!ready) {
        throw notReady(
          `queued in the timelock until ${iso(eta)} by the chain's clock (now ${iso(now)}); execute it then`,
        );
      }
    }
    const actionId = randomId("gact");
    try {
      await insertProposalAction(this.db, {
        id: actionId,
        accountId,
        environment: this.options.environment,
        proposalId,
        action,
        calldata,
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const taken = await findPendingProposalAction(this.db, proposalId, action);
      throw this.#actionPending(proposalId, action, accountId, taken);
    }
    return this.proposalAction(accountId, actionId);
  }

  #actionPending(
    proposalId: string,
    action: ProposalAction,
    accountId: string,
    pending?: { id: string; account_id: string },
  ) {
    // Its id is named to the account that asked for it only.
    const own = pending?.account_id === accountId;
    return conflict(
      "proposal_action_pending",
      "Proposal action pending",
      `The ${action} of proposal ${proposalId} is already being relayed${own ? ` (${pending!.id})` : ""}.`,
      own ? { actionId: pending!.id } : {},
    );
  }

  async proposalAction(accountId: string, actionId: string) {
    const row = await findProposalAction(this.db, actionId, accountId, this.options.environment);
    if (!row) throw domainErrors.notFound(`Proposal action ${actionId}`);
    return presentProposalAction(row);
  }

  async delegation(accountId: string, delegationId: string) {
    const row = await findDelegation(this.db, delegationId, accountId, this.options.environment);
    if (!row) throw domainErrors.notFound(`Delegation ${delegationId}`);
    return presentDelegation(row);
  }
}

/** A unique index refused the row (PostgreSQL and PGlite both say 23505). */
function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | undefined)?.code === "23505";
}
