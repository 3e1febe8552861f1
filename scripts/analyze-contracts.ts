// A second static analyzer for contracts/ besides solhint: solc's SMTChecker (CHC engine, the
// compiler's own model checker, from the `solc` npm package already pinned for Hardhat) answered
// by Debian's z3 binary through solc-js's SMT callback. solc-js's built-in z3 cannot run here (its
// wasm build has no threads), and slither, aderyn and mythril are not on npm.
//
// Usage: tsx scripts/analyze-contracts.ts [contracts/X.sol ...]
// Prints every finding (file, line, kind, message) and a summary. Exits non-zero on a finding not
// justified in contracts/analysis-accepted.json and on a justification that matches no finding of
// a contract the run finished (so the list cannot go stale).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { ROOT } from "./lib/paths.ts";

const ACCEPTED = join(ROOT, "contracts", "analysis-accepted.json");
const TARGETS = [
  "assert",
  "underflow",
  "overflow",
  "divByZero",
  "constantCondition",
  "popEmptyArray",
  "outOfBounds",
  "balance",
] as const;
// z3's resource limit, not a wall clock, bounds each query so that the same code gives the same
// answers on a loaded machine (a wall-clock timeout turns proofs into "unknown" under load, and
// the accepted list would flap). The wall limit below is only a safety net.
const QUERY_RLIMIT = Number(process.env.ANALYZE_QUERY_RLIMIT ?? 2_000_000);
const QUERY_WALL_S = 60;
// solc-js itself (WebAssembly) spends minutes encoding the biggest contracts before the first
// query; past this budget a contract is reported as not analyzed instead of holding the run.
const CONTRACT_BUDGET_MS = Number(process.env.ANALYZE_CONTRACT_BUDGET_MS ?? 120_000);
// Same as hardhat.config.cts; the optimizer does not change what the SMTChecker sees.
const SETTINGS = { evmVersion: "cancun", optimizer: { enabled: true, runs: 10_000 } };

type Kind = (typeof TARGETS)[number];
export interface Finding {
  file: string;
  line: number;
  kind: Kind;
  /** "proven": z3 found a counterexample; "unproved": z3 gave up within its limit. */
  status: "proven" | "unproved";
  code: string;
  message: string;
}
interface ContractResult {
  file: string;
  done: boolean;
  ms: number;
  queries: number;
  answers: Record<string, number>;
  proved: number;
  findings: Finding[];
  note?: string;
}
interface Accepted {
  file: string;
  kind: Kind;
  code: string;
  severity: "informational" | "low" | "medium" | "high";
  reason: string;
}

const KINDS: [RegExp, Kind][] = [
  [/Assertion violation/, "assert"],
  [/Underflow/, "underflow"],
  [/Overflow/, "overflow"],
  [/Division by zero/, "divByZero"],
  [/Condition is always/, "constantCondition"],
  [/Empty array "pop"/, "popEmptyArray"],
  [/Out of bounds access/, "outOfBounds"],
  [/Insufficient funds/, "balance"],
];

const normalise = (code: string) => code.replace(/\s+/g, " ").trim();

function contractFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".sol") ? [join(dir, entry.name)] : [],
    );
  // Interfaces hold no statements, so no verification target.
  return walk("contracts").filter((file) => !file.startsWith(join("contracts", "interfaces")));
}

function readSource(path: string): { contents: string } | { error: string } {
  for (const candidate of [join(ROOT, path), join(ROOT, "node_modules", path)]) {
    if (existsSync(candidate)) return { contents: readFileSync(candidate, "utf8") };
  }
  return { error: `not found: ${path}` };
}

/** Runs the SMTChecker on one file in this process (the child side of `analyzeFile`). */
function analyzeHere(file: string): ContractResult {
  const require = createRequire(import.meta.url);
  const solc = require("solc") as { compile(input: string, callbacks: object): string };
  const source = readFileSync(join(ROOT, file), "utf8");
  const names = [...source.matchAll(/^(?:abstract\s+)?(?:contract|library)\s+(\w+)/gm)].map((m) => m[1]!);
  const result: ContractResult = { file, done: true, ms: 0, queries: 0, answers: {}, proved: 0, findings: [] };
  if (names.length === 0) return { ...result, note: "no contract or library" };
  const scratch = mkdtempSync(join(tmpdir(), "analyze-contracts-"));
  const query = join(scratch, "query.smt2");
  const solve = (smtlib: string): { contents: string } => {
    result.queries++;
    writeFileSync(query, smtlib);
    let answer: string;
    try {
      answer = execFileSync(
        "z3",
        [
          "-smt2",
          `-T:${QUERY_WALL_S}`,
          `rlimit=${QUERY_RLIMIT}`,
          // solc-js's own z3 options (node_modules/solc/smtsolver.js), tuned for its Horn queries.
          "rewriter.pull_cheap_ite=true",
          "fp.spacer.q3.use_qgen=true",
          "fp.spacer.mbqi=false",
          "fp.spacer.ground_pobs=false",
          query,
        ],
        { encoding: "utf8", maxBuffer: 1 << 30, stdio: "pipe" },
      );
    } catch (error) {
      // z3 exits non-zero on "unknown" and on a timeout; its stdout still says which.
      answer = String((error as { stdout?: string }).stdout ?? "");
    }
    const verdict = answer.split("\n", 1)[0]!.trim();
    const known = ["sat", "unsat", "unknown"].includes(verdict) ? verdict : "unknown";
    // CHC queries are Horn systems: satisfiable means an invariant exists, so the target is safe.
    const meaning = { sat: "safe", unsat: "counterexample", unknown: "unknown" }[known]!;
    result.answers[meaning] = (result.answers[meaning] ?? 0) + 1;
    return { contents: known === verdict ? answer : "unknown\n" };
  };
  const started = Date.now();
  const input = {
    language: "Solidity",
    sources: { [file]: { content: source } },
    settings: {
      ...SETTINGS,
      outputSelection: { "*": { "": [] } },
      modelChecker: {
        engine: "chc",
        solvers: ["smtlib2"],
        contracts: { [file]: names },
        targets: TARGETS,
        showUnproved: true,
        showProvedSafe: true,
      },
    },
  };
  let output: {
    errors?: {
      severity: string;
      errorCode?: string;
      message: string;
      sourceLocation?: { file: string; start: number; end: number };
    }[];
  };
  try {
    output = JSON.parse(solc.compile(JSON.stringify(input), { import: readSource, smtSolver: solve }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  result.ms = Date.now() - started;
  for (const diagnostic of output.errors ?? []) {
    if (diagnostic.severity === "error") throw new Error(`${file}: ${diagnostic.message}`);
    if (!diagnostic.message.startsWith("CHC:")) continue;
    if (/is safe!$/.test(diagnostic.message)) {
      result.proved++;
      continue;
    }
    const kind = KINDS.find(([pattern]) => pattern.test(diagnostic.message))?.[1];
    const location = diagnostic.sourceLocation;
    if (!kind || !location) continue;
    const text = readSource(location.file);
    const contents = "contents" in text ? text.contents : "";
    // Offsets are in bytes.
    const bytes = Buffer.from(contents, "utf8");
    const before = bytes.subarray(0, location.start).toString("utf8");
    result.findings.push({
      file: location.file,
      line: before.split("\n").length,
      kind,
      status: /might happen/.test(diagnostic.message) ? "unproved" : "proven",
      code: normalise(bytes.subarray(location.start, location.end).toString("utf8")).slice(0, 200),
      message: diagnostic.message.split("\n", 1)[0]!,
    });
  }
  return result;
}

/** Analyzes one file in a child process, killed past the contract budget. */
function analyzeFile(file: string): Promise<ContractResult> {
  return new Promise((done, fail) => {
    const started = Date.now();
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--one", file], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      detached: true,
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => {
      // Its z3 child too: the whole process group.
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, CONTRACT_BUDGET_MS);
    child.once("error", fail);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      if (signal) {
        done({
          file,
          done: false,
          ms,
          queries: 0,
          answers: {},
          proved: 0,
          findings: [],
          note: `not analyzed: over the ${CONTRACT_BUDGET_MS / 1000} s budget`,
        });
      } else if (code !== 0) fail(new Error(`${file}: analyzer exited with ${code}`));
      else done(JSON.parse(stdout) as ContractResult);
    });
  });
}

function matches(entry: Accepted, finding: Finding): boolean {
  return entry.file === finding.file && entry.kind === finding.kind && normalise(entry.code) === finding.code;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args[0] === "--one") {
    process.stdout.write(JSON.stringify(analyzeHere(args[1]!)));
    return 0;
  }
  try {
    execFileSync("z3", ["--version"], { stdio: "ignore" });
  } catch {
    console.error("z3 is not installed (apt-get install -y z3)");
    return 2;
  }
  const files = args.length > 0 ? args.map((file) => relative(ROOT, resolve(file))) : contractFiles();
  const accepted = (JSON.parse(readFileSync(ACCEPTED, "utf8")) as { accepted: Accepted[] }).accepted;
  const started = Date.now();
  const results: ContractResult[] = [];
  // One at a time: each holds up to ~1.5 GB and a core.
  for (const file of files) {
    const result = await analyzeFile(file);
    results.push(result);
    const answers = Object.entries(result.answers)
      .map(([answer, count]) => `${count} ${answer}`)
      .join(", ");
    console.log(
      `${file}: ${result.done ? `${result.queries} queries (${answers || "none"})` : result.note}, ${(result.ms / 1000).toFixed(1)} s`,
    );
  }
  // A contract's inherited code is analyzed with it: report each finding once.
  const seen = new Map<string, Finding>();
  for (const finding of results.flatMap((result) => result.findings)) {
    seen.set(`${finding.file}:${finding.line}:${finding.kind}:${finding.code}`, finding);
  }
  const findings = [...seen.values()].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  let failures = 0;
  console.log("");
  for (const finding of findings) {
    const entry = accepted.find((candidate) => matches(candidate, finding));
    if (!entry) failures++;
    console.log(
      `${entry ? `accepted (${entry.severity})` : "NEW"}  ${finding.file}:${finding.line}  ${finding.kind} ${finding.status}  \`${finding.code}\``,
    );
  }
  const finished = new Set(results.filter((result) => result.done).map((result) => result.file));
  const complete = finished.size === contractFiles().length;
  for (const entry of accepted) {
    // An entry whose contract did not finish (or was not asked for) cannot be judged stale; one in
    // inherited code (OpenZeppelin) only after a complete run.
    const judged = finished.has(entry.file) || complete;
    if (judged && !findings.some((finding) => matches(entry, finding))) {
      failures++;
      console.log(`STALE  ${entry.file}  ${entry.kind}  \`${entry.code}\`: no such finding any more`);
    }
  }
  const byKind = new Map<string, number>();
  for (const finding of findings) byKind.set(finding.kind, (byKind.get(finding.kind) ?? 0) + 1);
  console.log(
    `\n${findings.length} findings (${[...byKind].map(([kind, count]) => `${kind} ${count}`).join(", ") || "none"}; ` +
      `${findings.filter((finding) => finding.status === "proven").length} with a counterexample), ` +
      `${results.filter((result) => !result.done).length} of ${results.length} files not analyzed within budget, ` +
      `${failures} not accepted or stale, ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  return failures === 0 ? 0 : 1;
}

process.exitCode = await main();
