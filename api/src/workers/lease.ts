// The lease on a relayer key, so that of several API replicas sharing a
// database one worker signs with the key at a time. (Mints cannot double
// however passes overlap: the nullifier is spent once. Payouts move by
// compare-and-set on a version, so a stale pass stops.)
import type { Database } from "../adapters/db/index.ts";
import { randomId } from "../adapters/ids.ts";

export class Lease {
  /** This worker's name in the lease table: its replica's id and this run's. */
  readonly holder: string;
  /** Until this run first holds the lease, it may take over one its own replica left (same workerId). */
  #resuming: boolean;
  #renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly name: string,
    /** How long the lease lasts unrenewed; another replica takes over after it. */
    private readonly ms: number,
    /** The replica's stable name, if it has one: a restarted replica then resumes without waiting. */
    workerId: string | undefined,
  ) {
    this.holder = `${workerId ?? "worker"}:${randomId("run")}`;
    this.#resuming = workerId !== undefined;
  }

  /**
   * Takes or renews the lease. A restarted replica (same workerId) takes back
   * its predecessor's lease at once instead of waiting for it to run out;
   * replicas need distinct ids.
   */
  async take(): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO worker_leases (name, holder, expires_at) VALUES ($1, $2, now() + $3::int * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE worker_leases.holder = EXCLUDED.holder OR worker_leases.expires_at < now()
         OR ($4::boolean AND split_part(worker_leases.holder, ':', 1) = split_part(EXCLUDED.holder, ':', 1))
       RETURNING holder`,
      [this.name, this.holder, this.ms, this.#resuming],
    );
    if (rows.length > 0) this.#resuming = false;
    return rows.length > 0;
  }

  /**
   * Renews the lease while held, apart from passes, so that a long pass does
   * not outlive it. Not on embedded PGlite: one process only opens its
   * directory (adapters/db/local.ts), so no other replica can take the lease,
   * and the holder's own `take` renews it; the renewals were writes every
   * few seconds on an idle stack.
   */
  keepRenewed(): void {
    if (this.db.kind === "pglite") return;
    clearInterval(this.#renewal);
    this.#renewal = setInterval(() => void this.#renew().catch(() => undefined), Math.max(this.ms / 3, 10));
  }

  /** Hands the key over at once rather than after the lease runs out. */
  async release(): Promise<void> {
    clearInterval(this.#renewal);
    await this.db
      .query("DELETE FROM worker_leases WHERE name = $1 AND holder = $2", [this.name, this.holder])
      .catch(() => undefined);
  }

  /** Extends the lease while this worker holds it (never takes it). */
  async #renew(): Promise<void> {
    await this.db.query(
      `UPDATE worker_leases SET expires_at = now() + $3::int * interval '1 millisecond' WHERE name = $1 AND holder = $2`,
      [this.name, this.holder, this.ms],
    );
  }
}
