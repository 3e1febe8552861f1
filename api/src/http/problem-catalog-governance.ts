// The problems of governance: proposals, ballots and delegations. Spread into
// PROBLEM_CATALOG (problem-catalog.ts); kept apart so that file stays readable.
import type { ProblemEntry } from "./problem-fields.ts";

export const GOVERNANCE_PROBLEMS = {
  proposal_not_active: {
    status: 409,
    title: "Proposal not active",
    meaning:
      "Votes are taken while a proposal is active (after its snapshot block, up to its end block); nothing was queued.",
    fields: ["proposalState"],
    example: { detail: "Proposal 7401… is pending; votes are taken while it is active.", proposalState: "pending" },
  },
  proposal_not_succeeded: {
    status: 409,
    title: "Proposal not succeeded",
    meaning:
      "A proposal is queued once it has succeeded: voting over, with a quorum and more votes for than against. One " +
      "still being voted on can be queued after its end block; nothing was queued.",
    fields: ["proposalState"],
    example: {
      detail:
        "Proposal 7401… is active; voting ends after block 1301, and a proposal that then has a quorum and more " +
        "votes for than against is queued.",
      proposalState: "active",
    },
  },
  proposal_not_ready: {
    status: 409,
    title: "Proposal not ready",
    meaning:
      "A proposal is executed once it is queued and the timelock's delay is over (`eta`, by the chain's clock): " +
      "queue a succeeded one first, wait for a queued one; nothing was queued.",
    fields: ["proposalState", "eta"],
    example: {
      detail:
        "Proposal 7401… is queued in the timelock until 2026-03-02T10:21:00.000Z by the chain's clock " +
        "(now 2026-03-02T10:20:05.000Z); execute it then.",
      proposalState: "queued",
      eta: "2026-03-02T10:21:00.000Z",
    },
  },
  proposal_action_pending: {
    status: 409,
    title: "Proposal action pending",
    meaning:
      "This relay is already sending the queue (or execute) of this proposal, for this account (`actionId`) or " +
      "another: follow that one, a second could only revert.",
    fields: ["actionId"],
    example: {
      detail: "The queue of proposal 7401… is already being relayed (gact_00000000000000000000).",
      actionId: "gact_00000000000000000000",
    },
  },
  already_voted: {
    status: 409,
    title: "Already voted",
    meaning:
      "The voter has voted on this proposal, on-chain or by a ballot this relay is sending (`voteId`): a voter votes once.",
    fields: ["voteId"],
    example: {
      detail: "A ballot of 0x9965… on proposal 7401… is already being relayed (vote_00000000000000000000).",
      voteId: "vote_00000000000000000000",
    },
  },
  no_voting_power: {
    status: 422,
    title: "No voting power",
    meaning:
      "The voter had no votes at the proposal's snapshot: governance tokens count once delegated (to oneself to vote " +
      "in person, POST /v1/governance/delegations), and only from the block after the delegation.",
    example: { detail: "0x9965… had no votes delegated to it at the proposal's snapshot (block 1281)." },
  },
  ballot_signature_invalid: {
    status: 422,
    title: "Invalid ballot signature",
    meaning:
      "The signature is not the voter's EIP-712 Ballot (or ExtendedBallot, with a reason) of this proposal and support " +
      "on the governor's domain at a nonce it takes: sign at nonces(voter, uint192(proposalId)).",
    example: {
      detail: "The signature is not 0x9965…'s EIP-712 Ballot for this proposal and support at its current nonce.",
    },
  },
  nonce_used: {
    status: 409,
    title: "Nonce already used",
    meaning:
      "The signature is made at a nonce another signature of the same account already used (or one this relay is " +
      "sending, `delegationId`): it can never go through. Sign again at the current nonce; ballots signed at the " +
      "nonce keyed by their proposal are never invalidated by other votes.",
    fields: ["delegationId"],
    example: {
      detail: "A delegation of 0x9965… at nonce 0 is already being relayed (dlg_00000000000000000000).",
      delegationId: "dlg_00000000000000000000",
    },
  },
  nonce_invalid: {
    status: 422,
    title: "Nonce not usable",
    meaning:
      "The signature is made at a nonce the contract does not take yet (ahead of the account's): sign at the current one.",
    example: { detail: "0x9965…'s nonce on the governance token is 0, not 3: sign at 0." },
  },
  delegation_signature_invalid: {
    status: 422,
    title: "Invalid delegation signature",
    meaning:
      "The signature is not the delegator's EIP-712 Delegation(delegatee, nonce, expiry) on the governance token's domain.",
    example: { detail: "The signature is not 0x9965…'s EIP-712 Delegation to 0x9965… at nonce 0 with this expiry." },
  },
  delegation_expired: {
    status: 422,
    title: "Delegation expired",
    meaning: "The delegation's expiry has passed by the chain's clock: sign again with a later one.",
    example: { detail: "The delegation expired at 2026-03-02T10:00:00.000Z by the chain's clock." },
  },
  delegation_limit_reached: {
    status: 409,
    title: "Delegation limit reached",
    meaning:
      "The account submitted GOVERNANCE_DELEGATIONS_PER_DAY gasless delegations in the last 24 hours (the relay pays " +
      "their gas): retry later, or delegate with the token's delegate() directly.",
    fields: ["perDay"],
    example: { detail: "This account submitted 20 delegations in the last 24 hours, the most allowed.", perDay: 20 },
  },
} as const satisfies Record<string, ProblemEntry>;
