// The words of a payout's state, in one place: the payout worker moves a row
// through them, the redirect and redemption reads show them to the owner, and
// compliance reads the note a refusal leaves on a row. A new state goes here
// first, then in the worker's moves (workers/payouts/payouts.ts) and in
// payoutState below.
//
//   pending ─▶ sending ─▶ sent ─▶ settling ─▶ completed
//      ▲          │          │
//      └─ retry ──┴──────────┴─▶ failing ─▶ held ─▶ redirected (by the owner)
//                 └─ unknown outcome ─▶ review (an operator decides)

/** A payout's row, as the worker moves it (the diagram above). */
export type PayoutStatus =
  "pending" | "sending" | "sent" | "settling" | "completed" | "failing" | "held" | "redirected" | "review";

/** Contract status of a payout (IRedemptions.Status), by its index. */
export const PAYOUT_STATUS = ["none", "requested", "completed", "failed", "redirected"] as const;
/** The same statuses by name, as `getPayout` answers them. */
export const ON_CHAIN = { none: 0, requested: 1, completed: 2, failed: 3, redirected: 4 } as const;

/** The reason written on-chain with a failure: a code, never the wallet's words (they may reveal balances). */
export const FAILURE_REASON = {
  unreadable: "unreadable_address",
  failed: "payout_failed",
  rejected: "compliance_rejected",
} as const;

/**
 * How a failure for a sealed address custody cannot open, or whose address it
 * cannot pay, or that an earlier payout used, is noted on its row (and told
 * apart on a later pass).
 */
export const NOT_PAYABLE = "Not payable: ";
/** How a failure a screener asked for is noted on its row. */
export const REJECTED = "Rejected by compliance: ";

/** How an owner gets a held payout's ZEC: told with every held payout (webhook and reads). */
export const REDIRECT_HOW =
  "POST /v1/redemptions/{id}/redirect with a sealedAddress or a noteCommitment, a deadline and the owner's " +
  "EIP-712 Redirect signature (SDK: redemptions.redirect).";

/** The code written on-chain with a failure, from why the payout is being failed. */
export function failureReason(p: { last_error: string | null }): string {
  if (p.last_error?.startsWith(NOT_PAYABLE)) return FAILURE_REASON.unreadable;
  if (p.last_error?.startsWith(REJECTED)) return FAILURE_REASON.rejected;
  return FAILURE_REASON.failed;
}

/** A held payout's reason in words, for its owner. */
export function heldReason(code: string): string {
  const why =
    code === FAILURE_REASON.unreadable
      ? "Custody cannot open or pay this payout's sealed address (sealed to another key or owner, not a shielded " +
        "address of this network, or used by an earlier payout)"
      : code === FAILURE_REASON.rejected
        ? "Compliance review refused this payout"
        : "Custody could not pay this payout";
  return `${why}. Its ZEC is held on-chain for the owner (no ZSD is returned): the owner redirects it to another shielded address or into a note.`;
}

/** A payout's state for its owner, from the payout worker's row. */
export function payoutState(status: string | null | undefined) {
  switch (status) {
    case "completed":
      return "paid" as const;
    case "failing":
    case "held":
      return "held" as const;
    case "redirected":
      return "redirected" as const;
    case "review":
      return "in_review" as const;
    default:
      return "paying" as const;
  }
}
