// Two app instances on one Redis share each account's rate limit, as replicas do.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe("rate limits in Redis", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let redisA: Redis;
  let redisB: Redis;
  let a: RunningApi;
  let b: RunningApi;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    redisA = new Redis(REDIS_URL, { enableOfflineQueue: false });
    redisB = new Redis(REDIS_URL, { enableOfflineQueue: false });
    await Promise.all(
      [redisA, redisB].map((r) => new Promise((resolve, reject) => r.once("ready", resolve).once("error", reject))),
    );
    const env = { RATE_LIMIT_SANDBOX: "4", RATE_LIMIT_WINDOW_SECONDS: "60" };
    a = await startApi(storage.db, env, { redis: redisA });
    b = await startApi(storage.db, env, { redis: redisB });
  });

  afterAll(async () => {
    await a.close();
    await b.close();
    await redisA.quit();
    await redisB.quit();
    await storage.close();
  });

  it("counts one account's requests across both instances", async () => {
    // Both apps see the same key (same database); alternate between them.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? a : b;
      statuses.push((await app.call("/v1/keys", { key: a.secret })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const keys = await redisA.keys("zsd_rl_account*");
    expect(keys.length).toBeGreaterThan(0);
    const last = await b.call("/v1/keys", { key: a.secret });
    expect(last.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
  });
});
