// The database adapter outlives what the server does to its connections.
import { describe, expect, it } from "vitest";
import { openStorage } from "./helpers.ts";

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
});
