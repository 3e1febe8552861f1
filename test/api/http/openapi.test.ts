// The OpenAPI document says everything a client must handle: every problem
// code of every operation with its meaning and an example, example requests
// and answers, and a reference page that renders it offline.
import { createConfig, lintFromString } from "@redocly/openapi-core";
import type { Request, Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  PROBLEM_CATALOG,
  PROBLEM_FIELDS,
  type ProblemCode,
  type ProblemEntry,
} from "../../../api/src/http/problem-catalog.ts";
import { ANY_REQUEST } from "../../../api/src/http/operation-problems.ts";
import { type UndeclaredProblem, undeclaredProblems } from "../../../api/src/http/errors.ts";
import { Problem } from "../../../api/src/http/problems.ts";
import { route } from "../../../api/src/http/routes.ts";
import { EVENT_TYPES } from "../../../api/src/domain/agents/events.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";
import { webhookSchemaCheck } from "../webhook-receiver.ts";

type Json = Record<string, unknown>;
interface MediaType {
  schema: Json;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: Json }>;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description: string; content?: Record<string, MediaType> }>;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<
    string,
    { post: Operation & { parameters: { name: string; in: string; required: boolean }[]; tags: string[] } }
  >;
  components: { schemas: { Problem: { properties: Record<string, { description?: string }> } } };
}

const catalog = Object.entries(PROBLEM_CATALOG) as [ProblemCode, ProblemEntry][];

describe("the problem catalog", () => {
  it("gives every code a status, a title, a meaning and an example, and every field it carries a description", () => {
    for (const [code, entry] of catalog) {
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.title.length, code).toBeGreaterThan(0);
      expect(entry.meaning.length, code).toBeGreaterThan(20);
      expect(entry.example.detail.length, code).toBeGreaterThan(0);
      for (const field of entry.fields ?? []) {
        expect(PROBLEM_FIELDS[field], `${code}.${field}`).toBeDefined();
        expect(entry.example, `${code}'s example carries ${field}`).toHaveProperty(field);
      }
      const { detail: _detail, ...values } = entry.example;
      for (const field of Object.keys(values)) expect(entry.fields ?? [], `${code}: ${field}`).toContain(field);
    }
  });

  it("reports a code an operation answers without declaring it, a code not in the catalog and a wrong status", () => {
    const spec = route({
      method: "get",
      path: "/things/:id",
      operationId: "getThing",
      summary: "A thing",
      tag: "Things",
      auth: true,
      params: z.object({ id: z.string() }),
      responses: { 200: { description: "The thing" } },
      problems: ["resource_not_found"],
      handler: async () => undefined,
    });
    const found: UndeclaredProblem[] = [];
    const check = undeclaredProblems([spec], (p) => found.push(p));
    const req = { method: "GET", path: "/v1/things/1" } as Request;
    const routed = { locals: { route: "/v1/things/:id" } } as unknown as Response;
    const unrouted = { locals: {} } as unknown as Response;
    const answer = (status: number, code: string, res = routed) => check(req, res, new Problem(status, code, "t", "d"));

    // Declared by the route, or shared by every authenticated operation with a path parameter.
    for (const [status, code] of [
      [404, "resource_not_found"],
      [401, "revoked_api_key"],
      [400, "malformed_path"],
      [429, "rate_limited"],
      [500, "internal_error"],
    ] as const) {
      answer(status, code);
      answer(status, code, unrouted);
    }
    expect(found).toEqual([]);

    answer(409, "key_limit_reached");
    answer(422, "made_up_code");
    answer(400, "resource_not_found");
    // Before the router ran (body errors, limits), the operation is found by method and path.
    answer(503, "price_stale", unrouted);
    expect(found).toEqual([
      { operation: "GET /v1/things/:id", code: "key_limit_reached", status: 409, why: "not declared by the operation" },
      { operation: "GET /v1/things/:id", code: "made_up_code", status: 422, why: "not in the problem catalog" },
      { operation: "GET /v1/things/:id", code: "resource_not_found", status: 400, why: "the catalog says 404" },
      { operation: "GET /v1/things/:id", code: "price_stale", status: 503, why: "not declared by the operation" },
    ]);
  });
});

describe("the OpenAPI document and /docs", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let doc: Document;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
    doc = (await (await api.call("/v1/openapi.json", { key: null })).json()) as Document;
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );

  it("lists per operation and status each problem code with its meaning and a full example body", () => {
    const documented = new Set<string>();
    for (const { name, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const problem = response.content?.["application/problem+json"];
        if (!problem) continue;
        expect(Object.keys(problem.examples ?? {}).length, `${name} ${status}`).toBeGreaterThan(0);
        for (const [code, example] of Object.entries(problem.examples!)) {
          const entry = PROBLEM_CATALOG[code as ProblemCode] as ProblemEntry;
          expect(entry, `${name}: ${code}`).toBeDefined();
          expect(String(entry.status)).toBe(status);
          expect(response.description).toContain(`\`${code}\`: ${entry.meaning}`);
          expect(example.value).toMatchObject({
            code,
            status: entry.status,
            title: entry.title,
            type: expect.any(String),
          });
          for (const field of entry.fields ?? []) expect(example.value).toHaveProperty(field);
          documented.add(code);
        }
      }
    }
    // The ones named in the issue, and the 504 of a mint that waits.
    for (const code of ["proof_mismatch", "proof_already_used", "nullifier_claimed", "unsupported_collateral"]) {
      expect(documented).toContain(code);
    }
    expect(
      doc.paths["/v1/mint"]!.post!.responses["504"]!.content!["application/problem+json"]!.examples,
    ).toHaveProperty("mint_pending");
    // Every code is answered by some operation here, or by any request (production alone has no sandbox routes).
    const routeless = new Set<string>([...ANY_REQUEST, "invalid_metrics_token"]);
    for (const [code] of catalog) expect(documented.has(code) || routeless.has(code), code).toBe(true);
    // The extension members, each saying which codes carry it.
    const properties = doc.components.schemas.Problem.properties;
    for (const field of Object.keys(PROBLEM_FIELDS)) expect(properties[field]?.description, field).toMatch(/With `/);
  });

  it("gives every operation an example request (when it takes a body) and an example answer", () => {
    for (const { name, op } of operations()) {
      if (op.requestBody) {
        const examples = op.requestBody.content["application/json"]!.examples;
        expect(Object.keys(examples ?? {}).length, name).toBeGreaterThan(0);
      }
      const json = Object.entries(op.responses).filter(([, r]) => r.content?.["application/json"]);
      for (const [status, response] of json)
        expect(response.content!["application/json"]!.example, `${name} ${status}`).toBeDefined();
      const success = Object.keys(op.responses).filter((s) => s.startsWith("2"));
      expect(success.length, name).toBeGreaterThan(0);
    }
  });

  it("documents every event type as a webhook: the Standard Webhooks headers, its body's schema, an example", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES, "ping"].sort());
    const check = webhookSchemaCheck(doc);
    for (const [type, { post }] of Object.entries(doc.webhooks)) {
      expect(
        post.parameters.map((p) => `${p.in} ${p.name} ${p.required}`),
        type,
      ).toEqual(["header webhook-id true", "header webhook-timestamp true", "header webhook-signature true"]);
      expect(
        Object.keys(post.responses).some((s) => s.startsWith("2")),
        type,
      ).toBe(true);
      const body = post.requestBody!.content["application/json"]!;
      const example = body.example as { type: string; data: Record<string, unknown> };
      expect(example.type).toBe(type);
      expect(check(example), type).toEqual([]);
      // The check can fail: a payload with a field more or less, or under another type, is refused.
      expect(check({ ...example, data: { ...example.data, proofId: "prf_x" } }).length, type).toBeGreaterThan(0);
      const [first] = Object.keys(example.data);
      const { [first!]: _dropped, ...fewer } = example.data;
      expect(check({ ...example, data: fewer }).length, `${type} without ${first}`).toBeGreaterThan(0);
      const other = type === "ping" ? "mint.queued" : "ping";
      expect(check({ ...example, type: other }).length, type).toBeGreaterThan(0);
    }
  });

  it("names this server relatively, and links each problem's type to its section of /docs/problems", async () => {
    expect(doc.servers).toEqual([{ url: "/", description: "Sandbox (testnet): this server" }]);
    // As configured by default, the document lints clean too (platform.test.ts lints a configured one).
    const config = await createConfig({ extends: ["recommended-strict"] } as never);
    const lint = await lintFromString({ source: JSON.stringify(doc), absoluteRef: "openapi.json", config });
    expect(lint.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    const refused = await api.call("/v1/keys", { key: null });
    const body = (await refused.json()) as { type: string; code: string };
    expect(body).toMatchObject({ code: "missing_api_key", type: "/docs/problems#missing_api_key" });
    const page = await api.call("/docs/problems", { key: null });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    for (const [code] of catalog) expect(html, code).toContain(`<section id="${code}">`);
    expect(html).toContain("POST /v1/mint");
  });

  it("takes the base addresses and the problem type base from settings", async () => {
    const configured = await startApi(storage.db, {
      ENVIRONMENT: "production",
      PRODUCTION_BASE_URL: "https://api.zsd.test/v1",
      SANDBOX_BASE_URL: "https://sandbox.zsd.test/v1",
    });
    const typed = await startApi(storage.db, { PROBLEM_TYPE_BASE: "https://errors.zsd.test/problems/" });
    try {
      const production = (await (await configured.call("/v1/openapi.json", { key: null })).json()) as Document;
      expect(production.servers.map((s) => s.url)).toEqual(["https://api.zsd.test", "https://sandbox.zsd.test"]);
      const refused = (await (await configured.call("/v1/keys", { key: null })).json()) as { type: string };
      expect(refused.type).toBe("https://api.zsd.test/docs/problems#missing_api_key");
      const other = (await (await typed.call("/v1/keys", { key: null })).json()) as { type: string };
      expect(other.type).toBe("https://errors.zsd.test/problems/missing_api_key");
    } finally {
      await configured.close();
      await typed.close();
    }
  });

  it("serves /docs as Scalar's reference, with its scripts from this server under a CSP that allows only them", async () => {
    const page = await api.call("/docs", { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-eval|https?:/);
    const html = await page.text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(2);
    expect(html).not.toMatch(/<script>|<script [^s]/);
    for (const src of scripts) {
      expect(src).toMatch(/^\/docs\/assets\//);
      const script = await api.call(src, { key: null });
      expect(script.status, src).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
      const text = await script.text();
      expect(text.length).toBeGreaterThan(0);
      if (/scalar-api-reference/.test(src)) {
        expect(text.length).toBeGreaterThan(1_000_000);
        expect(text).toMatch(/window\.Scalar=\{\s*createApiReference:/);
      } else {
        expect(text).toContain('Scalar.createApiReference("#reference"');
        expect(text).toContain('url: "/v1/openapi.json"');
      }
    }
    // The rest of the API keeps the strict policy.
    expect((await api.call("/docs/problems", { key: null })).headers.get("content-security-policy")).toContain(
      "default-src 'none'",
    );
    expect((await api.call("/docs/problems", { key: null })).headers.get("content-security-policy")).not.toContain(
      "script-src",
    );
  });
});
