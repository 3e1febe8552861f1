// A redirect of a failed payout as GET and POST /v1/redemptions/{id}/redirect
// answer it (schema.ts's redirectSchema), made from the service's read.
import { type Hex, decodeFunctionData } from "viem";
import { redemptionsAbi } from "@zsd/sdk";
import { formatZec } from "@zsd/sdk/units";
import type { RedirectState } from "../../../domain/payouts/redirects.ts";
import { payoutState } from "../../../domain/payouts/status.ts";
import { displayTxId } from "../../../domain/txids.ts";

/**
 * A redirect as an account sees it: the plaintext address only to the account
 * that asked for it (custody opened it for them); anyone else who names the
 * payout by its id sees the sealed address the chain shows.
 */
export function presentRedirect({ row, own }: RedirectState) {
  return {
    object: "payout_redirect" as const,
    redirectId: row.id,
    payoutId: row.payout_id.toString(),
    owner: row.owner,
    destination:
      row.zcash_address !== null
        ? own
          ? { withdrawAddress: row.zcash_address }
          : { sealedAddress: sealedOf(row.calldata) }
        : { noteCommitment: row.note_commitment ?? "0" },
    status: row.status,
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    newPayoutId: row.new_payout_id,
    noteSequence: row.note_sequence,
    // The new payout, paid like any other (into a note there is none: the note is the ZEC).
    payoutStatus: row.new_payout_id ? payoutState(row.payout_status) : null,
    zcashTxId: row.payout_status === "completed" ? displayTxId(row.payout_txid) : null,
    zecHeld: row.zat_held ? formatZec(BigInt(row.zat_held)) : null,
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The sealed address a queued redirectWithSig carries (what the chain shows of it). */
function sealedOf(calldata: Hex): Hex {
  const { args } = decodeFunctionData({ abi: redemptionsAbi, data: calldata });
  return (args as readonly unknown[])[1] as Hex;
}
