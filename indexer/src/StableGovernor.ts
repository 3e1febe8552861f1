import { type Context, ponder } from "ponder:registry";
import { proposal, vote } from "ponder:schema";
import { governanceTokenAbi, stableGovernorAbi } from "@zsd/sdk/abis";

ponder.on("StableGovernor:ProposalCreated", async ({ event, context }) => {
  const { proposalId, proposer, targets, values, calldatas, voteStart, voteEnd, description } = event.args;
  const governor = event.log.address;
  // The quorum at the snapshot cannot be read before voteStart; the
  // governance token has a fixed supply, so its supply now is the supply then.
  const [token, numerator, denominator] = await Promise.all([
    context.client.readContract({ abi: stableGovernorAbi, address: governor, functionName: "token" }),
    context.client.readContract({ abi: stableGovernorAbi, address: governor, functionName: "quorumNumerator" }),
    context.client.readContract({ abi: stableGovernorAbi, address: governor, functionName: "quorumDenominator" }),
  ]);
  const supply = await context.client.readContract({
    abi: governanceTokenAbi,
    address: token,
    functionName: "totalSupply",
  });
  await context.db.insert(proposal).values({
    id: proposalId,
    proposer,
    description,
    targets: [...targets],
    values: [...values],
    calldatas: [...calldatas],
    voteStart,
    voteEnd,
    quorum: (supply * numerator) / denominator,
    forVotes: 0n,
    againstVotes: 0n,
    abstainVotes: 0n,
    createdAtBlock: event.block.number,
    txHash: event.transaction.hash,
  });
});

interface CastVote {
  args: { voter: `0x${string}`; proposalId: bigint; support: number; weight: bigint; reason: string };
  block: { number: bigint };
  transaction: { hash: `0x${string}` };
}

async function recordVote(context: Context, event: CastVote) {
  const { voter, proposalId, support, weight, reason } = event.args;
  await context.db.insert(vote).values({
    id: `${proposalId}-${voter.toLowerCase()}`,
    proposalId,
    voter,
    support,
    weight,
    reason,
    blockNumber: event.block.number,
    txHash: event.transaction.hash,
  });
  await context.db.update(proposal, { id: proposalId }).set((p) => ({
    againstVotes: p.againstVotes + (support === 0 ? weight : 0n),
    forVotes: p.forVotes + (support === 1 ? weight : 0n),
    abstainVotes: p.abstainVotes + (support === 2 ? weight : 0n),
  }));
}

ponder.on("StableGovernor:VoteCast", ({ event, context }) => recordVote(context, event));
ponder.on("StableGovernor:VoteCastWithParams", ({ event, context }) => recordVote(context, event));

ponder.on("StableGovernor:ProposalQueued", async ({ event, context }) => {
  await context.db
    .update(proposal, { id: event.args.proposalId })
    .set({ eta: event.args.etaSeconds, queuedAt: event.block.timestamp });
});

ponder.on("StableGovernor:ProposalExecuted", async ({ event, context }) => {
  await context.db.update(proposal, { id: event.args.proposalId }).set({ executedAt: event.block.timestamp });
});

ponder.on("StableGovernor:ProposalCanceled", async ({ event, context }) => {
  await context.db.update(proposal, { id: event.args.proposalId }).set({ canceledAt: event.block.timestamp });
});
