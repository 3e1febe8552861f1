// The relay API's platform on both storages: keys and environments, problems,
// rate limits, idempotency, OpenAPI, operations.
import { createHash } from "node:crypto";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { ConfigError, configSchema, loadConfig } from "../../../api/src/config/config.ts";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { ROOT } from "../../../scripts/lib/paths.ts";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type RunningApi, type Storage, json, openStorage, startApi } from "../helpers.ts";

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  return (await response.json()) as Record<string, unknown>;
}

describe.each(["pglite", "postgres"] as Storage[])("API platform on %s", (storage) => {
  let storageHandle: Awaited<ReturnType<typeof openStorage>>;
  let db: Database;
  let api: RunningApi;
  let production: RunningApi;
  beforeAll(async () => {
    storageHandle = await openStorage(storage);
    db = storageHandle.db;
    // Each names the other environment's base address to a key of the other environment.
    const addresses = {
      PRODUCTION_BASE_URL: "https://api.zsd.test/v1",
      SANDBOX_BASE_URL: "https://sandbox.zsd.test/v1",
    };
    api = await startApi(db, addresses);
    production = await startApi(db, { ENVIRONMENT: "production", ...addresses });
  });
  afterAll(async () => {
    await api.close();
    await production.close();
    await storageHandle.close();
  });

  describe("authentication", () => {
    it("accepts the account's key and refuses a missing, malformed, unknown or revoked one with 401", async () => {
      expect((await api.call("/v1/keys")).status).toBe(200);

      const missing = await api.call("/v1/keys", { key: null });
      expect(missing.status).toBe(401);
      expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await problem(missing)).code).toBe("missing_api_key");

      const basic = await api.call("/v1/keys", { key: null, headers: { authorization: "Basic dXNlcjpwYXNz" } });
      expect((await problem(basic)).code).toBe("malformed_authorization");
      expect((await problem(await api.call("/v1/keys", { key: "sk_test_short" }))).code).toBe("malformed_api_key");

      // Right shape, right lookup part, wrong secret: unknown, compared in constant time.
      const forged = `${api.secret.slice(0, -1)}${api.secret.endsWith("A") ? "B" : "A"}`;
      const unknown = await api.call("/v1/keys", { key: forged });
      expect(unknown.status).toBe(401);
      expect(unknown.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await problem(unknown)).code).toBe("invalid_api_key");

      const { secret, id } = await api.keys.create(api.accountId, "sandbox", "to revoke");
      expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);
      const revoke = await api.call(`/v1/keys/${id}`, { method: "DELETE" });
      expect(revoke.status).toBe(200);
      expect((await revoke.json()).revokedAt).not.toBeNull();
      const revoked = await api.call("/v1/keys", { key: secret });
      expect(revoked.status).toBe(401);
      expect((await problem(revoked)).code).toBe("revoked_api_key");
    });

    it("refuses a production key on sandbox and a sandbox key on production, naming the right base address", async () => {
      const onSandbox = await api.call("/v1/supply", { key: production.secret });
      expect(onSandbox.status).toBe(401);
      const p1 = await problem(onSandbox);
      expect(p1).toMatchObject({
        code: "wrong_environment",
        keyEnvironment: "production",
        baseUrl: api.config.PRODUCTION_BASE_URL,
      });
      expect(p1.detail).toContain(api.config.PRODUCTION_BASE_URL);

      const onProduction = await production.call("/v1/supply", { key: api.secret });
      expect(onProduction.status).toBe(401);
      const p2 = await problem(onProduction);
      expect(p2).toMatchObject({
        code: "wrong_environment",
        keyEnvironment: "sandbox",
        baseUrl: api.config.SANDBOX_BASE_URL,
      });
    });

    it("stores only a hash of each key and shows the secret once", async () => {
      const created = await api.call("/v1/keys", json({ name: "dashboard key" }));
      expect(created.status).toBe(201);
      const body = (await created.json()) as { secret: string; id: string; last4: string; prefix: string };
      expect(body.secret).toMatch(/^sk_test_[0-9A-Za-z]{48}$/);
      expect(body).toMatchObject({ prefix: "sk_test_", last4: body.secret.slice(-4) });
      const rows = await db.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = $1", [body.id]);
      expect(JSON.stringify(rows)).not.toContain(body.secret);
      expect(JSON.stringify(rows)).not.toContain(body.secret.slice(8 + 16));
      const list = (await (await api.call("/v1/keys")).json()) as { data: Record<string, unknown>[] };
      expect(list.data.find((k) => k.id === body.id)).toMatchObject({ name: "dashboard key", last4: body.last4 });
      expect(JSON.stringify(list)).not.toContain(body.secret);
      // Another account's key is not found.
      const other = await api.keys.createAccount("other");
      const { id: otherKey } = await api.keys.create(other.id, "sandbox", "theirs");
      expect((await api.call(`/v1/keys/${otherKey}`, { method: "DELETE" })).status).toBe(404);
    });
  });

  describe("keys belong to one environment", () => {
    it("lists and revokes only keys of the caller's environment", async () => {
      const account = await api.keys.createAccount("two environments");
      const sandboxKey = await api.keys.create(account.id, "sandbox", "sandbox key");
      const liveKey = await api.keys.create(account.id, "production", "live key");
      const listed = (await (await api.call("/v1/keys", { key: sandboxKey.secret })).json()) as {
        data: { id: string; environment: string }[];
      };
      expect(listed.data.map((k) => k.id)).toEqual([sandboxKey.id]);
      const revoke = await api.call(`/v1/keys/${liveKey.id}`, { method: "DELETE", key: sandboxKey.secret });
      expect(revoke.status).toBe(404);
      expect((await production.call("/v1/keys", { key: liveKey.secret })).status).toBe(200);
      const fromProduction = (await (await production.call("/v1/keys", { key: liveKey.secret })).json()) as {
        data: { id: string }[];
      };
      expect(fromProduction.data.map((k) => k.id)).toEqual([liveKey.id]);
    });

    it("caps an account's active keys per environment; revoking one makes room", async () => {
      const capped = await startApi(db, { MAX_ACTIVE_KEYS: "3" });
      try {
        const made = [];
        for (let i = 0; i < 2; i++) {
          const response = await capped.call("/v1/keys", json({ name: `k${i}` }));
          expect(response.status).toBe(201);
          made.push((await response.json()) as { id: string });
        }
        const refused = await capped.call("/v1/keys", json({ name: "one too many" }));
        expect(refused.status).toBe(409);
        expect(await problem(refused)).toMatchObject({ code: "key_limit_reached", limit: 3 });
        // Concurrent creations cannot pass the cap together.
        await capped.call(`/v1/keys/${made[0]!.id}`, { method: "DELETE" });
        const race = await Promise.all(
          Array.from({ length: 5 }, (_, i) => capped.call("/v1/keys", json({ name: `race ${i}` }))),
        );
        expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
        // A production key of the same account counts apart.
        await capped.keys.create(capped.accountId, "production", "live");
        const [{ n }] = await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND environment = 'sandbox' AND revoked_at IS NULL",
          [capped.accountId],
        );
        expect(Number(n)).toBe(3);
      } finally {
        await capped.close();
      }
    });
  });

  describe("errors are RFC 9457 problems", () => {
    it("404 unknown route, 405 wrong method with Allow, never HTML", async () => {
      const notFound = await api.call("/v1/nowhere");
      expect(notFound.status).toBe(404);
      expect(await problem(notFound)).toMatchObject({
        status: 404,
        code: "not_found",
        type: expect.stringMatching(/^https:/),
        title: "Not found",
      });
      const outside = await api.call("/index.html");
      expect(outside.status).toBe(404);
      expect(await outside.text()).not.toMatch(/<html/i);

      const wrongMethod = await api.call("/v1/supply", { method: "PATCH" });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get("allow")).toBe("GET");
      expect((await problem(wrongMethod)).code).toBe("method_not_allowed");
    });

    it("400 for bodies that are not JSON, 413 for too large, 415 for other content types", async () => {
      const bad = await api.call("/v1/keys", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{name:",
      });
      expect(bad.status).toBe(400);
      expect((await problem(bad)).code).toBe("malformed_json");

      const big = await api.call("/v1/keys", json({ name: "x".repeat(200_000) }));
      expect(big.status).toBe(413);
      expect((await problem(big)).code).toBe("body_too_large");

      const form = await api.call("/v1/keys", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "name=x",
      });
      expect(form.status).toBe(415);
      expect((await problem(form)).code).toBe("unsupported_media_type");
    });

    it("validation names the failing fields, and every problem carries the request id", async () => {
      const response = await api.call(
        "/v1/keys",
        json({ name: "", extra: 1 }, { "x-request-id": "req_from_client_1" }),
      );
      expect(response.status).toBe(400);
      expect(response.headers.get("x-request-id")).toBe("req_from_client_1");
      const body = await problem(response);
      expect(body).toMatchObject({ code: "validation_failed", requestId: "req_from_client_1" });
      const fields = (body.errors as { field: string }[]).map((e) => e.field);
      expect(fields).toContain("body.name");
      expect(fields).toEqual(expect.arrayContaining([expect.stringMatching(/^body/)]));

      const address = await api.call("/v1/wallets/0x123/balances");
      expect(address.status).toBe(400);
      expect((await problem(address)).errors).toEqual([expect.objectContaining({ field: "params.address" })]);
      const checksum = await api.call("/v1/wallets/0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266/balances");
      expect(((await problem(checksum)).errors as { message: string }[])[0]!.message).toMatch(/checksum/);
    });

    it("503 with Retry-After when the indexer is down, without hanging", async () => {
      const started = performance.now();
      const response = await api.call("/v1/supply");
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect((await problem(response)).code).toBe("upstream_unavailable");
      expect(performance.now() - started).toBeLessThan(api.config.UPSTREAM_TIMEOUT_MS + 1000);
    });
  });

  describe("rate limits", () => {
    it("send RateLimit-Policy and RateLimit on every response, and 429 with Retry-After past the quota", async () => {
      const limited = await startApi(db, { RATE_LIMIT_SANDBOX: "3", RATE_LIMIT_WINDOW_SECONDS: "30" });
      try {
        const first = await limited.call("/v1/keys");
        expect(first.headers.get("ratelimit-policy")).toBe('"default";q=3;w=30');
        expect(first.headers.get("ratelimit")).toMatch(/^"default";r=2;t=\d+$/);
        await limited.call("/v1/keys");
        await limited.call("/v1/keys");
        const rejected = await limited.call("/v1/keys");
        expect(rejected.status).toBe(429);
        expect(Number(rejected.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(rejected.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
        expect((await problem(rejected)).code).toBe("rate_limited");
        // Per account: another key of the same account shares the spent budget;
        // another account has its own.
        const { secret } = await limited.keys.create(limited.accountId, "sandbox", "second");
        expect((await limited.call("/v1/keys", { key: secret })).status).toBe(429);
        const other = await limited.keys.create((await limited.keys.createAccount("other")).id, "sandbox", "other");
        expect((await limited.call("/v1/keys", { key: other.secret })).status).toBe(200);
        // Unauthenticated answers, failed authentications and errors raised
        // before routing carry the per-address policy.
        const open = await limited.call("/v1/health", { key: null });
        expect(open.headers.get("ratelimit-policy")).toBe('"ip";q=30;w=30');
        const badKey = await limited.call("/v1/keys", { key: "sk_test_nope" });
        expect(badKey.status).toBe(401);
        expect(badKey.headers.get("ratelimit-policy")).toBe('"ip";q=30;w=30');
        const badBody = await limited.call("/v1/keys", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{",
        });
        expect(badBody.status).toBe(400);
        expect(badBody.headers.get("ratelimit")).toMatch(/^"ip";r=\d+;t=\d+$/);
        expect((await limited.call("/v1/missing", { key: null })).headers.get("ratelimit-policy")).toBe(
          '"ip";q=30;w=30',
        );
        const metrics = await (await limited.call("/metrics", { key: null })).text();
        expect(metrics).toMatch(/zsd_api_rate_limited_total\{environment="sandbox"\} 2/);
      } finally {
        await limited.close();
      }
    });
  });

  describe("public routes and client addresses", () => {
    it("limit public routes per address even when a key is sent with them", async () => {
      const limited = await startApi(db, { RATE_LIMIT_SANDBOX: "1", RATE_LIMIT_WINDOW_SECONDS: "30" });
      try {
        // The per-address budget is ten times the per-account one.
        for (let i = 0; i < 10; i++) await limited.call("/v1/health");
        const limitedHealth = await limited.call("/v1/health");
        expect(limitedHealth.status).toBe(429);
        expect(limitedHealth.headers.get("ratelimit-policy")).toBe('"ip";q=10;w=30');
        for (const path of ["/v1/openapi.json", "/docs", "/metrics"]) {
          expect((await limited.call(path)).status).toBe(429);
        }
      } finally {
        await limited.close();
      }
    });

    it("believes X-Forwarded-For only from the proxies TRUST_PROXY names", async () => {
      for (const [trust, spoofable] of [
        ["loopback", true],
        ["false", false],
      ] as const) {
        const limited = await startApi(db, {
          RATE_LIMIT_SANDBOX: "1",
          RATE_LIMIT_WINDOW_SECONDS: "30",
          TRUST_PROXY: trust,
        });
        try {
          for (let i = 0; i < 10; i++) {
            await limited.call("/v1/health", { key: null, headers: { "x-forwarded-for": "203.0.113.1" } });
          }
          const other = await limited.call("/v1/health", { key: null, headers: { "x-forwarded-for": "203.0.113.2" } });
          expect(other.status, `TRUST_PROXY=${trust}`).toBe(spoofable ? 200 : 429);
        } finally {
          await limited.close();
        }
      }
      expect(loadConfig({ TRUST_PROXY: "2" }).TRUST_PROXY).toBe(2);
      expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, loopback" }).TRUST_PROXY).toBe("10.0.0.0/8, loopback");
    });
  });

  describe("idempotency", () => {
    it("replays a repeat whose JSON differs only in key order, and forgets a request refused by validation", async () => {
      const headers = { "idempotency-key": `order-${storage}` };
      const first = await api.call("/v1/keys", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: '{"name":"ordered"}',
      });
      expect(first.status).toBe(201);
      const spaced = await api.call("/v1/keys", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: '{ "name" : "ordered" }',
      });
      expect(spaced.headers.get("idempotent-replayed")).toBe("true");

      const refusedKey = { "idempotency-key": `refused-${storage}` };
      const refused = await api.call("/v1/keys", json({ name: "x", extra: true }, refusedKey));
      expect(refused.status).toBe(400);
      expect(
        await db.query("SELECT 1 FROM idempotency_records WHERE key = $1", [refusedKey["idempotency-key"]]),
      ).toEqual([]);
      const corrected = await api.call("/v1/keys", json({ name: "x" }, refusedKey));
      expect(corrected.status).toBe(201);
    });

    it("replays the first response for a repeat and refuses the key with another body", async () => {
      const headers = { "idempotency-key": `replay-${storage}` };
      const first = await api.call("/v1/keys", json({ name: "idempotent" }, headers));
      expect(first.status).toBe(201);
      const created = (await first.json()) as { id: string; secret: string };
      const again = await api.call("/v1/keys", json({ name: "idempotent" }, headers));
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      // Same key, not a second one; the secret is never stored for replays.
      expect(await again.json()).toMatchObject({ id: created.id, secret: null });
      const keys = (await (await api.call("/v1/keys")).json()) as { data: { name: string }[] };
      expect(keys.data.filter((k) => k.name === "idempotent")).toHaveLength(1);

      const other = await api.call("/v1/keys", json({ name: "something else" }, headers));
      expect(other.status).toBe(422);
      expect((await problem(other)).code).toBe("idempotency_key_reused");
      const rows = await db.query("SELECT * FROM idempotency_records WHERE key = $1", [headers["idempotency-key"]]);
      expect(JSON.stringify(rows)).not.toContain(created.secret);
      const [{ hours }] = await db.query<{ hours: number }>(
        "SELECT extract(epoch FROM expires_at - created_at) / 3600 AS hours FROM idempotency_records WHERE key = $1",
        [headers["idempotency-key"]],
      );
      expect(Number(hours)).toBeGreaterThanOrEqual(24);
    });

    it("answers 409 to concurrent duplicates still in flight and creates exactly one key", async () => {
      const headers = { "idempotency-key": `race-${storage}` };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => api.call("/v1/keys", json({ name: `race-${storage}` }, headers))),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
      const conflicts = responses.filter((r) => r.status === 409);
      for (const c of conflicts) expect((await problem(c)).code).toBe("idempotency_request_in_progress");
      const keys = (await (await api.call("/v1/keys")).json()) as { data: { name: string }[] };
      expect(keys.data.filter((k) => k.name === `race-${storage}`)).toHaveLength(1);
    });

    it("scopes keys per account and environment: another key of the account replays, another account runs anew", async () => {
      const { secret } = await api.keys.create(api.accountId, "sandbox", "scoped");
      const headers = { "idempotency-key": `scoped-${storage}` };
      const a = (await (await api.call("/v1/keys", json({ name: "scoped-a" }, headers))).json()) as { id: string };
      const sameAccount = await api.call("/v1/keys", { ...json({ name: "scoped-a" }, headers), key: secret });
      expect(sameAccount.headers.get("idempotent-replayed")).toBe("true");
      expect(((await sameAccount.json()) as { id: string }).id).toBe(a.id);
      const stranger = await api.keys.create((await api.keys.createAccount("stranger")).id, "sandbox", "s");
      const b = (await (
        await api.call("/v1/keys", { ...json({ name: "scoped-a" }, headers), key: stranger.secret })
      ).json()) as { id: string };
      expect(b.id).not.toBe(a.id);
    });
    it("takes over a claim a crashed process left in flight, once older than twice the request timeout", async () => {
      const scope = `${api.accountId}:sandbox`;
      // The claim of POST /v1/keys {"name":…}, as the middleware hashes it.
      const claim = (key: string, name: string, ageSeconds: number) =>
        db.query(
          `INSERT INTO idempotency_records (scope, key, request_hash, state, created_at, expires_at)
           VALUES ($1, $2, $3, 'in_flight', now() - make_interval(secs => $4), now() + interval '1 day')`,
          [scope, key, createHash("sha256").update(`POST /v1/keys\n{"name":"${name}"}`).digest("hex"), ageSeconds],
        );
      // REQUEST_TIMEOUT_MS is 30 s: a claim of 61 s is no request's any more; one of 5 s may still be running.
      await claim(`left-${storage}`, "left", 61);
      await claim(`running-${storage}`, "running", 5);
      const left = await api.call("/v1/keys", json({ name: "left" }, { "idempotency-key": `left-${storage}` }));
      expect(left.status).toBe(201);
      const running = await api.call(
        "/v1/keys",
        json({ name: "running" }, { "idempotency-key": `running-${storage}` }),
      );
      expect(running.status).toBe(409);
      expect((await problem(running)).code).toBe("idempotency_request_in_progress");
    });

    it("makes one key of a request retried after its process died between the key and the answer", async () => {
      const headers = { "idempotency-key": `died-${storage}` };
      const first = await api.call("/v1/keys", json({ name: "died" }, headers));
      expect(first.status).toBe(201);
      const { secret: lost } = (await first.json()) as { secret: string };
      // As a process SIGKILLed after its INSERT and before it stored the answer leaves it: the key made,
      // the claim in flight, older than twice the request timeout. The answer never left it.
      await db.query(
        `UPDATE idempotency_records SET state = 'in_flight', response_status = NULL, response_body = NULL,
         created_at = now() - interval '61 seconds' WHERE key = $1`,
        [headers["idempotency-key"]],
      );
      const retry = await api.call("/v1/keys", json({ name: "died" }, headers));
      expect(retry.status).toBe(201);
      const { secret } = (await retry.json()) as { secret: string };
      // One request, one key: the one no one was shown is revoked.
      const active = (
        (await (await api.call("/v1/keys")).json()) as { data: { name: string; revokedAt: string | null }[] }
      ).data.filter((k) => k.name === "died" && k.revokedAt === null);
      expect(active).toHaveLength(1);
      expect((await api.call("/v1/keys", { key: lost })).status).toBe(401);
      expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);
      // The same key after its answer was kept replays it, and makes none.
      const replay = await api.call("/v1/keys", json({ name: "died" }, headers));
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);
    });

    it("releases a claim whose answer could not be kept (the database gone as it left) at the next request", async () => {
      // The database fails every write of an answer, and the release after it, for one request: as if it went down then.
      let failing = false;
      const flaky: Database = {
        kind: db.kind,
        transaction: (work) => db.transaction(work),
        close: () => db.close(),
        query: (sql, params) =>
          failing &&
          (sql.trimStart().startsWith("UPDATE idempotency_records") ||
            sql === "DELETE FROM idempotency_records WHERE scope = $1 AND key = $2")
            ? Promise.reject(Object.assign(new Error("Connection terminated unexpectedly"), { code: "ECONNRESET" }))
            : db.query(sql, params),
      };
      const cut = await startApi(flaky);
      try {
        const headers = { "idempotency-key": `cut-${storage}` };
        failing = true;
        const first = await cut.call("/v1/keys", json({ name: "cut" }, headers));
        expect(first.status).toBe(201);
        failing = false;
        // The answer was not kept: the retry runs again rather than wait on "in flight" for good.
        const retry = await cut.call("/v1/keys", json({ name: "cut" }, headers));
        expect(retry.status).toBe(201);
        expect(retry.headers.get("idempotent-replayed")).toBeNull();
        // Still one key for the one request: the retry's.
        const keys = (await (await cut.call("/v1/keys")).json()) as { data: { name: string; revokedAt: null }[] };
        expect(keys.data.filter((k) => k.name === "cut" && k.revokedAt === null)).toHaveLength(1);
      } finally {
        await cut.close();
      }
    });
  });

  describe("OpenAPI and operations", () => {
    it("serves an OpenAPI 3.1 document that lints clean (Redocly recommended-strict) and a docs page", async () => {
      const doc = (await (await api.call("/v1/openapi.json", { key: null })).json()) as Record<string, unknown>;
      expect(doc.openapi).toBe("3.1.0");
      const config = await createConfig({ extends: ["recommended-strict"] } as never);
      const lint = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
      expect(lint.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      // The schemas are the ones that validate requests.
      expect(JSON.stringify(doc)).toContain('"maxLength":100');
      const docs = await api.call("/docs", { key: null });
      expect(docs.headers.get("content-type")).toMatch(/text\/html/);
      // Rendered in the browser from the document (test/api/http/openapi.test.ts checks its scripts).
      expect(await docs.text()).toContain('<div id="reference"></div>');
    });

    it("answers liveness, reports readiness per dependency, and exposes Prometheus metrics", async () => {
      expect(await (await api.call("/v1/health", { key: null })).json()).toEqual({ status: "ok" });
      const ready = await api.call("/v1/health/ready", { key: null });
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: "not_ready",
        checks: { database: true, indexer: false, chain: false },
      });
      const metrics = await (await api.call("/metrics", { key: null })).text();
      expect(metrics).toMatch(/zsd_api_requests_total\{method="GET",route="\/v1\/keys",status="200"\} \d+/);
      expect(metrics).toMatch(/zsd_api_request_duration_seconds_bucket/);
    });

    it("labels metrics by route template only, so their size does not grow with traffic", async () => {
      const busy = await startApi(db, { RATE_LIMIT_SANDBOX: "100000" });
      try {
        const scrape = async () => (await busy.call("/metrics", { key: null })).text();
        const randomId = () => Math.random().toString(36).slice(2);
        const traffic = async (rounds: number) => {
          for (let i = 0; i < rounds; i++) {
            await busy.call(`/v1/keys/key_${randomId()}`, { method: "DELETE" });
            await busy.call(`/v1/nowhere/${randomId()}`);
            await busy.call(`/v1/keys/%zz${randomId()}`, { method: "DELETE", key: null });
            await busy.call(`/v1/proofs/${randomId()}`, { method: "PATCH" });
          }
        };
        const series = (text: string) => text.split("\n").filter((line) => line.startsWith("zsd_api_")).length;
        await traffic(20);
        await scrape();
        const settled = series(await scrape());
        await traffic(200);
        const text = await scrape();
        expect(series(text)).toBe(settled);
        expect(text).toMatch(/route="\/v1\/keys\/:keyId",status="400"/);
        expect(text).toMatch(/route="unmatched",status="404"/);
      } finally {
        await busy.close();
      }
    });

    it("protects /metrics with METRICS_TOKEN, and serves it in production only with one", async () => {
      expect((await production.call("/metrics", { key: null })).status).toBe(404);
      const token = "metrics-token-0123456789";
      const guarded = await startApi(db, { ENVIRONMENT: "production", METRICS_TOKEN: token });
      try {
        const missing = await guarded.call("/metrics", { key: null });
        expect(missing.status).toBe(401);
        expect((await problem(missing)).code).toBe("invalid_metrics_token");
        expect((await guarded.call("/metrics", { key: `${token}x` })).status).toBe(401);
        const ok = await guarded.call("/metrics", { key: token });
        expect(ok.status).toBe(200);
        expect(await ok.text()).toContain("zsd_api_requests_total");
      } finally {
        await guarded.close();
      }
    });
  });
});

describe("configuration", () => {
  it("loads api/.env.example as written: an empty variable means unset", () => {
    const example = parseEnv(readFileSync(join(ROOT, "api", ".env.example"), "utf8"));
    expect(Object.keys(example).length).toBeGreaterThan(30);
    const config = loadConfig(example);
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.ENVIRONMENT).toBe("sandbox");
  });

  it("documents every variable in api/.env.example", () => {
    const example = readFileSync(join(ROOT, "api", ".env.example"), "utf8");
    const missing = Object.keys(configSchema.shape).filter((name) => !new RegExp(`^#? ?${name}=`, "m").test(example));
    expect(missing).toEqual([]);
  });

  it("reads custody's seal keys, refuses malformed ones without echoing a secret, and requires them in production", () => {
    const secret = `0x${"ab".repeat(32)}`;
    const keys = loadConfig({ CUSTODY_SEAL_KEYS: `1:${DEV_SEAL_KEY.secretKey}, 7:${secret}` }).CUSTODY_SEAL_KEYS!;
    expect(keys.map((k) => k.keyId)).toEqual([1, 7]);
    expect(keys[0]!.publicKey).toBe(DEV_SEAL_KEY.publicKey);
    for (const bad of [
      `0:${secret}`,
      `1:${secret.slice(0, -2)}`,
      `1:${secret},1:${secret}`,
      "x",
      `4294967296:${secret}`,
    ]) {
      let message = "";
      try {
        loadConfig({ CUSTODY_SEAL_KEYS: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain("CUSTODY_SEAL_KEYS");
      expect(message).not.toContain("abab");
    }
    expect(() => loadConfig({ ENVIRONMENT: "production", DEPLOYMENT_FILE: "deployments/x.json" })).toThrow(
      /CUSTODY_SEAL_KEYS: required in production/,
    );
    expect(
      loadConfig({ ENVIRONMENT: "production", DEPLOYMENT_FILE: "deployments/x.json", CUSTODY_SEAL_KEYS: `2:${secret}` })
        .CUSTODY_SEAL_KEYS,
    ).toHaveLength(1);
    // The sandbox falls back to the development key (app.ts), so it needs none.
    expect(loadConfig({ DEPLOYMENT_FILE: "deployments/x.json" }).CUSTODY_SEAL_KEYS).toBeUndefined();
  });

  it("names every bad variable at start-up", () => {
    expect(() => loadConfig({ ENVIRONMENT: "staging", PORT: "http", INDEXER_URL: "not a url" })).toThrow(ConfigError);
    try {
      loadConfig({ ENVIRONMENT: "staging", PORT: "http", INDEXER_URL: "not a url" });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain("ENVIRONMENT");
      expect(message).toContain("PORT");
      expect(message).toContain("INDEXER_URL");
    }
  });
});
