// A position action or note withdrawal as its row holds it and as the API and
// its events show it: read by the positions service, the position relay and
// compliance (which fails an action it rejects), none of which imports another for it.
import type { Hex } from "viem";
import { formatZec, formatZsd } from "@zsd/sdk/units";

export const POSITION_ACTIONS = ["repay", "withdraw", "close", "liquidate", "top_up"] as const;
export type PositionAction = (typeof POSITION_ACTIONS)[number];
/** withdraw_note: a note's spend; redistribute: the keeper's, for a position under 100% (no account). */
export type ActionKind = PositionAction | "withdraw_note" | "redistribute";

export interface ActionRow {
  id: string;
  account_id: string | null;
  environment: string;
  action: ActionKind;
  position_id: string | null;
  signer: string | null;
  signed_nonce: string | null;
  amount: string | null;
  zcash_address: string | null;
  note_commitment: string | null;
  nullifier_hash: string | null;
  calldata: Hex;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  attempts: number;
  block_number: string | number | null;
  payout_id: string | null;
  released_zat: string | null;
  note_sequence: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function presentAction(row: ActionRow) {
  const common = {
    status: row.status,
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    payoutId: row.payout_id,
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
  if (row.action === "withdraw_note") {
    return {
      object: "withdrawal" as const,
      withdrawalId: row.id,
      amount: formatZec(BigInt(row.amount!)),
      zcashAddress: row.zcash_address!,
      owner: row.signer,
      nullifierHash: row.nullifier_hash!,
      ...common,
    };
  }
  const amount =
    row.amount === null ? null : row.action === "repay" ? formatZsd(BigInt(row.amount)) : formatZec(BigInt(row.amount));
  return {
    object: "position_action" as const,
    actionId: row.id,
    positionId: row.position_id!,
    action: row.action,
    signer: row.signer,
    amount,
    destination:
      row.zcash_address !== null
        ? { zcashAddress: row.zcash_address }
        : row.note_commitment !== null
          ? { noteCommitment: row.note_commitment }
          : null,
    released: row.released_zat === null ? null : formatZec(BigInt(row.released_zat)),
    noteSequence: row.note_sequence,
    ...common,
  };
}
