// A mint as GET /v1/mints/{mintId} answers it (schema.ts's mintSchema), made
// from the service's read: its amount in ZSD, its confirmations counted from
// the head read with it, the failure only once it failed.
import { formatZsd } from "@zsd/sdk/units";
import type { MintState } from "../../../domain/mints/mints.ts";

export function presentMint({ row, hold, head }: MintState) {
  const block = row.block_number === null ? null : Number(row.block_number);
  return {
    object: "mint" as const,
    mintId: row.id,
    status: row.status,
    proofId: row.proof_id,
    amount: formatZsd(BigInt(row.amount)),
    recipient: row.recipient,
    positionId: row.position_id,
    txHash: row.tx_hash,
    blockNumber: block,
    confirmations: block === null || head === null ? null : Math.max(0, head - block + 1),
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    hold,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
