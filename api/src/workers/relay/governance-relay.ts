// The governance relay: queued ballots (castVoteBySig) and delegations
// (delegateBySig), and the queue and execute of proposals, sent and followed
// by the call relay (./call-relay.ts). A ballot whose voter has voted, or a
// delegation whose nonce is used, is reconciled from the governor's and the
// token's events; so is a proposal queued or executed meanwhile by anyone
// (the governor takes both from any account, and the outcome is the same).
import { type Address, type Hex, encodeFunctionData, formatUnits, parseEventLogs } from "viem";
import { governanceTokenAbi, stableGovernorAbi } from "@zsd/sdk";
import type { Database } from "../../adapters/db/index.ts";
import type { GovernanceChain } from "../../adapters/governance.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { SUPPORT } from "../../domain/governance/governance.ts";
import { delegationRows, proposalActionRows, voteRows } from "../../domain/governance/store.ts";
import { type CallKind, CallRelay, type JobRow, carrying } from "./call-relay.ts";
import type { TransactionSender } from "./sender.ts";

interface VoteRow extends JobRow {
  account_id: string;
  proposal_id: string;
  voter: string;
  support: number;
  reason: string | null;
  signature: Hex;
}

interface ProposalActionRow extends JobRow {
  proposal_id: string;
  action: "queue" | "execute";
  calldata: Hex;
}

interface DelegationRow extends JobRow {
  delegator: string;
  delegatee: string;
  delegation_nonce: string;
  expiry: string;
  signature: { v: number; r: Hex; s: Hex };
}

/** The governor's ProposalState values a queue or an execute has made. */
const QUEUED = 5;
const EXECUTED = 7;

export interface GovernanceRelayOptions {
  /** Blocks on top of a vote's or delegation's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a job is failed. */
  maxAttempts: number;
  /** governance.vote.confirmed to the account that relayed the ballot. */
  compliance?: ComplianceService;
}

export class GovernanceRelay {
  readonly #relay: CallRelay;
  readonly #votes: CallKind<VoteRow, { weight?: bigint }>;
  readonly #delegations: CallKind<DelegationRow, object>;
  readonly #proposalActions: CallKind<ProposalActionRow, { eta?: bigint }>;

  constructor(db: Database, gov: GovernanceChain, sender: TransactionSender, options: GovernanceRelayOptions) {
    const compliance = options.compliance;
    this.#relay = new CallRelay(db, gov.chain, sender, { ...options, onEvents: () => compliance?.queued() });
    this.#votes = {
      rows: voteRows,
      what: "vote",
      to: gov.governor,
      encode: (v) =>
        v.reason === null
          ? encodeFunctionData({
              abi: stableGovernorAbi,
              functionName: "castVoteBySig",
              args: [BigInt(v.proposal_id), v.support, v.voter as Address, v.signature],
            })
          : encodeFunctionData({
              abi: stableGovernorAbi,
              functionName: "castVoteWithReasonAndParamsBySig",
              args: [BigInt(v.proposal_id), v.support, v.voter as Address, v.reason, "0x", v.signature],
            }),
      used: (v) =>
        gov.client.readContract({
          address: gov.governor,
          abi: stableGovernorAbi,
          functionName: "hasVoted",
          args: [BigInt(v.proposal_id), v.voter as Address],
        }),
      landed: async (v, data) => {
        const options = {
          address: gov.governor,
          abi: stableGovernorAbi,
          args: { voter: v.voter as Address },
          fromBlock: gov.startBlock,
          strict: true,
        } as const;
        const events = [
          ...(await gov.client.getContractEvents({ ...options, eventName: "VoteCast" })),
          ...(await gov.client.getContractEvents({ ...options, eventName: "VoteCastWithParams" })),
        ].filter((e) => e.args.proposalId === BigInt(v.proposal_id));
        const hash = await carrying(
          gov.client,
          gov.governor,
          data,
          events.map((e) => e.transactionHash),
        );
        const event = events.find((e) => e.transactionHash === hash);
        return event
          ? { txHash: event.transactionHash, blockNumber: event.blockNumber, facts: { weight: event.args.weight } }
          : undefined;
      },
      usedFailure: (v) => ({
        code: "already_voted",
        reason: `${v.voter} voted on proposal ${v.proposal_id} by another transaction first; a voter votes once.`,
      }),
      fromLogs: (logs) => {
        const [event] = [
          ...parseEventLogs({ abi: stableGovernorAbi, logs, eventName: "VoteCast" }),
          ...parseEventLogs({ abi: stableGovernorAbi, logs, eventName: "VoteCastWithParams" }),
        ];
        return { weight: event?.args.weight };
      },
      columns: ({ weight }) => (weight === undefined ? {} : { weight: weight.toString() }),
      confirmed: async (tx, v, { txHash, blockNumber, facts: { weight } }) => {
        await compliance?.emitIn(tx, v.account_id, "governance.vote.confirmed", {
          voteId: v.id,
          proposalId: v.proposal_id,
          voter: v.voter,
          support: SUPPORT[v.support],
          weight: weight === undefined ? null : formatUnits(weight, 18),
          reason: v.reason,
          txHash,
          blockNumber: Number(blockNumber),
        });
      },
    };
    this.#delegations = {
      rows: delegationRows,
      what: "delegation",
      to: gov.token,
      encode: (d) =>
        encodeFunctionData({
          abi: governanceTokenAbi,
          functionName: "delegateBySig",
          args: [
            d.delegatee as Address,
            BigInt(d.delegation_nonce),
            BigInt(d.expiry),
            d.signature.v,
            d.signature.r,
            d.signature.s,
          ],
        }),
      used: async (d) =>
        (await gov.client.readContract({
          address: gov.token,
          abi: governanceTokenAbi,
          functionName: "nonces",
          args: [d.delegator as Address],
        })) > BigInt(d.delegation_nonce),
      landed: async (d, data) => {
        const events = await gov.client.getContractEvents({
          address: gov.token,
          abi: governanceTokenAbi,
          eventName: "DelegateChanged",
          args: { delegator: d.delegator as Address },
          fromBlock: gov.tokenStartBlock,
          strict: true,
        });
        const hash = await carrying(
          gov.client,
          gov.token,
          data,
          events.map((e) => e.transactionHash),
        );
        const event = events.find((e) => e.transactionHash === hash);
        return event ? { txHash: event.transactionHash, blockNumber: event.blockNumber, facts: {} } : undefined;
      },
      usedFailure: (d) => ({
        code: "nonce_used",
        reason: `Another signature of ${d.delegator} used its nonce ${d.delegation_nonce} on the governance token first; sign again.`,
      }),
      fromLogs: () => ({}),
    };
    const governor = { address: gov.governor, abi: stableGovernorAbi } as const;
    const eventOf = (a: ProposalActionRow) => (a.action === "queue" ? "ProposalQueued" : "ProposalExecuted");
    this.#proposalActions = {
      rows: proposalActionRows,
      what: "proposal's queue or execute",
      to: gov.governor,
      encode: (a) => a.calldata,
      // Queued (or executed) already, by this relay's transaction or anyone's.
      used: async (a) => {
        const state = await gov.client.readContract({
          ...governor,
          functionName: "state",
          args: [BigInt(a.proposal_id)],
        });
        return a.action === "queue" ? state === QUEUED || state === EXECUTED : state === EXECUTED;
      },
      // Whoever sent it, the proposal is where it was asked to be: the transaction that put it there confirms it.
      landed: async (a) => {
        const events = await gov.client.getContractEvents({
          ...governor,
          eventName: eventOf(a),
          fromBlock: gov.startBlock,
          strict: true,
        });
        const event = events.find((e) => e.args.proposalId === BigInt(a.proposal_id));
        if (!event) return undefined;
        const eta = "etaSeconds" in event.args ? (event.args.etaSeconds as bigint) : undefined;
        return { txHash: event.transactionHash, blockNumber: event.blockNumber, facts: { eta } };
      },
      usedFailure: (a) => ({
        code: a.action === "queue" ? "proposal_already_queued" : "proposal_already_executed",
        reason: `Proposal ${a.proposal_id} was ${a.action === "queue" ? "queued" : "executed"} by another transaction.`,
      }),
      fromLogs: (logs, a) => {
        const [queued] = parseEventLogs({ abi: stableGovernorAbi, logs, eventName: "ProposalQueued" }).filter(
          (e) => e.args.proposalId === BigInt(a.proposal_id),
        );
        return { eta: queued?.args.etaSeconds };
      },
      columns: ({ eta }) => (eta === undefined ? {} : { eta: eta.toString() }),
    };
  }

  /** Follows submitted jobs, then submits queued ones: votes first, as they have deadlines. */
  async pass(): Promise<void> {
    await this.#relay.pass(this.#votes);
    await this.#relay.pass(this.#delegations);
    await this.#relay.pass(this.#proposalActions);
  }
}
