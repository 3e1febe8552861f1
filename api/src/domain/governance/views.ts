// What the API answers for governance: votes and delegations relayed for an
// account as their rows stand, and the units and times they are shown in.
import { type Hex, formatUnits } from "viem";
import type { GovernanceChain } from "../../adapters/governance.ts";

/** OpenZeppelin Governor's ProposalState, in its enum order. */
export const PROPOSAL_STATES = [
  "pending",
  "active",
  "canceled",
  "defeated",
  "succeeded",
  "queued",
  "expired",
  "executed",
] as const;
export type ProposalState = (typeof PROPOSAL_STATES)[number];

/** GovernorCountingSimple's vote types. */
export const SUPPORT = ["against", "for", "abstain"] as const;
export type Support = (typeof SUPPORT)[number];

/** The governance token has 18 decimals, as ZSD. */
export const votes = (raw: string | bigint) => formatUnits(BigInt(raw), 18);
export const iso = (seconds: string | bigint | null) =>
  seconds === null ? null : new Date(Number(seconds) * 1000).toISOString();
export const dateIso = (d: Date | string) => new Date(d).toISOString();

export interface IndexedProposal {
  id: string;
  proposer: string;
  description: string;
  targets: string[];
  values: string[];
  calldatas: Hex[];
  voteStart: string;
  voteEnd: string;
  quorum: string;
  forVotes: string;
  againstVotes: string;
  abstainVotes: string;
  eta: string | null;
  queuedAt: string | null;
  executedAt: string | null;
  canceledAt: string | null;
  createdAtBlock: string;
  txHash: string;
  state: ProposalState;
}

export interface IndexedVote {
  voter: string;
  support: number;
  weight: string;
  reason: string;
  blockNumber: string;
  txHash: string;
}

/** The description's first line, without a Markdown heading's marks: what Tally and Snapshot show as the title. */
export function titleOf(description: string): string {
  const line = description.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  return line.replace(/^\s*#+\s*/, "").trim();
}

export interface VoteRow {
  id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  proposal_id: string;
  voter: string;
  support: number;
  reason: string | null;
  weight: string;
  tx_hash: string | null;
  block_number: string | number | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export interface DelegationRow {
  id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  delegator: string;
  delegatee: string;
  delegation_nonce: string;
  expiry: string;
  tx_hash: string | null;
  block_number: string | number | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function presentVote(row: VoteRow) {
  return {
    object: "vote" as const,
    voteId: row.id,
    status: row.status,
    proposalId: row.proposal_id,
    voter: row.voter,
    support: SUPPORT[row.support]!,
    weight: votes(row.weight),
    reason: row.reason,
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: dateIso(row.created_at),
    updatedAt: dateIso(row.updated_at),
  };
}

export function presentDelegation(row: DelegationRow) {
  return {
    object: "delegation" as const,
    delegationId: row.id,
    status: row.status,
    delegator: row.delegator,
    delegatee: row.delegatee,
    nonce: row.delegation_nonce,
    expiry: iso(row.expiry)!,
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: dateIso(row.created_at),
    updatedAt: dateIso(row.updated_at),
  };
}

/** What the relay may do for anyone with a proposal: queue it once it succeeded, execute it once the timelock allows. */
export const PROPOSAL_ACTIONS = ["queue", "execute"] as const;
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number];

export interface ProposalActionRow {
  id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  proposal_id: string;
  action: ProposalAction;
  eta: string | null;
  tx_hash: string | null;
  block_number: string | number | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function presentProposalAction(row: ProposalActionRow) {
  return {
    object: "proposal_action" as const,
    actionId: row.id,
    action: row.action,
    status: row.status,
    proposalId: row.proposal_id,
    eta: iso(row.eta),
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: dateIso(row.created_at),
    updatedAt: dateIso(row.updated_at),
  };
}

export function presentProposal(
  p: IndexedProposal,
  times: Map<bigint, { time: string; estimated: boolean }>,
  gov: GovernanceChain | undefined,
) {
  const quorumReached = BigInt(p.forVotes) + BigInt(p.abstainVotes) >= BigInt(p.quorum);
  const at = (block: string) => ({ block: Number(block), ...times.get(BigInt(block))! });
  return {
    object: "proposal" as const,
    id: p.id,
    proposer: p.proposer,
    title: titleOf(p.description),
    description: p.description,
    state: p.state,
    calls: p.targets.map((target, i) => {
      const value = BigInt(p.values[i] ?? "0");
      const calldata = p.calldatas[i] ?? "0x";
      const decoded = gov?.decode(target, value, calldata) ?? { contract: null, signature: null, summary: null };
      return { target, value: formatUnits(value, 18), calldata, ...decoded };
    }),
    tally: { for: votes(p.forVotes), against: votes(p.againstVotes), abstain: votes(p.abstainVotes) },
    quorum: votes(p.quorum),
    quorumReached,
    start: at(p.voteStart),
    end: at(p.voteEnd),
    eta: iso(p.eta),
    queuedAt: iso(p.queuedAt),
    executedAt: iso(p.executedAt),
    canceledAt: iso(p.canceledAt),
    createdAtBlock: Number(p.createdAtBlock),
    txHash: p.txHash,
  };
}

export function presentIndexedVote(v: IndexedVote) {
  return {
    voter: v.voter,
    support: SUPPORT[v.support] ?? "abstain",
    weight: votes(v.weight),
    reason: v.reason,
    blockNumber: Number(v.blockNumber),
    txHash: v.txHash,
  };
}
