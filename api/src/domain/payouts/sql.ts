// Pieces of SQL about payouts that other aggregates put inside their own
// statements (compliance asks whether a payout was refused in the query that
// decides, not after it). Apart from store.ts because compliance's fragments,
// which the store uses, use these: one module each way, no cycle.
import { REJECTED } from "./status.ts";

/** SQL: true when the payouts failed the payout `idColumn` (numeric, its on-chain id) because compliance refused it. */
export const notedRejected = (idColumn: string) =>
  `EXISTS (SELECT 1 FROM payouts p WHERE p.redemption_id = ${idColumn} AND p.last_error LIKE '${REJECTED}%')`;
