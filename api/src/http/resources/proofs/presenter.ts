// A proof as POST /v1/proofs/submit and GET /v1/proofs/{proofId} answer it
// (schema.ts's proofSchema): its public inputs by name, amounts in ZSD.
import { formatZsd } from "@zsd/sdk/units";
import type { ProofRow } from "../../../domain/mints/proofs.ts";

export function presentProof(row: ProofRow) {
  return {
    object: "proof" as const,
    proofId: row.id,
    proofHash: row.proof_hash,
    status: row.status,
    publicInputs: {
      root: row.root,
      nullifierHash: row.nullifier_hash,
      collateralFloorZat: row.collateral_floor_zat,
      bindingHash: row.binding_hash,
      changeLeaf: row.change_leaf,
    },
    mintAmount: formatZsd(BigInt(row.mint_amount)),
    recipient: row.recipient,
    relayer: row.relayer,
    fee: formatZsd(BigInt(row.fee)),
    owner: row.owner ?? row.recipient,
    rejectionReason: row.rejection_reason,
    mintId: row.mint_id,
    createdAt: new Date(row.created_at).toISOString(),
  };
}
