// How far a worker's scan of the chain's events has read (relay_cursors), by
// the scan's name: the workers' own bookkeeping, as the lease is (lease.ts).
import type { Queryable } from "../adapters/db/index.ts";

/** The last block the scan `name` read, or undefined before its first pass. */
export async function readCursor(db: Queryable, name: string): Promise<{ block: string } | undefined> {
  const [cursor] = await db.query<{ block: string }>("SELECT block FROM relay_cursors WHERE name = $1", [name]);
  return cursor;
}

/** Moves the scan `name` on to `block`, never back (two passes may overlap). */
export async function advanceCursor(tx: Queryable, name: string, block: bigint): Promise<void> {
  await tx.query(
    `INSERT INTO relay_cursors (name, block) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET block = GREATEST(relay_cursors.block, EXCLUDED.block)`,
    [name, block.toString()],
  );
}
