// Text PostgreSQL cannot hold is refused where the request is read: a NUL
// (which fails the query: a 500) or a lone surrogate (stored as U+FFFD) in any
// path, query or body value of any operation of the OpenAPI document, and in
// the dashboard's path parameters, queries and forms. Each case answers 400
// naming the field; nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardRouter } from "../../../api/src/http/dashboard/router.ts";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { FormClient } from "../../dashboard/client.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
}

interface Operation {
  method: string;
  path: string;
  params: string[];
  query: string[];
  /** The body's text fields, as paths from its root (a number steps into an array). */
  textFields: (string | number)[][];
}

type Doc = {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, JsonSchema> };
};

/** Every path to a value that may be text, through objects, arrays and alternatives. */
function textPaths(doc: Doc, schema: JsonSchema, path: (string | number)[] = [], depth = 0): (string | number)[][] {
  if (depth > 8) return [];
  if (schema.$ref) return textPaths(doc, doc.components!.schemas![schema.$ref.split("/").pop()!]!, path, depth + 1);
  const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  if (variants.length > 0) {
    const seen = new Map<string, (string | number)[]>();
    for (const variant of variants)
      for (const found of textPaths(doc, variant, path, depth + 1)) seen.set(JSON.stringify(found), found);
    return [...seen.values()];
  }
  const types = [schema.type ?? "any"].flat();
  const found: (string | number)[][] = [];
  if (types.includes("string") || types.includes("any")) found.push(path);
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    found.push(...textPaths(doc, child, [...path, name], depth + 1));
  if (schema.items) found.push(...textPaths(doc, schema.items, [...path, 0], depth + 1));
  return found.filter((p) => p.length > 0);
}

function operations(doc: Doc): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const parameters = (op.parameters ?? []) as { name: string; in: string }[];
      const schema = (op.requestBody as { content: Record<string, { schema: JsonSchema }> } | undefined)?.content[
        "application/json"
      ]?.schema;
      return {
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === "path").map((p) => p.name),
        query: parameters.filter((p) => p.in === "query").map((p) => p.name),
        textFields: schema ? textPaths(doc, schema) : [],
      };
    }),
  );
}

/** A body holding `value` at `path` and nothing else. */
function bodyWith(path: (string | number)[], value: string): unknown {
  return path.reduceRight<unknown>((inner, step) => (typeof step === "number" ? [inner] : { [step]: inner }), value);
}

const NUL = /NUL/;
const SURROGATE = /surrogate/;
const NOT_UTF8 = /not valid UTF-8/;

describe("text PostgreSQL cannot store", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;

  beforeAll(async () => {
    // PostgreSQL, whose text type is what refuses NUL (PGlite is the same server, in WebAssembly).
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  async function expectRefused(response: Response, field: string, message: RegExp, where: string) {
    const text = await response.text();
    expect(response.status, `${where}: ${text.slice(0, 300)}`).toBe(400);
    expect(response.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(text) as { code: string; errors?: { field: string; message: string }[] };
    if (message === NOT_UTF8 || field.startsWith("params.")) {
      // A path segment that is not UTF-8 cannot be decoded at all: Express refuses it as a malformed path.
      if (problem.code === "malformed_path") return;
    }
    expect(problem.code, where).toBe("validation_failed");
    const named = problem.errors?.find((e) => e.field === field);
    expect(named?.message, `${where}: ${JSON.stringify(problem.errors)}`).toMatch(message);
  }

  const urlOf = (op: Operation, replace?: { name: string; segment: string }) =>
    op.params.reduce(
      (path, name) => path.replace(`{${name}}`, name === replace?.name ? replace.segment : "prf_00000000000000000000"),
      op.path,
    );

  it("walks every operation's path, query and body text with NUL and lone surrogates: 400 naming the field", async () => {
    const ops = operations(api.openApi as never);
    const before = await api.db.query<{ n: string }>(
      "SELECT (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM agents) + (SELECT count(*) FROM compliance_alerts) AS n",
    );
    let cases = 0;
    for (const op of ops) {
      for (const name of op.params) {
        for (const [segment, message] of [
          ["a%00b", NUL],
          ["%00", NUL],
          ["%ED%A0%80", NOT_UTF8],
        ] as const) {
          const where = `${op.method} ${op.path} params.${name}=${segment}`;
          const response = await api.call(urlOf(op, { name, segment }), { method: op.method });
          await expectRefused(response, `params.${name}`, message, where);
          cases++;
        }
      }
      for (const name of op.query) {
        for (const [value, message] of [
          ["a%00b", NUL],
          ["%00", NUL],
          ["%ED%A0%80", NOT_UTF8],
          ["caf%E9", NOT_UTF8],
          ["%C0%AF", NOT_UTF8],
        ] as const) {
          const where = `${op.method} ${op.path}?${name}=${value}`;
          const response = await api.call(`${urlOf(op)}?${name}=${value}`, { method: op.method });
          await expectRefused(response, `query.${name}`, message, where);
          cases++;
        }
      }
      for (const path of op.textFields) {
        for (const [value, message] of [
          ["a\u0000b", NUL],
          ["\ud800", SURROGATE],
          ["x\udfffy", SURROGATE],
        ] as const) {
          const field = ["body", ...path].join(".");
          const where = `${op.method} ${op.path} ${field}=${JSON.stringify(value)}`;
          // JSON.stringify writes a lone surrogate as its \ud800 escape, as a hostile client would.
          const body = JSON.stringify(bodyWith(path, value));
          const response = await api.call(urlOf(op), {
            method: op.method,
            headers: { "content-type": "application/json" },
            body,
          });
          await expectRefused(response, field, message, where);
          cases++;
        }
      }
    }
    // The probe's cases, by name.
    for (const query of ["subjectId=%00", "subjectId=a%00b", "raisedBy=%00", "raisedBy=a%00b"]) {
      const response = await api.call(`/v1/agents/alerts?${query}`);
      await expectRefused(response, `query.${query.split("=")[0]}`, NUL, query);
    }
    // A surrogate pair is text (U+1F600), and stays accepted.
    const pair = await api.call("/v1/keys", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"smile \\ud83d\\ude00"}',
    });
    expect(pair.status).toBe(201);
    expect(((await pair.json()) as { name: string }).name).toBe("smile \u{1f600}");
    const after = await api.db.query<{ n: string }>(
      "SELECT (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM agents) + (SELECT count(*) FROM compliance_alerts) AS n",
    );
    expect(Number(after[0]!.n)).toBe(Number(before[0]!.n) + 1);
    console.log(`unstorable text: ${cases} cases over ${ops.length} operations, each 400 naming its field`);
    expect(cases).toBeGreaterThan(300);
  });

  it("refuses them in every dashboard path parameter, query and form, with a page naming the field", async () => {
    // The dashboard's own route table: every :parameter of every page.
    const table = dashboardRouter({ environment: "sandbox", logger: createLogger("silent") } as never);
    const paths = (table.stack as { route?: { path: string; methods: Record<string, boolean> } }[])
      .flatMap((layer) => (layer.route ? [layer.route] : []))
      .filter((r) => typeof r.path === "string" && r.path.includes(":"));
    expect(paths.map((r) => r.path)).toContain("/dashboard/agents/:agentId");

    const client = new FormClient(api.url);
    const address = `nul-${Date.now()}@example.com`;
    expect((await client.signUp(address, "a long enough password")).status).toBe(200);
    expect((await client.signIn(address, "a long enough password")).status).toBe(303);
    const csrf = FormClient.csrf((await client.get("/dashboard/keys")).html);

    let cases = 0;
    for (const route of paths) {
      const names = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      for (const name of names) {
        for (const method of Object.keys(route.methods)) {
          const url = names.reduce((p, n) => p.replace(`:${n}`, n === name ? "a%00b" : "x"), route.path);
          const page = method === "post" ? await client.post(url, { _csrf: csrf }) : await client.get(url);
          const where = `${method.toUpperCase()} ${url}`;
          expect(page.status, `${where}: ${page.html.slice(0, 300)}`).toBe(400);
          expect(page.html, where).toContain(name);
          expect(page.html, where).toMatch(NUL);
          cases++;
        }
      }
    }
    // The probe's: an agent's page, and its redeliver form.
    for (const page of [
      await client.get("/dashboard/agents/a%00b"),
      await client.post("/dashboard/agents/%00/deliveries/whd_1/redeliver", { _csrf: csrf }),
    ]) {
      expect(page.status).toBe(400);
      expect(page.html).toContain("agentId");
    }
    // A query and forms: the field is named, nothing is made.
    const query = await client.get("/dashboard/requests?route=%00");
    expect(query.status).toBe(400);
    expect(query.html).toMatch(/query parameter “route” must not contain NUL/);
    const keysBefore = (await api.db.query("SELECT id FROM api_keys")).length;
    const form = await client.post("/dashboard/keys", { _csrf: csrf, name: "a\u0000b", environment: "sandbox" });
    expect(form.status).toBe(400);
    expect(form.html).toMatch(/form field “name” must not contain NUL/);
    const latin1 = await client.request("/dashboard/keys", {
      method: "POST",
      body: `_csrf=${csrf}&environment=sandbox&name=caf%E9`,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: api.url },
    });
    expect(latin1.status).toBe(400);
    expect(latin1.html).toMatch(/form field “name” is not valid UTF-8/);
    expect((await api.db.query("SELECT id FROM api_keys")).length).toBe(keysBefore);
    expect(cases).toBeGreaterThanOrEqual(paths.length);
  });
});
