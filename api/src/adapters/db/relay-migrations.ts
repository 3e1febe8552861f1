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
];
