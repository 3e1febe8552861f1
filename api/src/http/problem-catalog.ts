// Every problem `code` the API answers, once: its status, its title, what it
// means for a client and the extension members it carries. The OpenAPI
// document, the /docs/problems page and the error handler's check of what a
// route answered all read this, so a code a client can meet is documented or
// the tests say so.
import type { ZcashAddressErrorCode } from "@zsd/sdk/zcash";
import { KEY_RESTRICTION_PROBLEMS } from "./problem-catalog-keys.ts";
import { AUTH_PROBLEMS } from "./problem-catalog-auth.ts";
import { problemType } from "./problems.ts";
import type { ProblemEntry } from "./problem-fields.ts";
import { PAYOUT_PROBLEMS } from "./problem-catalog-payouts.ts";
import { AGENT_PROBLEMS } from "./problem-catalog-agents.ts";
import { GOVERNANCE_PROBLEMS } from "./problem-catalog-governance.ts";

export { PROBLEM_FIELDS, type ProblemEntry, type ProblemField } from "./problem-fields.ts";

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
    meaning:
      "The body could not be read: its length or Content-Encoding does not match what was sent, or its bytes are not UTF-8 (a Latin-1 é, an overlong form, an encoded surrogate), whatever charset was declared.",
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
  overloaded: {
    status: 503,
    title: "Overloaded",
    meaning:
      "The server is past its bound on requests in progress (LOAD_SHED_MAX_IN_FLIGHT) or its event loop is running late (LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS): it did not start this request, so nothing was done. Retry after Retry-After (a POST with the same Idempotency-Key is safe); the SDKs do.",
    example: {
      detail:
        "The server is over capacity (too many requests in progress) and did not start this request; nothing was done. Retry after 1 s (a POST with the same Idempotency-Key is safe).",
    },
    headers: ["Retry-After"],
  },
  price_stale: {
    status: 503,
    title: "Price stale",
    meaning:
      "No ZEC/USD price the contracts will mint or redeem at: the feeds are too old, or both broken or disagreeing, so the price is frozen at its last good value; nothing was queued. Retry once a feed is updated.",
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
      detail:
        "Neither ZEC/USD feed can be trusted now (stale, broken, or disagreeing after a jump): the contracts hold the last good price (50 USD) and refuse mints, redemptions and liquidations until a feed recovers.",
      mintId: "mint_00000000000000000000",
      failureCode: "price_frozen",
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
  ...PAYOUT_PROBLEMS,

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
  ...AGENT_PROBLEMS,
  // Governance
  ...GOVERNANCE_PROBLEMS,
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
