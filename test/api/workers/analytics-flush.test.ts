import { describe, expect, it } from "vitest";
import { openStorage, overriding } from "../helpers.ts";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { RequestAnalytics } from "../../../api/src/domain/analytics/analytics.ts";

// The request log keeps REQUEST_LOG_PER_KEY entries per key. A flush that
// wrote every pending request and then deleted all but those cost a busy API
// most of its CPU (GET /v1/supply fell to 0.34 of bare Express).
describe("request analytics flush", () => {
  it("writes only the log entries that the per-key trim keeps, and every request still counts", async () => {
    const storage = await openStorage("postgres");
    try {
      await storage.db.query("INSERT INTO accounts (id, name) VALUES ('acct_f', 'f')");
      let rowsWritten = 0;
      // The real database, with the rows each INSERT INTO request_log carries counted.
      const counted = overriding(storage.db, {
        query: ((sql: string, params?: unknown[]) => {
          if (sql.includes("INSERT INTO request_log")) rowsWritten += (params?.length ?? 0) / 9;
          return storage.db.query(sql, params);
        }) as Database["query"],
      });
      const analytics = new RequestAnalytics(counted, { retentionDays: 1, logPerKey: 5, flushMs: 60_000 });
      const keys = ["key_f1", "key_f2"];
      for (let i = 0; i < 3_000; i++)
        analytics.record({
          apiKeyId: keys[i % 2]!,
          accountId: "acct_f",
          method: "GET",
          route: "/v1/supply",
          status: 200,
          latencyMs: 1,
          requestId: `req_${i}`,
        });
      await analytics.flush();
      expect(rowsWritten).toBe(10);
      const rows = await storage.db.query<{ api_key_id: string; request_id: string }>(
        "SELECT api_key_id, request_id FROM request_log ORDER BY id",
      );
      expect(rows.map((r) => r.request_id)).toEqual(
        [2990, 2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999].map((n) => `req_${n}`),
      );
      expect((await analytics.report("acct_f", "24h")).total.requests).toBe(3_000);
    } finally {
      await storage.close();
    }
  });
});
