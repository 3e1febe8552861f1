// The API's folders hold what their names say, and this file keeps them so:
// no module imports itself through others (a cycle, type imports included),
// no layer imports one above it (adapters < domain < workers < http; config
// and observability under all of them), and each table's SQL is written in
// the folder of the aggregate that owns it (ARCHITECTURE.md, "Which folder
// owns which table"), in that folder's one store.ts, and a worker moves a
// job table's rows through its owner's store without naming the table.
// Migrations create every table and are left out.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "api", "src");

/** Each layer and the layers it may not import. Other folders (the processes, the composition root) may import any. */
const LAYERS: Record<string, { under: string[]; mayNotImport: string[] }> = {
  base: { under: ["config/", "observability/"], mayNotImport: ["adapters", "domain", "workers", "http"] },
  adapters: { under: ["adapters/"], mayNotImport: ["domain", "workers", "http"] },
  domain: { under: ["domain/"], mayNotImport: ["workers", "http"] },
  workers: { under: ["workers/"], mayNotImport: ["http"] },
  http: { under: ["http/"], mayNotImport: [] },
};

/** The folder (under api/src) whose modules alone may write SQL against each table. */
const OWNERS: Record<string, string> = {
  accounts: "domain/accounts/",
  dashboard_sessions: "domain/accounts/",
  account_tokens: "domain/accounts/",
  api_keys: "domain/accounts/",
  proofs: "domain/mints/",
  mints: "domain/mints/",
  position_actions: "domain/positions/",
  redemption_requests: "domain/redemptions/",
  payouts: "domain/payouts/",
  payout_redirects: "domain/payouts/",
  custody_ledger: "adapters/custody/",
  compliance_alerts: "domain/compliance/",
  compliance_holds: "domain/compliance/",
  compliance_deny_list: "domain/compliance/",
  governance_votes: "domain/governance/",
  governance_delegations: "domain/governance/",
  governance_proposal_actions: "domain/governance/",
  agents: "domain/agents/",
  webhook_events: "domain/agents/",
  webhook_deliveries: "domain/agents/",
  webhook_attempts: "domain/agents/",
  webhook_breakers: "domain/agents/",
  reserve_readings: "domain/reserves/",
  request_log: "domain/analytics/",
  request_stats: "domain/analytics/",
  idempotency_records: "http/middleware/",
  worker_leases: "workers/",
  relay_cursors: "workers/",
};

/**
 * Reads of another aggregate's table inside one statement of this file's own
 * (a join, a lock taken in the order the other side takes it, a piece of SQL
 * another aggregate puts in its query). Reads only: a write outside the owner
 * fails whatever this says.
 */
const CROSS_READS: Record<string, string[]> = {
  // A payout's state is its redemption's hold or its own: the worker locks both as a hold does.
  "domain/payouts/store.ts": ["redemption_requests", "compliance_holds"],
  // Whether a subject may move, asked inside the relays' and the payouts' own queries; a redirected
  // payout's hold, locked and read with the payout's status.
  "domain/compliance/store.ts": ["redemption_requests", "payouts"],
  // A redemption's read joins its payout, its hold and its latest redirect in one statement; the account
  // behind a refused payout is its request's, or the hold's of a payout redirected from it.
  "domain/redemptions/store.ts": ["compliance_holds", "payouts", "payout_redirects"],
};

/**
 * Domain modules other than a store.ts that hold SQL, each with its reason.
 * Their SQL is still against their own folder's tables (misplacedSql).
 */
const SQL_APART: Record<string, string> = {
  "domain/payouts/sql.ts":
    "a fragment compliance's store puts in its own queries: in payouts/store.ts, which uses compliance's, the two stores would import each other",
};

interface Source {
  /** Its path under api/src, with forward slashes. */
  path: string;
  text: string;
}

function layerOf(path: string): string | undefined {
  return Object.keys(LAYERS).find((name) => LAYERS[name]!.under.some((prefix) => path.startsWith(prefix)));
}

/** The api/src paths a module imports (relative specifiers only: packages are no layer). */
function importsOf(source: Source): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of source.text.matchAll(pattern)) {
    found.push(normalize(join(dirname(source.path), match[1]!)).replaceAll("\\", "/"));
  }
  return found;
}

/** "a imports b" for every import of a lower layer's module of an upper layer's. */
function upwardImports(sources: Source[]): string[] {
  const found: string[] = [];
  for (const source of sources) {
    const layer = layerOf(source.path);
    if (!layer) continue;
    for (const target of importsOf(source)) {
      const targetLayer = layerOf(target);
      if (targetLayer && LAYERS[layer]!.mayNotImport.includes(targetLayer)) {
        found.push(`${source.path} (${layer}) imports ${target} (${targetLayer})`);
      }
    }
  }
  return found;
}

/** The modules of each import cycle (strongly connected, two or more), by Tarjan's algorithm. */
function importCycles(sources: Source[]): string[][] {
  const graph = new Map(sources.map((s) => [s.path, importsOf(s).filter((t) => t !== s.path)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The text outside comments: a comment may name a table as prose. */
function code(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join("\n");
}

/** Every table a module names in SQL, and whether it writes it. */
function tablesIn(text: string): Map<string, "read" | "write"> {
  const tables = new Map<string, "read" | "write">();
  const sql = code(text);
  const pattern = /\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+([a-z_][a-z0-9_]*)\b/g;
  for (const match of sql.matchAll(pattern)) {
    const [, verb, table] = match;
    if (!(table! in OWNERS)) continue;
    const write = verb === "INTO" || verb === "UPDATE" || /DELETE\s+$/.test(sql.slice(0, match.index));
    if (write || !tables.has(table!)) tables.set(table!, write ? "write" : "read");
  }
  return tables;
}

/** SQL against a table outside its owner's folder, unless a read listed in CROSS_READS. */
function misplacedSql(sources: Source[]): string[] {
  const found: string[] = [];
  for (const source of sources) {
    if (/^adapters\/db\/.*migrations\.ts$/.test(source.path)) continue;
    for (const [table, use] of tablesIn(source.text)) {
      if (source.path.startsWith(OWNERS[table]!)) continue;
      if (use === "read" && CROSS_READS[source.path]?.includes(table)) continue;
      found.push(`${source.path}: ${use === "write" ? "writes" : "reads"} ${table} (owned by ${OWNERS[table]})`);
    }
  }
  return found;
}

/** Domain modules, other than their folder's store.ts, that query the database or name a table in SQL. */
function sqlOutsideStores(sources: Source[]): string[] {
  const found: string[] = [];
  for (const source of sources) {
    if (!source.path.startsWith("domain/") || source.path.endsWith("/store.ts")) continue;
    if (source.path in SQL_APART) continue;
    const text = code(source.text);
    const tables = [...tablesIn(source.text).keys()];
    if (/\.query\s*[<(]/.test(text) || tables.length > 0) {
      found.push(`${source.path}: SQL outside store.ts${tables.length > 0 ? ` (${tables.join(", ")})` : ""}`);
    }
  }
  return found;
}

/** The job tables rows.ts moves rows of, as its RelayTable type lists them. */
function jobTables(sources: Source[]): string[] {
  const rows = sources.find((s) => s.path === "adapters/db/rows.ts")!;
  const union = /export type RelayTable =([^;]+);/.exec(rows.text)![1]!;
  return [...union.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]!);
}

/** Workers that write a job table's name as a string: its owner's store binds its rows (jobRows) instead. */
function tableNamesInWorkers(sources: Source[], tables: string[]): string[] {
  const found: string[] = [];
  for (const source of sources) {
    if (!source.path.startsWith("workers/")) continue;
    for (const match of code(source.text).matchAll(/(["'`])([a-z_]+)\1/g)) {
      if (tables.includes(match[2]!)) found.push(`${source.path}: names ${match[2]}`);
    }
  }
  return found;
}

function sourcesUnder(dir: string): Source[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => ({
      path: relative(SRC, join(dir, file)).replaceAll("\\", "/"),
      text: readFileSync(join(dir, file), "utf8"),
    }));
}

describe("the API's layers", () => {
  const sources = sourcesUnder(SRC);

  it("finds the modules it checks", () => {
    for (const layer of ["adapters", "domain", "workers", "http"]) {
      expect(sources.filter((s) => layerOf(s.path) === layer).length, layer).toBeGreaterThan(5);
    }
  });

  it("has no import cycle", () => {
    expect(importCycles(sources)).toEqual([]);
  });

  it("imports nothing upward", () => {
    expect(upwardImports(sources)).toEqual([]);
  });

  it("writes each table's SQL in its owner's folder", () => {
    expect(misplacedSql(sources)).toEqual([]);
  });

  it("writes each aggregate's SQL in its store.ts", () => {
    expect(sqlOutsideStores(sources)).toEqual([]);
  });

  it("names no job table in a worker", () => {
    expect(jobTables(sources).length).toBeGreaterThan(5);
    expect(tableNamesInWorkers(sources, jobTables(sources))).toEqual([]);
  });

  it("names an owner for every table the migrations create", () => {
    const created = sources
      .filter((s) => s.path.startsWith("adapters/db/"))
      .flatMap((s) => [...s.text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].map((m) => m[1]!))
      .filter((table) => table !== "schema_migrations");
    expect(new Set(created).size).toBeGreaterThan(20);
    expect([...new Set(created)].filter((table) => !(table in OWNERS))).toEqual([]);
  });

  it("catches a deliberate violation of each rule", () => {
    const planted: Source[] = [
      { path: "adapters/chain.ts", text: 'import { x } from "../domain/errors.ts";' },
      { path: "domain/mints/mints.ts", text: 'import type { Y } from "../../workers/relay/worker.ts";' },
      { path: "workers/relay/worker.ts", text: 'import { z } from "../../http/problems.ts";' },
      { path: "workers/relay/mint-relay.ts", text: 'await db.query("UPDATE payouts SET status = $1");' },
      { path: "http/metrics.ts", text: "await db.query(`SELECT count(*) FROM payout_redirects`);" },
      { path: "domain/mints/mints.ts", text: "// prose: a comment may say FROM payouts" },
    ];
    expect(upwardImports(planted)).toHaveLength(3);
    expect(
      importCycles([
        { path: "domain/a.ts", text: 'import type { B } from "./b.ts";' },
        { path: "domain/b.ts", text: 'import { a } from "./a.ts";' },
      ]),
    ).toEqual([["domain/a.ts", "domain/b.ts"]]);
    expect(misplacedSql(planted)).toEqual([
      "workers/relay/mint-relay.ts: writes payouts (owned by domain/payouts/)",
      "http/metrics.ts: reads payout_redirects (owned by domain/payouts/)",
    ]);
    // A read listed as a join is allowed; a write by the same file is not.
    expect(misplacedSql([{ path: "domain/compliance/store.ts", text: "SELECT 1 FROM payouts" }])).toEqual([]);
    expect(misplacedSql([{ path: "domain/compliance/store.ts", text: "UPDATE payouts SET x = 1" }])).toHaveLength(1);
    // SQL in a service, even against its own tables, belongs in the store; a store and the listed fragment may hold it.
    expect(
      sqlOutsideStores([
        { path: "domain/mints/mints.ts", text: 'await db.query("UPDATE mints SET status = $1");' },
        { path: "domain/agents/events.ts", text: 'const [row] = await tx.query<{ now: string }>("SELECT now()");' },
        { path: "domain/mints/store.ts", text: 'await db.query("UPDATE mints SET status = $1");' },
        { path: "domain/payouts/sql.ts", text: "`EXISTS (SELECT 1 FROM payouts p)`" },
        { path: "domain/mints/proofs.ts", text: " * the store says UPDATE mints SET …" },
      ]),
    ).toEqual(["domain/mints/mints.ts: SQL outside store.ts (mints)", "domain/agents/events.ts: SQL outside store.ts"]);
    expect(
      tableNamesInWorkers(
        [
          { path: "workers/relay/mint-relay.ts", text: 'await updateRow(tx, "mints", id, fields);' },
          { path: "workers/relay/governance-relay.ts", text: "this.#kind = { table: 'governance_votes', what };" },
          { path: "workers/relay/position-relay.ts", text: "this.#kind = { rows: positionActionRows };" },
          { path: "domain/mints/store.ts", text: 'export const mintRows = jobRows("mints");' },
        ],
        ["mints", "governance_votes", "position_actions"],
      ),
    ).toEqual([
      "workers/relay/mint-relay.ts: names mints",
      "workers/relay/governance-relay.ts: names governance_votes",
    ]);
  });
});
