// Every problem `code` the API answers, once: its status, its title, what it
// means for a client and the extension members it carries. The OpenAPI
// document, the /docs/problems page and the error handler's check of what a
// route answered all read this, so a code a client can meet is documented or
// the tests say so.
import type { ZcashAddressErrorCode } from "@zsd/sdk/zcash";
import { KEY_RESTRICTION_PROBLEMS } from "./problem-catalog-keys.ts";
import { AUTH_PROBLEMS } from "./problem-catalog-auth.ts";
import { problemType } from "./problems.ts";

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
      "Why the mint failed: the contract's refusal in snake case (stale_price, nullifier_already_spent, …) or the relay's own code",
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

const ADDRESS = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const RELAYER = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";

const address = (meaning: string, detail: string): ProblemEntry => ({
  status: 422,
  title: "Unusable withdrawal address",
  meaning: `${meaning} Nothing was burned; send a usable shielded address of this environment's network.`,
  fields: ["errors"],
  example: { detail, errors: [{ field: "body.sealedAddress", message: detail }] },
});

/** The codes of @zsd/sdk/zcash: a new one there fails the build until it is described here. */
const ZCASH_ADDRESS_PROBLEMS: Record<ZcashAddressErrorCode, ProblemEntry> = {
  transparent_address: address(
    "A transparent (t-) address: redemptions pay shielded addresses only.",
    "Transparent addresses cannot receive redemptions.",
  ),
  sprout_address: address("A Sprout address, which no wallet can pay any more.", "Sprout addresses are retired."),
  wrong_network: address(
    "An address of the other Zcash network (mainnet in sandbox, testnet in production).",
    "This is a mainnet address; this environment pays testnet addresses.",
  ),
  bad_checksum: address("The address's checksum fails: a typo.", "The address checksum does not match."),
  malformed_address: address("Not a Zcash address.", "Not a Sapling or Unified address."),
  no_shielded_receiver: address(
    "A Unified Address without a Sapling or Orchard receiver.",
    "The unified address has no shielded receiver.",
  ),
  unsupported_address: address(
    "A valid address custody's wallet cannot pay (a Revision 1 or over-long Unified Address).",
    "Custody cannot pay this kind of unified address.",
  ),
  invalid_receiver: address(
    "A Sapling or Orchard receiver no wallet can send to (an invalid diversifier or key).",
    "The Sapling receiver's diversifier is not valid.",
  ),
};

/** What a Zcash address a caller sends can meet: the wallet's codes, then a case the API adds. */
export const ZCASH_ADDRESS_PROBLEM_CODES = [
  ...(Object.keys(ZCASH_ADDRESS_PROBLEMS) as ZcashAddressErrorCode[]),
  "non_canonical_address",
] as const;

export const PROBLEM_CATALOG = {
  // Reading the request
  validation_failed: {
    status: 400,
    title: "Validation failed",
    meaning:
      "A field of the path, query, body or Idempotency-Key header is missing or out of range; `errors` says which.",
    fields: ["errors"],
    example: {
      detail: "The request has invalid fields.",
      errors: [{ field: "body.amount", message: "must be above 0" }],
    },
  },
  malformed_json: {
    status: 400,
    title: "Malformed JSON",
    meaning: "The body is not JSON.",
    example: { detail: "The request body is not valid JSON." },
  },
  malformed_body: {
    status: 400,
    title: "Malformed body",
    meaning: "The body could not be read: its length or Content-Encoding does not match what was sent.",
    example: { detail: "The request body could not be decoded (check its Content-Encoding)." },
  },
  malformed_path: {
    status: 400,
    title: "Malformed path",
    meaning: "A path segment has an invalid percent-encoding.",
    example: { detail: "The request path has an invalid percent-encoding." },
  },
  nesting_too_deep: {
    status: 400,
    title: "JSON nested too deeply",
    meaning: "The body nests objects or arrays more than 32 levels.",
    example: { detail: "The request body nests more than 32 levels." },
  },
  bad_request: {
    status: 400,
    title: "Bad request",
    meaning: "The server could not read the HTTP request.",
    example: { detail: "The server could not read this request." },
  },
  body_too_large: {
    status: 413,
    title: "Body too large",
    meaning: "The body exceeds BODY_LIMIT (100 kB by default).",
    example: { detail: "The request body exceeds 100kb." },
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    meaning: "Send bodies as application/json (UTF-8, optionally gzip, deflate or br).",
    example: { detail: "Send application/json, not text/plain." },
  },
  request_timeout: {
    status: 408,
    title: "Request timeout",
    meaning: "The request did not arrive within HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS; the connection is closed.",
    example: { detail: "The server could not read this HTTP request." },
  },
  uri_too_long: {
    status: 414,
    title: "URI too long",
    meaning: "The request line is longer than the server reads.",
    example: { detail: "The server could not read this HTTP request." },
  },
  headers_too_large: {
    status: 431,
    title: "Request header fields too large",
    meaning: "The request's headers are larger than the server reads.",
    example: { detail: "The server could not read this HTTP request." },
  },
  not_found: {
    status: 404,
    title: "Not found",
    meaning: "No operation has this path (sandbox operations do not exist in production).",
    example: { detail: "No route matches /v1/nowhere." },
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    meaning: "The path exists but not with this method; the Allow header lists those it has.",
    example: { detail: "PATCH is not allowed here." },
    headers: ["Allow"],
  },

  // Authentication and limits
  ...AUTH_PROBLEMS,
  ...KEY_RESTRICTION_PROBLEMS,
  rate_limited: {
    status: 429,
    title: "Too many requests",
    meaning:
      "The account's (or, before a key is known, the client address's) budget for this window is spent; retry after Retry-After seconds.",
    example: { detail: "Rate limit exceeded; retry in 12 s." },
    headers: ["Retry-After"],
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    meaning: "This Idempotency-Key was used with another body in the last 24 h: use a new key for a new request.",
    example: { detail: "This Idempotency-Key was used with a different request body." },
  },
  idempotency_request_in_progress: {
    status: 409,
    title: "Request in progress",
    meaning: "The first request with this Idempotency-Key is still running: retry after Retry-After to get its answer.",
    example: { detail: "A request with this Idempotency-Key is still being processed; retry shortly." },
    headers: ["Retry-After"],
  },

  // This server and its upstreams
  internal_error: {
    status: 500,
    title: "Internal error",
    meaning:
      "A fault on our side, logged with the requestId; retry later (a POST with the same Idempotency-Key is safe).",
    example: { detail: "Something went wrong on our side; retry later." },
  },
  upstream_unavailable: {
    status: 503,
    title: "Service unavailable",
    meaning:
      "The chain node, the database, the indexer or the wallet did not answer, or this server is not configured for the operation; nothing was done. Retry after Retry-After.",
    example: { detail: "The chain node is unavailable; retry shortly." },
    headers: ["Retry-After"],
  },
  price_stale: {
    status: 503,
    title: "Price stale",
    meaning:
      "The ZEC/USD oracle price is too old for the contracts to mint or redeem at; nothing was queued. Retry once the oracle is updated.",
    fields: ["priceAgeSeconds", "maxPriceAgeSeconds"],
    example: {
      detail: "The ZEC/USD price is 3,700 s old; mints need one under 3,600 s. Retry once the oracle is updated.",
      priceAgeSeconds: 3700,
      maxPriceAgeSeconds: 3600,
    },
    headers: ["Retry-After"],
  },
  resource_not_found: {
    status: 404,
    title: "Not found",
    meaning: "No such object in this account and environment (ids of other accounts are not found either).",
    example: { detail: "Mint mint_00000000000000000000 not found." },
  },

  // API keys
  key_limit_reached: {
    status: 409,
    title: "Key limit reached",
    meaning: "The account holds MAX_ACTIVE_KEYS active keys in this environment: revoke one first.",
    fields: ["limit"],
    example: {
      detail: "This account holds 20 active sandbox keys, the most allowed; revoke one first.",
      limit: 20,
    },
  },

  // Proofs
  binding_mismatch: {
    status: 422,
    title: "Binding mismatch",
    meaning:
      "The proof's binding hash is not that of this recipient, relayer, fee and amount on this chain's minter: prove again with the values you send.",
    example: { detail: "The proof was not made for this recipient, relayer, fee and amount on this minter." },
  },
  invalid_proof: {
    status: 422,
    title: "Invalid proof",
    meaning: "The proof does not verify against the collateral circuit.",
    example: { detail: "The proof does not verify against the collateral circuit." },
  },
  unknown_root: {
    status: 422,
    title: "Unknown root",
    meaning: "The proof is against a deposit-tree root the registry never had: prove against the current root.",
    example: { detail: "The proof's deposit-tree root was never recorded." },
  },
  root_expired: {
    status: 422,
    title: "Root expired",
    meaning:
      "The tree moved on too long ago for the minter to take a proof against that root: make a new proof of the same deposit (the old proof is rejected and frees the deposit).",
    fields: ["proofId"],
    example: {
      detail: "The deposit tree moved on too long ago: make a new proof of the deposit against the current root.",
      proofId: "prf_00000000000000000000",
    },
  },
  nullifier_spent: {
    status: 409,
    title: "Note already spent",
    meaning:
      "This deposit note was already spent on-chain (by a mint, a top-up or a withdrawal); it cannot be spent again.",
    example: { detail: "This deposit note's nullifier has already been spent." },
  },
  nullifier_claimed: {
    status: 409,
    title: "Deposit already claimed",
    meaning:
      "Another proof of the same deposit is waiting here to be minted: mint that one (or wait: it is freed if its root expires).",
    example: { detail: "Another pending proof already claims this deposit." },
  },
  proof_already_submitted: {
    status: 409,
    title: "Proof already submitted",
    meaning: "This exact proof was submitted before; `proofId` names it when this account submitted it.",
    fields: ["proofId"],
    example: { detail: "This proof was submitted before.", proofId: "prf_00000000000000000000" },
  },
  relayer_mismatch: {
    status: 422,
    title: "Proof made for another relayer",
    meaning:
      "The proof pays its fee to another relayer: prove again paying `expected.relayer`, or send it to that relay.",
    fields: ["expected"],
    example: {
      detail: `The proof pays its fee to ${ADDRESS}; this relay is ${RELAYER} (see GET /v1/relay).`,
      expected: { relayer: RELAYER, minimumFee: "0.5" },
    },
  },
  fee_below_minimum: {
    status: 422,
    title: "Fee below this relay's minimum",
    meaning: "The proof binds a fee below this relay's minimum: prove again with at least `expected.minimumFee`.",
    fields: ["expected"],
    example: {
      detail: "The proof binds a fee of 0.1 ZSD; this relay charges at least 0.5 ZSD (see GET /v1/relay).",
      expected: { relayer: RELAYER, minimumFee: "0.5" },
    },
  },

  // Mints
  unsupported_collateral: {
    status: 422,
    title: "Unsupported collateral",
    meaning: "collateralType is not ZEC, the only collateral.",
    example: { detail: "Only ZEC backs the stable token, not BTC." },
  },
  proof_mismatch: {
    status: 422,
    title: "Request does not match the proof",
    meaning:
      "The amount or recipient sent is not what the proof binds, or the proof pays its fee to another relayer: send what the proof binds.",
    example: { detail: "The proof binds 100.0 ZSD, not 90.0." },
  },
  proof_already_used: {
    status: 409,
    title: "Proof already used",
    meaning: "The proof already backs a mint (`mintId`, when known) or was rejected: one proof mints once.",
    fields: ["mintId"],
    example: { detail: "Proof prf_00000000000000000000 is consumed.", mintId: "mint_00000000000000000000" },
  },
  mint_failed: {
    status: 422,
    title: "Mint failed",
    meaning:
      "The mint was refused on-chain or by the relay; `failureCode` says why, `detail` in words. The proof is verified again if it can still mint.",
    fields: ["mintId", "failureCode"],
    example: {
      detail: "The ZEC/USD price is 3,700 s old; the contract needs one under 3,600 s.",
      mintId: "mint_00000000000000000000",
      failureCode: "stale_price",
    },
  },
  redemption_rejected: {
    status: 409,
    title: "Redemption rejected",
    meaning:
      "This very signature was refused by compliance review (`id`, to its account): it is not relayed again. " +
      "Nothing was burned by the API for it.",
    fields: ["id"],
    example: {
      detail:
        "A redemption the owner signed at nonce 3 was refused by compliance review; this signature is not relayed again.",
      id: "red_00000000000000000000",
    },
  },
  mint_would_revert: {
    status: 422,
    title: "The minter would refuse this mint",
    meaning:
      "Simulated before anything is queued, the mint would revert: `failureCode` names the contract's refusal " +
      "(insufficient_collateral_value at today's price, enforced_pause, invalid_proof, …), `detail` its figures. " +
      "Nothing was queued and the proof stays verified: mint it once the cause is gone.",
    fields: ["proofId", "failureCode"],
    example: {
      detail:
        "At the current ZEC/USD price the proven collateral floor is worth $120; this mint needs $150 at the minimum collateral ratio.",
      proofId: "prf_00000000000000000000",
      failureCode: "insufficient_collateral_value",
    },
  },
  mint_pending: {
    status: 504,
    title: "Mint still pending",
    meaning:
      "The mint was queued but not confirmed within MINT_WAIT_MS; it goes on. Poll GET /v1/mints/{mintId} (do not post again).",
    fields: ["mintId"],
    example: {
      detail: "Not confirmed within 30000 ms; poll GET /v1/mints/mint_00000000000000000000.",
      mintId: "mint_00000000000000000000",
    },
    headers: ["Retry-After"],
  },

  // Redemptions
  ...ZCASH_ADDRESS_PROBLEMS,
  non_canonical_address: {
    status: 422,
    title: "Address not in canonical form",
    meaning: "Seal the withdrawal address in lower case, as `canonical` shows (the SDKs' sealAddress does).",
    fields: ["canonical", "errors"],
    example: {
      detail: "Seal the withdrawal address in lower case.",
      canonical: "ztestsapling1…",
      errors: [{ field: "body.sealedAddress", message: "not in canonical (lower-case) form" }],
    },
  },
  unreadable_address: {
    status: 422,
    title: "Unreadable sealed address",
    meaning:
      "Custody cannot use the sealed address: it is sealed to a key custody does not hold or the Redemptions " +
      "contract no longer takes (rotated out), or for another owner, chain or contract, or it was altered, or " +
      "another payout already carries this very envelope (custody pays one once). Nothing was signed, queued or " +
      "burned; seal the address afresh to the key of GET /v1/relay (sealKey), for this payout's owner, on this chain.",
    fields: ["errors"],
    example: {
      detail:
        "The sealed address does not open: seal the address to the key of GET /v1/relay (sealKey 1) for owner " +
        "0x90F79bf6EB2c4f870365E785982E1f101E93b906 on chain 31337.",
      errors: [{ field: "body.sealedAddress", message: "does not open with custody's key for this owner" }],
    },
  },
  redemption_too_small: {
    status: 422,
    title: "Redemption too small",
    meaning: "The ZEC it would pay is below REDEMPTION_MIN_ZAT, less than a shielded payment costs: redeem more.",
    fields: ["zecDue", "minimumZec"],
    example: {
      detail: "This redemption pays 0.00001 ZEC; the least worth a shielded payment is 0.0001 ZEC.",
      zecDue: "0.00001",
      minimumZec: "0.0001",
    },
  },
  invalid_signature: {
    status: 422,
    title: "Invalid signature",
    meaning:
      "The permit is not the owner's EIP-712 signature of this amount, address, nonce and deadline: sign the terms of GET /v1/redemptions/terms.",
    example: {
      detail: "The permit is not the owner's signature of this redemption (amount, address, nonce, deadline).",
    },
  },
  expired_signature: {
    status: 422,
    title: "Expired signature",
    meaning: "The permit's deadline has passed by the chain's clock: sign again with a later deadline.",
    example: { detail: "The signature's deadline has passed." },
  },
  insufficient_balance: {
    status: 422,
    title: "Insufficient balance",
    meaning: "The owner holds less ZSD than the amount.",
    example: { detail: "The owner holds 10.0 ZSD." },
  },
  position_signature_invalid: {
    status: 422,
    title: "Invalid signature",
    meaning:
      "The signature is not the signer's EIP-712 Repay, WithdrawCollateral, Close or Liquidate of these terms at the " +
      "nonce GET /v1/positions/terms gives (the owner signs withdraw and close; the payer repay; the liquidator liquidate).",
    example: {
      detail: "The signature is not the position's owner's (0x2B5A…D6cF) EIP-712 Close of these terms at nonce 0.",
    },
  },
  position_action_would_revert: {
    status: 422,
    title: "The minter would refuse this",
    meaning:
      "Simulated before anything is queued, the action would revert: `failureCode` names the contract's refusal " +
      "(position_undercollateralized, position_not_liquidatable, position_not_open, erc20_insufficient_balance, " +
      "stale_price, …), `detail` its figures. Nothing was queued.",
    fields: ["failureCode"],
    example: {
      detail: "Position 7 would be worth $120, under the $150 the minimum ratio needs.",
      failureCode: "position_undercollateralized",
    },
  },
  position_action_already_submitted: {
    status: 409,
    title: "Already submitted",
    meaning:
      "This signature (its signer and nonce) is already being relayed, or this note already being spent: each goes through once. `id` names it when this account asked.",
    fields: ["id"],
    example: {
      detail: "This signature (its signer and nonce) is already being relayed.",
      id: "pact_00000000000000000000",
    },
  },
  withdrawal_would_revert: {
    status: 422,
    title: "The minter would refuse this",
    meaning:
      "Simulated before anything is queued, the note withdrawal would revert: `failureCode` names the contract's refusal.",
    fields: ["failureCode"],
    example: { detail: "The contract refused: EnforcedPause.", failureCode: "enforced_pause" },
  },
  withdrawal_already_submitted: {
    status: 409,
    title: "Already submitted",
    meaning:
      "This note is already being withdrawn through the relay. `id` names the withdrawal when this account asked.",
    fields: ["id"],
    example: { detail: "This note is already being spent through the relay.", id: "wdr_00000000000000000000" },
  },
  payout_too_small: {
    status: 422,
    title: "Payout too small",
    meaning:
      "ZEC paid to a Zcash address is below REDEMPTION_MIN_ZAT, less than a shielded payment costs: take more, or release into a note.",
    fields: ["minimumZec"],
    example: { detail: "A payout to a Zcash address carries at least 0.0001 ZEC.", minimumZec: "0.0001" },
  },
  payout_not_failed: {
    status: 409,
    title: "Payout not failed",
    meaning:
      "Only a failed payout, its ZEC held for the owner because custody could not pay it, can be redirected: this one " +
      "is still being paid, was paid, was already redirected, or (a redemption) was never burned. Nothing was queued.",
    example: {
      detail: "Payout 3 was paid: only a failed payout, its ZEC held for the owner, can be redirected.",
    },
  },
  payout_compliance_rejected: {
    status: 409,
    title: "Payout refused by compliance",
    meaning:
      "Compliance review refused this payout, so its ZEC is not paid to another address: the owner may redirect it " +
      "into a note (noteCommitment), where it stays in the pool, or ask the operator's compliance team to review " +
      "it. A redirect to an address made on-chain instead is held for review before it is paid. Nothing was queued.",
    fields: ["payoutId"],
    example: {
      detail:
        "Compliance review refused payout 3: its ZEC cannot be redirected to another address through this API (a " +
        "redirect made on-chain is held for review before it is paid). The owner may redirect it into a note " +
        "(noteCommitment), where it stays in the pool, or ask the operator's compliance team to review it.",
      payoutId: "3",
    },
  },
  redirect_signature_invalid: {
    status: 422,
    title: "Invalid signature",
    meaning:
      "The signature is not the payout owner's EIP-712 Redirect of this payout, destination and deadline at the owner's " +
      "nonce on the Redemptions contract (GET /v1/redemptions/terms): signed by another key, or over other terms. " +
      "Only the owner (who redeemed, or the position's or note's owner) may redirect. Nothing was queued.",
    example: {
      detail:
        "The signature recovers to 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, not payout 3's owner 0x90F79bf6EB2c4f870365E785982E1f101E93b906: only the owner may redirect it.",
    },
  },
  redirect_already_submitted: {
    status: 409,
    title: "Redirect already submitted",
    meaning:
      "This payout is already being redirected, or the signature's nonce was used: a payout is redirected once. " +
      "`id` names the redirect when this account made it.",
    fields: ["id"],
    example: { detail: "Payout 3 is already being redirected (submitted).", id: "rdr_00000000000000000000" },
  },
  redirect_would_revert: {
    status: 422,
    title: "The Redemptions contract would refuse this",
    meaning:
      "Simulated before anything is queued, the redirect would revert: `failureCode` names the contract's refusal " +
      "(payout_not_failed, invalid_redirect_signature, redirect_signature_expired, invalid_sealed_address, seal_key_retired, …). " +
      "Nothing was queued.",
    fields: ["failureCode"],
    example: {
      detail:
        "A redirect names exactly one destination: a Zcash address or a note commitment, not both and not neither.",
      failureCode: "invalid_redirect_destination",
    },
  },
  redemption_already_submitted: {
    status: 409,
    title: "Redemption already submitted",
    meaning:
      "This signed redemption was already submitted or went through on-chain: a signature redeems once. `id` names the request when this account made it.",
    fields: ["id"],
    example: {
      detail:
        "A redemption the owner signed at nonce 0 was already submitted and is being relayed; only one can go through.",
      id: "red_00000000000000000000",
    },
  },

  // Sandbox
  price_not_set: {
    status: 503,
    title: "Price not set",
    meaning: "The sandbox oracle did not take the price; retry shortly.",
    example: { detail: "The oracle did not take 42.5 USD; retry shortly." },
    headers: ["Retry-After"],
  },
  deposit_already_recorded: {
    status: 409,
    title: "Refused by the contract",
    meaning: "A deposit of this amount and note commitment is already in the tree: make a new note.",
    example: { detail: "The contract refused: DepositAlreadyRecorded." },
  },
  tree_full: {
    status: 409,
    title: "Refused by the contract",
    meaning: "The deposit tree holds all the leaves it can.",
    example: { detail: "The contract refused: TreeFull." },
  },
  access_control_unauthorized_account: {
    status: 409,
    title: "Refused by the contract",
    meaning: "This server's attestor key lacks the attestor role on the registry: an operator must grant it.",
    example: { detail: "The contract refused: AccessControlUnauthorizedAccount." },
  },

  // Compliance agents
  webhook_url_not_allowed: {
    status: 400,
    title: "Webhook URL not allowed",
    meaning:
      "The webhook URL may not receive events here: in production it must be https and resolve to public " +
      "addresses only (no loopback, private, link-local or other special address); the sandbox also allows " +
      "http and loopback. Nothing was registered or changed.",
    fields: ["errors"],
    example: {
      detail: "The webhook URL resolves to a private address (10.0.0.1), which is not allowed.",
      errors: [{ field: "body.webhookUrl", message: "resolves to a private address (10.0.0.1), which is not allowed" }],
    },
  },
  agent_limit_reached: {
    status: 409,
    title: "Agent limit reached",
    meaning: "The account holds the most agents allowed in this environment: delete one first.",
    fields: ["limit"],
    example: { detail: "This account holds 25 sandbox agents, the most allowed; delete one first.", limit: 25 },
  },
  agent_disabled: {
    status: 409,
    title: "Agent disabled",
    meaning:
      "The agent is disabled (by its owner, by a 410 from its endpoint, or after every attempt failed for days): " +
      "nothing is sent to it. Enable it (POST /v1/agents/{agentId} with enabled: true) first.",
    example: {
      detail:
        'Agent agt_00000000000000000000 is disabled; enable it (POST /v1/agents/agt_00000000000000000000 with {"enabled": true}) first.',
    },
  },
  screener_required: {
    status: 422,
    title: "Screener required",
    meaning:
      "Holding, releasing, rejecting and verdicts are for screener agents; this agent is an observer. " +
      "Change its role (POST /v1/agents/{agentId} with role: screener) or act with a screener.",
    fields: ["agentId"],
    example: {
      detail:
        "Agent agt_00000000000000000000 is an observer; only a screener agent may hold, release, reject or give verdicts.",
      agentId: "agt_00000000000000000000",
    },
  },
  not_holdable: {
    status: 409,
    title: "Cannot be held",
    meaning:
      "Only a queued mint, or a redemption whose burn or payout has not started, can be held: this one has moved on. " +
      "Raise the alert with action none.",
    example: {
      detail:
        "The mint mint_00000000000000000000 is confirmed; only a queued mint, or a redemption whose burn or payout has not started, can be held.",
    },
  },
  not_held: {
    status: 409,
    title: "Nothing held",
    meaning: "The alert's subject is not held (it was released or rejected already, or never held): nothing to decide.",
    example: { detail: "The mint mint_00000000000000000000 is not held (its hold was released)." },
  },
  alert_transition_invalid: {
    status: 409,
    title: "Alert cannot move so",
    meaning: "Alerts move open → in_review → dismissed | confirmed; a closed alert does not move again.",
    fields: ["alertStatus"],
    example: {
      detail: "The alert is dismissed; it can move to nothing (it is closed).",
      alertStatus: "dismissed",
    },
  },
  verdict_not_awaited: {
    status: 409,
    title: "No verdict awaited",
    meaning:
      "The mint, redemption or position action is not waiting for a verdict (screening is off, the verdict came already, or its timeout applied the default).",
    example: { detail: "The mint mint_00000000000000000000 is not waiting for a verdict (it is released)." },
  },
  // Governance
  proposal_not_active: {
    status: 409,
    title: "Proposal not active",
    meaning:
      "Votes are taken while a proposal is active (after its snapshot block, up to its end block); nothing was queued.",
    fields: ["proposalState"],
    example: { detail: "Proposal 7401… is pending; votes are taken while it is active.", proposalState: "pending" },
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

export type ProblemCode = keyof typeof PROBLEM_CATALOG;

const entry = (code: ProblemCode): ProblemEntry => PROBLEM_CATALOG[code];

/** A problem body as the API answers it, for examples. */
export function problemExample(code: ProblemCode, typeBase: string) {
  const { status, title, example } = entry(code);
  const { detail, ...fields } = example;
  return {
    type: problemType(typeBase, code),
    title,
    status,
    detail,
    code,
    requestId: "req_0123456789abcdef",
    ...fields,
  };
}

export const isProblemCode = (code: string): code is ProblemCode => Object.hasOwn(PROBLEM_CATALOG, code);
