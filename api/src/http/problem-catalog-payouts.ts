// The problems of payouts: redemptions, position actions, note withdrawals and
// redirects (the Zcash address problems stay in problem-catalog.ts, which
// spreads these into PROBLEM_CATALOG). Kept apart so that file stays readable.
import type { ProblemEntry } from "./problem-fields.ts";

export const PAYOUT_PROBLEMS = {
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
  redemption_below_minimum: {
    status: 422,
    title: "Below the signed minimum",
    meaning:
      "The redemption would pay less ZEC now than the permit's minZec (its signed minZatOut) accepts: sent, it " +
      "would revert ZatOutBelowMinimum. `bound` names the field (permit.minZec), `zecDue` what it pays now. Nothing " +
      "was queued or burned; quote again and sign a new permit.",
    fields: ["bound", "zecDue", "minZec"],
    example: {
      detail:
        "This redemption pays 3.99 ZEC now, under the 4 ZEC the permit's minZec (minZatOut) accepts: the redemption " +
        "would revert ZatOutBelowMinimum. Sign again with a lower minZec.",
      bound: "permit.minZec",
      zecDue: "3.99",
      minZec: "4",
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
      "price_frozen, …), `detail` its figures. A signed bound the position no longer meets (debt_above_maximum, " +
      "zat_out_below_minimum, seized_value_below_minimum) is named in `bound` (maxDebt, minZec, minSeizedZec, " +
      "minSeizedValue): read the position again and sign new bounds. Nothing was queued.",
    fields: ["failureCode", "bound"],
    example: {
      detail:
        "The call would burn 101.5 ZSD, above the 100 ZSD its signer's maxDebt accepts (a redistribution onto the " +
        "position raised its debt): nothing moved. Read the position again and sign new bounds.",
      failureCode: "debt_above_maximum",
      bound: "maxDebt",
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
      "(payout_not_failed, invalid_signature, signature_expired, invalid_sealed_address, seal_key_retired, …). " +
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
} as const satisfies Record<string, ProblemEntry>;
