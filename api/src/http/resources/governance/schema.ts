import { z } from "zod";
import { PROPOSAL_ACTIONS, PROPOSAL_STATES, SUPPORT } from "../../../domain/governance/governance.ts";
import { evmAddress } from "../../schemas.ts";
import { prefixedId } from "../../formats.ts";

const UINT256_MAX = 2n ** 256n - 1n;
/** A uint256 in decimal, as the governor's ids and nonces are (0x-hex accepted and answered in decimal). */
const uint256 = (what: string) =>
  z
    .string()
    .regex(/^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/, { message: `${what}: a decimal integer`, abort: true })
    .refine((v) => BigInt(v) <= UINT256_MAX, `${what} exceeds 2^256 - 1`)
    .transform((v) => BigInt(v).toString());

const proposalId = uint256("a proposal id").describe("The governor's proposal id (decimal)");
const decimal = (description: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .describe(description);
const page = {
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("At most this many"),
};

export const proposalsQuery = z.strictObject({
  state: z.enum(PROPOSAL_STATES).optional().describe("Only proposals in this state now"),
  ...page,
  startingAfter: proposalId.optional().describe("The last proposal of the previous page"),
});

export const proposalParams = z.object({ proposalId });

export const votesQuery = z.strictObject({
  ...page,
  startingAfter: evmAddress.optional().describe("The voter of the previous page's last vote"),
});

export const voteIdParams = z.object({ voteId: prefixedId("vote", 20, "a vote id") });
export const delegationIdParams = z.object({
  delegationId: prefixedId("dlg", 20, "a delegation id"),
});
export const proposalActionIdParams = z.object({
  actionId: prefixedId("gact", 20, "a proposal action id"),
});

/** A signature as 0x hex: 65 bytes from a wallet (r, s, v), longer for a smart account's ERC-1271 check. */
const signature = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2}){64,1024}$/, "a 0x-hex signature (65 bytes from a wallet)")
  .transform((s) => s.toLowerCase() as `0x${string}`);

export const voteBody = z.strictObject({
  proposalId,
  support: z.enum(SUPPORT),
  voter: evmAddress.describe("The holder who signed the ballot"),
  signature: signature.describe(
    "The voter's EIP-712 signature of Ballot(proposalId, support, voter, nonce) on the governor's domain, or of " +
      "ExtendedBallot(proposalId, support, voter, nonce, reason, params = 0x) when a reason is given. Sign at " +
      "nonces(voter, uint192(proposalId)), the nonce keyed by this proposal, so that no other vote or signature " +
      "of the voter can invalidate it",
  ),
  reason: z.string().max(2000).optional().describe("Said on-chain with the vote (castVoteWithReasonAndParamsBySig)"),
  nonce: uint256("a nonce")
    .optional()
    .describe("The nonce signed at; by default the current keyed and sequential nonces are tried"),
});

export const delegationBody = z.strictObject({
  delegatee: evmAddress.describe("Who the delegator's votes go to (the delegator itself to vote in person)"),
  delegator: evmAddress.describe("The holder who signed"),
  nonce: uint256("a nonce").describe("The delegator's nonces() on the governance token"),
  expiry: z
    .number()
    .int()
    .min(0)
    .max(2 ** 40)
    .describe("Unix seconds after which the signature is void"),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte 0x-hex signature")
    .transform((s) => s.toLowerCase() as `0x${string}`)
    .describe("The delegator's EIP-712 signature of Delegation(delegatee, nonce, expiry) on the token's domain"),
});

const blockTime = z.object({
  block: z.number().int(),
  time: z.iso.datetime().describe("The block's time; estimated for a block not yet mined"),
  estimated: z.boolean(),
});

const call = z.object({
  target: z.string(),
  value: decimal("ETH sent with the call"),
  calldata: z.string(),
  contract: z.string().nullable().describe("Our contract at the target (PositionManager, …), if it is one"),
  signature: z.string().nullable().describe("The function called, e.g. setMinCollateralRatio(uint256)"),
  summary: z.string().nullable().describe("The call in words, e.g. PositionManager.setMinCollateralRatio(17000)"),
});

const proposalFields = {
  object: z.literal("proposal"),
  id: z.string().describe("The governor's proposal id (decimal)"),
  proposer: z.string(),
  title: z.string().describe("The description's first line"),
  description: z.string(),
  state: z.enum(PROPOSAL_STATES),
  calls: z.array(call).describe("Targets, values and calldata, each said in words where it can be"),
  tally: z
    .object({ for: decimal("Votes for"), against: decimal("Votes against"), abstain: decimal("Abstentions") })
    .describe("Votes cast, in governance tokens (ZSDG)"),
  quorum: decimal("Votes for and abstentions needed"),
  quorumReached: z.boolean(),
  start: blockTime.describe("The snapshot block: votes count as delegated then; voting opens after it"),
  end: blockTime.describe("The last block votes are taken in"),
  eta: z.iso.datetime().nullable().describe("When a queued proposal may be executed"),
  queuedAt: z.iso.datetime().nullable(),
  executedAt: z.iso.datetime().nullable(),
  canceledAt: z.iso.datetime().nullable(),
  createdAtBlock: z.number().int(),
  txHash: z.string(),
};

export const proposalSchema = z.object(proposalFields).meta({ id: "Proposal" });

export const voteCastSchema = z
  .object({
    voter: z.string(),
    support: z.enum(SUPPORT),
    weight: decimal("Votes, in governance tokens"),
    reason: z.string(),
    blockNumber: z.number().int(),
    txHash: z.string(),
  })
  .meta({ id: "VoteCast" });

export const votesListSchema = z
  .object({ object: z.literal("list"), data: z.array(voteCastSchema), hasMore: z.boolean() })
  .meta({ id: "VoteCastList" });

export const proposalDetailSchema = z
  .object({ ...proposalFields, votes: votesListSchema.describe("The first page of votes, in the order cast") })
  .meta({ id: "ProposalDetail" });

export const proposalListSchema = z
  .object({ object: z.literal("list"), data: z.array(proposalSchema), hasMore: z.boolean() })
  .meta({ id: "ProposalList" });

export const governanceSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(proposalSchema),
    hasMore: z.boolean(),
    parameters: z.object({
      governor: z.string(),
      token: z.string(),
      timelock: z.string(),
      votingDelayBlocks: z.number().int(),
      votingPeriodBlocks: z.number().int(),
      proposalThreshold: decimal("Votes a proposer needs"),
      quorum: decimal("Votes for and abstentions a proposal needs, now"),
      quorumPercent: decimal("The quorum as a percentage of the token's supply"),
      timelockDelaySeconds: z.number().int(),
    }),
  })
  .meta({ id: "Governance" });

const relayed = {
  status: z.enum(["queued", "submitted", "confirmed", "failed"]),
  txHash: z.string().nullable(),
  blockNumber: z.number().int().nullable(),
  failureCode: z
    .string()
    .nullable()
    .describe(
      "Why it failed: the contract's refusal in snake case (governor_invalid_signature, " +
        "governor_unexpected_proposal_state, …), already_voted or nonce_used (taken by another transaction first), " +
        "simulation_failed or transaction_reverted",
    ),
  failureReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const voteSchema = z
  .object({
    object: z.literal("vote"),
    voteId: z.string(),
    proposalId: z.string(),
    voter: z.string(),
    support: z.enum(SUPPORT),
    weight: decimal("The voter's votes at the snapshot (as counted once confirmed)"),
    reason: z.string().nullable(),
    ...relayed,
  })
  .meta({ id: "Vote" });

export const delegationSchema = z
  .object({
    object: z.literal("delegation"),
    delegationId: z.string(),
    delegator: z.string(),
    delegatee: z.string(),
    nonce: z.string(),
    expiry: z.iso.datetime(),
    ...relayed,
  })
  .meta({ id: "Delegation" });

export const proposalActionSchema = z
  .object({
    object: z.literal("proposal_action"),
    actionId: z.string(),
    action: z
      .enum(PROPOSAL_ACTIONS)
      .describe(
        "queue: puts a succeeded proposal in the timelock; execute: runs a queued one's calls once its delay is over",
      ),
    proposalId: z.string(),
    eta: z.iso
      .datetime()
      .nullable()
      .describe("A confirmed queue's: when the timelock lets the proposal be executed (the chain's clock)"),
    ...relayed,
    failureCode: z
      .string()
      .nullable()
      .describe(
        "Why it failed: the governor's refusal in snake case (governor_unexpected_proposal_state, …), " +
          "simulation_failed or transaction_reverted",
      ),
  })
  .meta({ id: "ProposalAction" });

export const holderParams = z.object({ address: evmAddress.describe("The holder's address") });

const eip712Domain = z.object({
  name: z.string(),
  version: z.string(),
  chainId: z.number().int(),
  verifyingContract: z.string(),
});

export const holderSchema = z
  .object({
    object: z.literal("governance_holder"),
    address: z.string(),
    balance: decimal("Governance tokens (ZSDG) held now"),
    votes: decimal("Votes now: the tokens delegated to this address, its own only once it delegated to itself"),
    delegate: z.string().nullable().describe("Where this holder's tokens count; null until it delegates"),
    delegationNonce: z
      .string()
      .describe("The token's nonces(address): the nonce its next Delegation(delegatee, nonce, expiry) signs"),
    domains: z
      .object({
        governor: eip712Domain.describe("Ballots sign on this domain"),
        token: eip712Domain.describe("Delegations sign on this domain"),
      })
      .describe("The contracts' EIP-712 domains (ERC-5267 eip712Domain())"),
  })
  .meta({ id: "GovernanceHolder" });
