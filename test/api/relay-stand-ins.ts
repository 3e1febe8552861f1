// Rows the relay tests queue without a chain: a consumed proof (its points
// need not verify: the chain, the verifier and the sender are stand-ins) and
// its queued mint, in an account the test created.
import type { Database } from "../../api/src/adapters/db/index.ts";

export const OWNER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

export async function queuedMint(
  db: Database,
  mintId: string,
  proofId: string,
  nullifierHash = "2",
  accountId = "acct_1",
): Promise<void> {
  await db.query(
    `INSERT INTO proofs (id, account_id, proof_hash, status, root, nullifier_hash, collateral_floor_zat, binding_hash,
       mint_amount, recipient, relayer, fee, proof, mint_id)
     VALUES ($1, $6, $1, 'consumed', '1', $5, '3', 'b', '1000000000000000000', $2, '', '0', $3, $4)`,
    [
      proofId,
      OWNER,
      JSON.stringify({
        pi_a: ["1", "2"],
        pi_b: [
          ["1", "2"],
          ["3", "4"],
        ],
        pi_c: ["5", "6"],
      }),
      mintId,
      nullifierHash,
      accountId,
    ],
  );
  await db.query(
    `INSERT INTO mints (id, account_id, proof_id, status, amount, recipient)
     VALUES ($1, $4, $2, 'queued', '1000000000000000000', $3)`,
    [mintId, proofId, OWNER, accountId],
  );
}
