import type { GovernanceService } from "../../../domain/governance/governance.ts";
import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { problems } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";
import {
  delegationBody,
  delegationIdParams,
  delegationSchema,
  governanceSchema,
  holderParams,
  holderSchema,
  proposalDetailSchema,
  proposalListSchema,
  proposalActionIdParams,
  proposalActionSchema,
  proposalParams,
  proposalsQuery,
  voteBody,
  voteIdParams,
  voteSchema,
  votesListSchema,
  votesQuery,
} from "./schema.ts";

const TAG = "Governance";
const PROPOSAL_ID = "74019306411566373837349962298232125412312542812218536178011395722391536384018";
const ALICE = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc";
const TX = "0x3f7c2a9e1b4d6f8a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a";
const SIGNATURE = `0x${"5f".repeat(64)}1b`;
const VOTE = {
  voter: ALICE,
  support: "for",
  weight: "300000",
  reason: "",
  blockNumber: 1290,
  txHash: TX,
};
const PROPOSAL = {
  object: "proposal",
  id: PROPOSAL_ID,
  proposer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  title: "Raise the minimum collateral ratio to 170%",
  description: "Raise the minimum collateral ratio to 170%\n\nZEC's volatility rose this quarter.",
  state: "active",
  calls: [
    {
      target: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
      value: "0",
      calldata: "0x5b7f2a4e0000000000000000000000000000000000000000000000000000000000004268",
      contract: "PositionManager",
      signature: "setMinCollateralRatio(uint256)",
      summary: "PositionManager.setMinCollateralRatio(17000)",
    },
  ],
  tally: { for: "300000", against: "200000", abstain: "0" },
  quorum: "40000",
  quorumReached: true,
  start: { block: 1281, time: "2026-03-02T10:15:00.000Z", estimated: false },
  end: { block: 1301, time: "2026-03-02T10:19:00.000Z", estimated: true },
  eta: null,
  queuedAt: null,
  executedAt: null,
  canceledAt: null,
  createdAtBlock: 1280,
  txHash: "0x9a1f3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a",
};
const EXAMPLE_VOTE = {
  object: "vote",
  voteId: "vote_6Tq1mZ8kP3xW5nB2cR7v",
  status: "confirmed",
  proposalId: PROPOSAL_ID,
  voter: ALICE,
  support: "for",
  weight: "300000",
  reason: null,
  txHash: TX,
  blockNumber: 1290,
  failureCode: null,
  failureReason: null,
  createdAt: "2026-03-02T10:16:00.000Z",
  updatedAt: "2026-03-02T10:16:02.000Z",
};
const EXAMPLE_DELEGATION = {
  object: "delegation",
  delegationId: "dlg_2Vb7nQ4xK9mT1zR6pW3s",
  status: "confirmed",
  delegator: ALICE,
  delegatee: ALICE,
  nonce: "0",
  expiry: "2026-03-02T11:15:00.000Z",
  txHash: TX,
  blockNumber: 1270,
  failureCode: null,
  failureReason: null,
  createdAt: "2026-03-02T10:14:00.000Z",
  updatedAt: "2026-03-02T10:14:02.000Z",
};

const EXAMPLE_ACTION = {
  object: "proposal_action",
  actionId: "gact_8Hc2vN5qR1xT7mK4pZ9w",
  action: "queue",
  status: "confirmed",
  proposalId: PROPOSAL_ID,
  eta: "2026-03-02T10:21:00.000Z",
  txHash: TX,
  blockNumber: 1303,
  failureCode: null,
  failureReason: null,
  createdAt: "2026-03-02T10:19:10.000Z",
  updatedAt: "2026-03-02T10:19:12.000Z",
};

/** Proposals from the indexer; gasless votes, delegations, queues and executes through the relay worker. */
export function governanceRoutes(governance: GovernanceService): AnyRoute[] {
  const accountOf = (res: { locals: Record<string, unknown> }) => (res.locals.apiKey as ApiKey).accountId;
  return [
    route({
      method: "get",
      path: "/governance",
      operationId: "getGovernance",
      summary: "The governor's parameters and its proposals, newest first",
      tag: TAG,
      auth: true,
      query: proposalsQuery,
      responses: {
        200: {
          description: "Parameters and a page of proposals",
          schema: governanceSchema,
          example: {
            object: "list",
            data: [PROPOSAL],
            hasMore: false,
            parameters: {
              governor: "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9",
              token: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
              timelock: "0x0165878A594ca255338adfa4d48449f69242Eb8F",
              votingDelayBlocks: 1,
              votingPeriodBlocks: 20,
              proposalThreshold: "0",
              quorum: "40000",
              quorumPercent: "4",
              timelockDelaySeconds: 60,
            },
          },
        },
      },
      problems: ["resource_not_found", "upstream_unavailable"],
      handler: async ({ query }) => {
        const [page, parameters] = await Promise.all([governance.listProposals(query), governance.parameters()]);
        return { status: 200, body: { object: "list", ...page, parameters } };
      },
    }),
    route({
      method: "get",
      path: "/governance/proposals",
      operationId: "listProposals",
      summary: "Proposals newest first, optionally in one state",
      tag: TAG,
      auth: true,
      query: proposalsQuery,
      responses: {
        200: {
          description: "A page of proposals",
          schema: proposalListSchema,
          example: { object: "list", data: [PROPOSAL], hasMore: false },
        },
      },
      problems: ["not_found", "resource_not_found", "upstream_unavailable"],
      handler: async ({ query }, req) => {
        // "/v1/governance/proposals/" is a proposal's path with its id left out (Express would take it for this one).
        const path = req.originalUrl.split("?")[0]!;
        if (path.endsWith("/")) throw problems.notFound(path);
        return { status: 200, body: { object: "list", ...(await governance.listProposals(query)) } };
      },
    }),
    route({
      method: "get",
      path: "/governance/proposals/:proposalId",
      operationId: "getProposal",
      summary: "A proposal: its calls in words, state, tallies, quorum, times and its first votes",
      tag: TAG,
      auth: true,
      params: proposalParams,
      responses: {
        200: {
          description: "The proposal",
          schema: proposalDetailSchema,
          example: { ...PROPOSAL, votes: { object: "list", data: [VOTE], hasMore: false } },
        },
      },
      problems: ["resource_not_found", "upstream_unavailable"],
      handler: async ({ params }) => ({
        status: 200,
        body: await governance.proposal(params.proposalId, { limit: 20 }),
      }),
    }),
    route({
      method: "get",
      path: "/governance/proposals/:proposalId/votes",
      operationId: "listProposalVotes",
      summary: "A proposal's votes in the order they were cast",
      tag: TAG,
      auth: true,
      params: proposalParams,
      query: votesQuery,
      responses: {
        200: {
          description: "A page of votes",
          schema: votesListSchema,
          example: { object: "list", data: [VOTE], hasMore: false },
        },
      },
      problems: ["resource_not_found", "upstream_unavailable"],
      handler: async ({ params, query }) => ({
        status: 200,
        body: await governance.votes(params.proposalId, query),
      }),
    }),
    ...(["queue", "execute"] as const).map((action) =>
      route({
        method: "post",
        path: `/governance/proposals/:proposalId/${action}`,
        operationId: action === "queue" ? "queueProposal" : "executeProposal",
        summary:
          action === "queue"
            ? "Queue a succeeded proposal in the timelock (the governor's queue, gas paid): checked now, answered 202"
            : "Execute a queued proposal whose timelock delay is over (the governor's execute, gas paid): answered 202",
        tag: TAG,
        auth: true,
        params: proposalParams,
        responses: {
          202: {
            description: "Queued; follow it with GET /v1/governance/actions/{actionId}",
            schema: proposalActionSchema,
            example: {
              ...EXAMPLE_ACTION,
              action,
              status: "queued",
              eta: null,
              txHash: null,
              blockNumber: null,
              updatedAt: EXAMPLE_ACTION.createdAt,
            },
          },
        },
        problems: [
          "resource_not_found",
          action === "queue" ? "proposal_not_succeeded" : "proposal_not_ready",
          "proposal_action_pending",
          "upstream_unavailable",
        ],
        handler: async ({ params }, _req, res) => ({
          status: 202,
          body: await governance.submitProposalAction(accountOf(res), params.proposalId, action),
        }),
      }),
    ),
    route({
      method: "get",
      path: "/governance/actions/:actionId",
      operationId: "getProposalAction",
      summary: "A relayed queue or execute of a proposal: queued → submitted → confirmed | failed",
      tag: TAG,
      auth: true,
      params: proposalActionIdParams,
      responses: { 200: { description: "The action", schema: proposalActionSchema, example: EXAMPLE_ACTION } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await governance.proposalAction(accountOf(res), params.actionId),
      }),
    }),
    route({
      method: "get",
      path: "/governance/holders/:address",
      operationId: "getGovernanceHolder",
      summary: "A holder's tokens, votes and delegate, and what its wallet signs ballots and delegations with",
      tag: TAG,
      auth: true,
      params: holderParams,
      responses: {
        200: {
          description: "The holder now",
          schema: holderSchema,
          example: {
            object: "governance_holder",
            address: ALICE,
            balance: "300000",
            votes: "300000",
            delegate: ALICE,
            delegationNonce: "1",
            domains: {
              governor: {
                name: "ZSD Governor",
                version: "1",
                chainId: 31337,
                verifyingContract: "0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9",
              },
              token: {
                name: "ZSD Governance",
                version: "1",
                chainId: 31337,
                verifyingContract: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
              },
            },
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ params }) => ({ status: 200, body: await governance.holder(params.address) }),
    }),
    route({
      method: "post",
      path: "/governance/votes",
      operationId: "castVote",
      summary: "Relay a signed ballot (castVoteBySig): checked now, sent by the relay worker, answered 202",
      tag: TAG,
      auth: true,
      body: voteBody,
      requestExamples: {
        ballot: {
          summary: "A ballot signed at the nonce keyed by its proposal",
          value: { proposalId: PROPOSAL_ID, support: "for", voter: ALICE, signature: SIGNATURE },
        },
        reason: {
          summary: "With a reason (an ExtendedBallot signature)",
          value: {
            proposalId: PROPOSAL_ID,
            support: "against",
            voter: ALICE,
            signature: SIGNATURE,
            reason: "Too soon after the last change.",
          },
        },
      },
      responses: {
        202: {
          description: "Queued; follow it with GET /v1/governance/votes/{voteId}",
          schema: voteSchema,
          example: { ...EXAMPLE_VOTE, status: "queued", txHash: null, blockNumber: null },
        },
      },
      problems: [
        "resource_not_found",
        "proposal_not_active",
        "already_voted",
        "no_voting_power",
        "ballot_signature_invalid",
        "nonce_used",
        "nonce_invalid",
        "upstream_unavailable",
      ],
      handler: async ({ body }, _req, res) => ({
        status: 202,
        body: await governance.submitVote(accountOf(res), body),
      }),
    }),
    route({
      method: "get",
      path: "/governance/votes/:voteId",
      operationId: "getVote",
      summary: "A relayed vote: queued → submitted → confirmed | failed, with its transaction",
      tag: TAG,
      auth: true,
      params: voteIdParams,
      responses: { 200: { description: "The vote", schema: voteSchema, example: EXAMPLE_VOTE } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await governance.vote(accountOf(res), params.voteId),
      }),
    }),
    route({
      method: "post",
      path: "/governance/delegations",
      operationId: "delegate",
      summary: "Relay a signed delegation (delegateBySig) so that a holder's tokens count as votes, gas paid",
      tag: TAG,
      auth: true,
      body: delegationBody,
      requestExamples: {
        self: {
          summary: "A holder delegates to itself, to vote in person",
          value: { delegatee: ALICE, delegator: ALICE, nonce: "0", expiry: 1772450100, signature: SIGNATURE },
        },
      },
      responses: {
        202: {
          description: "Queued; follow it with GET /v1/governance/delegations/{delegationId}",
          schema: delegationSchema,
          example: { ...EXAMPLE_DELEGATION, status: "queued", txHash: null, blockNumber: null },
        },
      },
      problems: [
        "delegation_signature_invalid",
        "delegation_expired",
        "nonce_used",
        "nonce_invalid",
        "delegation_limit_reached",
        "upstream_unavailable",
      ],
      handler: async ({ body }, _req, res) => ({
        status: 202,
        body: await governance.submitDelegation(accountOf(res), body),
      }),
    }),
    route({
      method: "get",
      path: "/governance/delegations/:delegationId",
      operationId: "getDelegation",
      summary: "A relayed delegation: queued → submitted → confirmed | failed",
      tag: TAG,
      auth: true,
      params: delegationIdParams,
      responses: { 200: { description: "The delegation", schema: delegationSchema, example: EXAMPLE_DELEGATION } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await governance.delegation(accountOf(res), params.delegationId),
      }),
    }),
  ];
}
