// The database adapter outlives what the server does to its connections.
import { describe, expect, it } from "vitest";
import { openStorage } from "../helpers.ts";

describe("PostgreSQL adapter", () => {
  it("survives the server closing its idle connections (a restart, a failover) and goes on serving", async () => {
    const storage = await openStorage("postgres");
    try {
      // Two connections, so that one can close the other while it idles in the pool.
      await Promise.all([storage.db.query("SELECT pg_sleep(0.05)"), storage.db.query("SELECT pg_sleep(0.05)")]);
      const [closed] = await storage.db.query<{ n: string }>(
        `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(Number(closed!.n)).toBeGreaterThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await storage.db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await storage.close();
    }
  });

  it("survives the server closing a connection a transaction holds between two queries: 503-type error, no crash", async () => {
    const storage = await openStorage("postgres");
    try {
      const outcome = await storage.db
        .transaction(async (tx) => {
          const [{ pid }] = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")) as [{ pid: number }];
          // Closed from outside while the transaction does other work (an RPC call, a signature): the
          // connection emits its error with no query running, which unheard ends the process.
          await storage.db.query("SELECT pg_terminate_backend($1)", [pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          return tx.query("SELECT 1");
        })
        .then(
          () => "committed",
          (error: { code?: string }) => error.code,
        );
      expect(outcome).toBe("upstream_unavailable");
      expect(await storage.db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await storage.close();
    }
  });
});
