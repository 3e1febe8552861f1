// The members a problem may carry beyond the RFC 9457 ones, and the shape of
// a catalog entry: shared by problem-catalog.ts and the files it spreads in.

type JsonSchema = Record<string, unknown>;

/** Members a problem carries beyond type, title, status, detail, code and requestId. */
export const PROBLEM_FIELDS = {
  errors: {
    description: "The request's fields that failed, each with what it must be",
    schema: {
      type: "array",
      items: {
        type: "object",
        required: ["field", "message"],
        properties: {
          field: { type: "string", description: "body.…, query.…, params.… or header.…" },
          message: { type: "string" },
        },
      },
    },
  },
  mintId: { description: "The mint concerned: follow it with GET /v1/mints/{mintId}", schema: { type: "string" } },
  proofId: {
    description: "The proof concerned (for proof_already_submitted, only when this account submitted it)",
    schema: { type: "string" },
  },
  failureCode: {
    description:
      "Why the mint failed: the contract's refusal in snake case (price_frozen, nullifier_already_spent, …) or the relay's own code",
    schema: { type: ["string", "null"] },
  },
  id: {
    description: "The request that took this signature or note (red_…, pact_…, wdr_…), when this account made it",
    schema: { type: "string" },
  },
  expected: {
    description: "This relay's terms a proof must bind (also in GET /v1/relay)",
    schema: {
      type: "object",
      required: ["relayer", "minimumFee"],
      properties: { relayer: { type: "string" }, minimumFee: { type: "string", description: "ZSD" } },
    },
  },
  limit: { description: "Active keys an account may hold per environment", schema: { type: "integer" } },
  keyEnvironment: { description: "The environment the key belongs to", schema: { enum: ["sandbox", "production"] } },
  baseUrl: {
    description:
      "Where that environment's API answers (when this server is told: PRODUCTION_BASE_URL, SANDBOX_BASE_URL)",
    schema: { type: "string" },
  },
  canonical: { description: "The address in the form to sign and send", schema: { type: "string" } },
  zecDue: { description: "ZEC this redemption would pay", schema: { type: "string" } },
  bound: {
    description:
      "The request field whose signed bound the call would breach (maxDebt, minZec, minSeizedZec, minSeizedValue, permit.minZec)",
    schema: { type: "string" },
  },
  minZec: { description: "The least ZEC the signer's bound accepts", schema: { type: "string" } },
  payoutId: { description: "The on-chain payout concerned", schema: { type: "string" } },
  minimumZec: { description: "The least ZEC a redemption may pay out", schema: { type: "string" } },
  priceAgeSeconds: { description: "Age of the oracle's ZEC/USD price", schema: { type: "integer" } },
  agentId: { description: "The agent that acted", schema: { type: "string" } },
  alertStatus: {
    description: "Where the alert stands now",
    schema: { enum: ["open", "in_review", "dismissed", "confirmed"] },
  },
  maxPriceAgeSeconds: { description: "The oldest price the contracts take", schema: { type: "integer" } },
  proposalState: {
    description: "Where the proposal stands now",
    schema: { enum: ["pending", "active", "canceled", "defeated", "succeeded", "queued", "expired", "executed"] },
  },
  voteId: { description: "The ballot of this voter already being relayed", schema: { type: "string" } },
  eta: {
    description: "When the timelock lets the proposal be executed (the chain's clock); null until it is queued",
    schema: { type: ["string", "null"], format: "date-time" },
  },
  actionId: {
    description: "The queue or execute of this proposal already being relayed, when this account asked for it",
    schema: { type: "string" },
  },
  delegationId: { description: "The delegation at this nonce already being relayed", schema: { type: "string" } },
  perDay: { description: "Gasless delegations an account may submit per 24 hours", schema: { type: "integer" } },
} as const satisfies Record<string, { description: string; schema: JsonSchema }>;

export type ProblemField = keyof typeof PROBLEM_FIELDS;

export interface ProblemEntry {
  status: number;
  title: string;
  /** What the client should understand and do. */
  meaning: string;
  fields?: readonly ProblemField[];
  /** A `detail` as the API writes it, and example values of the fields. */
  example: { detail: string } & Partial<Record<ProblemField, unknown>>;
  /** Sent in a header too. */
  headers?: readonly string[];
}
