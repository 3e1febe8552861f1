// The relay API's platform on both storages: keys and environments, problems,
// rate limits, idempotency, OpenAPI, operations.
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../api/src/config.ts";
import type { Database } from "../../api/src/db/index.ts";
import { type RunningApi, type Storage, json, openStorage, startApi } from "./helpers.ts";

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
    api = await startApi(db);
    production = await startApi(db, { ENVIRONMENT: "production" });
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
        // Per key: another key of the same account has its own budget.
        const { secret } = await limited.keys.create(limited.accountId, "sandbox", "second");
        expect((await limited.call("/v1/keys", { key: secret })).status).toBe(200);
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
        expect(metrics).toMatch(/zsd_api_rate_limited_total\{environment="sandbox"\} 1/);
      } finally {
        await limited.close();
      }
    });
  });

  describe("idempotency", () => {
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

    it("scopes keys per API key: the same Idempotency-Key from another key is a new request", async () => {
      const { secret } = await api.keys.create(api.accountId, "sandbox", "scoped");
      const headers = { "idempotency-key": `scoped-${storage}` };
      const a = (await (await api.call("/v1/keys", json({ name: "scoped-a" }, headers))).json()) as { id: string };
      const b = (await (
        await api.call("/v1/keys", { ...json({ name: "scoped-a" }, headers), key: secret })
      ).json()) as { id: string };
      expect(a.id).not.toBe(b.id);
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
      expect(await docs.text()).toContain("/v1/wallets/{address}/balances");
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
  });
});

describe("configuration", () => {
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
