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

export interface ProposalFacts {
  voteStart: bigint;
  voteEnd: bigint;
  quorum: bigint;
  forVotes: bigint;
  againstVotes: bigint;
  abstainVotes: bigint;
  eta: bigint | null;
  executedAt: bigint | null;
  canceledAt: bigint | null;
}

/**
 * Governor.state() (with GovernorTimelockControl and simple counting) from
 * indexed facts, at clock value `now` (the block number the chain would use).
 */
export function proposalState(p: ProposalFacts, now: bigint): ProposalState {
  if (p.executedAt !== null) return "executed";
  if (p.canceledAt !== null) return "canceled";
  if (p.voteStart >= now) return "pending";
  if (p.voteEnd >= now) return "active";
  const quorumReached = p.forVotes + p.abstainVotes >= p.quorum;
  if (!quorumReached || p.forVotes <= p.againstVotes) return "defeated";
  return p.eta === null ? "succeeded" : "queued";
}
