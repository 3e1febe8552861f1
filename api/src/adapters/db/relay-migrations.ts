// Schema changes for the relays, in their own file: migrations.ts is long enough.
export const RELAY_MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 23,
    name: "mints: a mint whose batch reverted goes without newcomers",
    statements: [
      // On the row, not in a worker's memory, so that a restart or a lease failover keeps it: one
      // customer's item that makes a batch revert must not make the others' next batch revert too.
      // survived_tx: the reverted batch whose refused item was found and failed; its other items go
      // together once, and no newcomer joins them. alone: a batch reverted with no culprit found, or
      // reverted again: each goes in a transaction of its own.
      `ALTER TABLE mints ADD COLUMN survived_tx text`,
      `ALTER TABLE mints ADD COLUMN alone boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    version: 24,
    name: "sealed withdraw addresses: the envelope a relayed redemption sends, the hash a payout's envelope had",
    statements: [
      // The chain carries only the sealed address: the relay sends these bytes, which the
      // owner signed; withdraw_address keeps the plaintext custody opened, for the account's own reads.
      `ALTER TABLE redemption_requests ADD COLUMN sealed_address text`,
      // Custody refuses an envelope an earlier payout already used (a replay): found by its keccak256.
      // The envelope itself (public on-chain) is kept to open it again once custody holds a missing key.
      `ALTER TABLE payouts ADD COLUMN sealed_address_hash text`,
      `ALTER TABLE payouts ADD COLUMN sealed_address text`,
      `CREATE INDEX payouts_sealed_address_hash ON payouts (sealed_address_hash, redemption_id)`,
      // A payout whose envelope custody cannot open has no address: it is failed, never paid.
      `ALTER TABLE payouts ALTER COLUMN withdraw_address DROP NOT NULL`,
    ],
  },
  {
    version: 25,
    name: "deposits: an id and the depositing account",
    statements: [
      // The chain no longer shows a deposit's amount: GET /v1/deposits/{id} serves it to
      // the account that made it (a sandbox deposit's; a wallet's found by zcashd has none).
      `ALTER TABLE custody_ledger ADD COLUMN public_id text`,
      `ALTER TABLE custody_ledger ADD COLUMN account_id text REFERENCES accounts(id)`,
      `CREATE UNIQUE INDEX custody_ledger_public_id ON custody_ledger (public_id)`,
      // One line per deposit leaf: two replicas recovering the same deposit (each found it on the chain
      // and not yet in the ledger) must not both write it.
      `CREATE UNIQUE INDEX custody_ledger_deposit_leaf ON custody_ledger (leaf_index) WHERE kind = 'deposit'`,
    ],
  },
];
