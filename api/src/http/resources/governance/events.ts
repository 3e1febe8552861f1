// What each governance event's `data` holds (the webhook payloads of
// workers/relay/governance-events.ts and workers/relay/governance-relay.ts), merged into the
// document's webhooks by ../agents/events.ts.
import { z } from "zod";
import { SUPPORT } from "../../../domain/governance/governance.ts";

const proposalId = z
  .string()
  .regex(/^\d{1,78}$/, "a decimal proposal id")
  .describe("The governor's proposal id");
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an EVM address");
const at = {
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  blockNumber: z.number().int().nonnegative(),
};

export const GOVERNANCE_EVENT_PAYLOADS = {
  "governance.proposal.created": z.strictObject({
    proposalId,
    proposer: evmAddress,
    title: z.string().describe("The description's first line"),
    voteStart: z.number().int().describe("The snapshot block"),
    voteEnd: z.number().int().describe("The last block votes are taken in"),
    calls: z.array(
      z.strictObject({
        target: evmAddress,
        value: z.string().regex(/^\d+(\.\d+)?$/),
        summary: z.string().nullable().describe("The call in words, where the target is one of our contracts"),
      }),
    ),
    ...at,
  }),
  "governance.proposal.queued": z.strictObject({
    proposalId,
    eta: z.iso.datetime().describe("When the timelock lets it be executed"),
    ...at,
  }),
  "governance.proposal.executed": z.strictObject({ proposalId, ...at }),
  "governance.vote.confirmed": z.strictObject({
    voteId: z.string().regex(/^vote_[0-9A-Za-z]{20}$/),
    proposalId,
    voter: evmAddress,
    support: z.enum(SUPPORT),
    weight: z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .nullable()
      .describe("Votes counted, in governance tokens"),
    reason: z.string().nullable(),
    ...at,
  }),
};

export const GOVERNANCE_EVENT_SUMMARIES = {
  "governance.proposal.created": "A governance proposal was made on-chain (told to every account that subscribes)",
  "governance.proposal.queued": "A proposal passed and was queued in the timelock",
  "governance.proposal.executed": "A queued proposal was executed: its calls took effect",
  "governance.vote.confirmed": "A ballot this account relayed was counted on-chain",
};

const PROPOSAL = "74019306411566373837349962298232125412312542812218536178011395722391536384018";
const TX = "0x3f7c2a9e1b4d6f8a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a";

export const GOVERNANCE_EVENT_EXAMPLES = {
  "governance.proposal.created": {
    proposalId: PROPOSAL,
    proposer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
    title: "Raise the minimum collateral ratio to 170%",
    voteStart: 1281,
    voteEnd: 1301,
    calls: [
      {
        target: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
        value: "0",
        summary: "PositionManager.setMinCollateralRatio(17000)",
      },
    ],
    txHash: TX,
    blockNumber: 1280,
  },
  "governance.proposal.queued": {
    proposalId: PROPOSAL,
    eta: "2026-03-02T10:21:00.000Z",
    txHash: TX,
    blockNumber: 1303,
  },
  "governance.proposal.executed": { proposalId: PROPOSAL, txHash: TX, blockNumber: 1310 },
  "governance.vote.confirmed": {
    voteId: "vote_6Tq1mZ8kP3xW5nB2cR7v",
    proposalId: PROPOSAL,
    voter: "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
    support: "for",
    weight: "300000",
    reason: null,
    txHash: TX,
    blockNumber: 1290,
  },
} satisfies { [T in keyof typeof GOVERNANCE_EVENT_PAYLOADS]: z.input<(typeof GOVERNANCE_EVENT_PAYLOADS)[T]> };
