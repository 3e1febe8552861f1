// A second static analyzer for contracts/ besides solhint: solc's SMTChecker (the compiler's own
// model checker, from the `solc` npm package already pinned for Hardhat) answered by Debian's z3
// binary through solc-js's SMT callback, with the CHC engine unless PLANS names BMC for the file.
// solc-js's built-in z3 cannot run here (its wasm build has no threads), and slither, aderyn and
// mythril are not on npm.
//
// Usage: tsx scripts/analyze-contracts.ts [contracts/X.sol ...]
// (ANALYZE_ENGINE=chc|bmc runs every named file with that engine instead of its plan;
// ANALYZE_PARTS="assert,divByZero;overflow" in those parts, one run of solc-js each.)
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
const RLIMIT_FORCED = process.env.ANALYZE_QUERY_RLIMIT !== undefined;
const QUERY_WALL_S = 60;
// Past its budget a contract is reported as not analyzed instead of holding the run. A plan's own
// budget is for files measured to need longer; the environment can raise both on a slow machine.
const CONTRACT_BUDGET_MS = Number(process.env.ANALYZE_CONTRACT_BUDGET_MS ?? 120_000);
type Engine = "chc" | "bmc";
interface Plan {
  engine: Engine;
  /** For the whole file, all its parts together. */
  budgetMs?: number;
  rlimit?: number;
  /**
   * Runs the file once per part, each with only these targets (its findings and counts are the
   * parts' together). BMC keeps a copy of the path's constraints for every target until the end of
   * the file, so a large file with every target runs solc-js out of its 2 GB of memory.
   */
  parts?: Kind[][];
  why: string;
}
// CHC proves a property over every reachable state (all transactions in any order), but solc
// encodes a contract with everything it inherits into one Horn system, sent whole with every
// query: GovernanceToken's is 100 MB (56 s to encode, then ~7 s a query, every one "unknown" at
// the limit below since z3 spends it parsing). BMC checks each public function on its own from an
// arbitrary state (no invariant across transactions, loops unrolled once): its queries stay small
// and z3 answers many, but a counterexample may start from a state no transaction reaches, so its
// findings are read as such in the accepted list. Measured on 2 loaded cores:
const BMC_RLIMIT = 500_000;
const PLANS: Record<string, Plan> = {
  // 28 queries, 5 safe, 61-71 s: near the default budget under load.
  "contracts/governance/StableTimelock.sol": { engine: "chc", budgetMs: 300_000, why: "finishes, slowly" },
  // CHC: over 120 s. BMC: 94 queries (39 unsatisfiable, 51 unknown), 26 s; the same answers at
  // rlimit 500,000 as at 2,000,000 (no answered query used more than 66,121).
  "contracts/verifiers/Groth16BatchVerifier.sol": { engine: "bmc", rlimit: BMC_RLIMIT, why: "CHC over budget" },
  // CHC: over 120 s. BMC: 222 queries (129 sat, 12 unsat, 81 unknown), 317 s under load; answered
  // queries used up to 359,301 of the limit, and an unknown one takes ~1.5 s at 500,000 against
  // ~8 s at 2,000,000, which is what makes the file finish.
  "contracts/libraries/RatioBuckets.sol": {
    engine: "bmc",
    rlimit: BMC_RLIMIT,
    budgetMs: 900_000,
    why: "CHC over budget",
  },
  // CHC: over budget. BMC spends ~6 min encoding in solc-js (z3 answers in seconds) whatever the
  // targets, and keeps every target's constraints until the end: with all targets it runs out of
  // solc-js's 2 GB heap (std::bad_alloc at 364 s, 44 queries), and with overflow alone too (at
  // ~386 s). In two parts it finishes: 82 queries in 362 s, then underflow 52 in 392 s. Overflow
  // is not checked in this file (see docs/reference/static-analysis.md).
  "contracts/CollateralRegistry.sol": {
    engine: "bmc",
    rlimit: BMC_RLIMIT,
    budgetMs: 1_500_000,
    parts: [["assert", "divByZero", "constantCondition", "popEmptyArray", "outOfBounds", "balance"], ["underflow"]],
    why: "CHC over budget; BMC with every target, or with overflow alone, out of memory",
  },
};
const FORCED_ENGINE = process.env.ANALYZE_ENGINE || undefined;
if (FORCED_ENGINE && FORCED_ENGINE !== "chc" && FORCED_ENGINE !== "bmc") {
  throw new Error(`ANALYZE_ENGINE must be chc or bmc, not ${FORCED_ENGINE}`);
}
// ANALYZE_PARTS="assert,divByZero;overflow" runs every named file in those parts instead of its plan's.
const FORCED_PARTS = process.env.ANALYZE_PARTS
  ? process.env.ANALYZE_PARTS.split(";").map((part) =>
      part.split(",").map((target) => {
        const kind = target.trim() as Kind;
        if (!TARGETS.includes(kind)) throw new Error(`ANALYZE_PARTS: no target ${target} (${TARGETS.join(", ")})`);
        return kind;
      }),
    )
  : undefined;
function planOf(file: string): Plan {
  let plan = PLANS[file] ?? { engine: "chc", why: "default" };
  if (FORCED_ENGINE) plan = { ...plan, engine: FORCED_ENGINE as Engine, why: "ANALYZE_ENGINE" };
  if (FORCED_PARTS) plan = { ...plan, parts: FORCED_PARTS, why: "ANALYZE_PARTS" };
  return plan;
}
// Same as hardhat.config.cts; the optimizer does not change what the SMTChecker sees.
const SETTINGS = { evmVersion: "cancun", optimizer: { enabled: true, runs: 10_000 } };

type Kind = (typeof TARGETS)[number];
export interface Finding {
  file: string;
  engine: Engine;
  line: number;
  kind: Kind;
  /**
   * "proven": z3 found a counterexample (for BMC, from an arbitrary state of the one function:
   * possibly unreachable); "unproved": z3 gave up within its limit.
   */
  status: "proven" | "unproved";
  code: string;
  message: string;
}
interface ContractResult {
  file: string;
  engine: Engine;
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
function analyzeHere(file: string, scratch: string, targets: readonly Kind[]): ContractResult {
  const plan = planOf(file);
  const { engine } = plan;
  const rlimit = RLIMIT_FORCED ? QUERY_RLIMIT : (plan.rlimit ?? QUERY_RLIMIT);
  const require = createRequire(import.meta.url);
  const solc = require("solc") as { compile(input: string, callbacks: object): string };
  const source = readFileSync(join(ROOT, file), "utf8");
  const names = [...source.matchAll(/^(?:abstract\s+)?(?:contract|library)\s+(\w+)/gm)].map((m) => m[1]!);
  const result: ContractResult = { file, engine, done: true, ms: 0, queries: 0, answers: {}, proved: 0, findings: [] };
  if (names.length === 0) return { ...result, note: "no contract or library" };
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
          `rlimit=${rlimit}`,
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
    // BMC asks whether a violation (or, for a constant condition, each branch) is satisfiable.
    const meaning = (
      engine === "chc"
        ? { sat: "safe", unsat: "counterexample", unknown: "unknown" }
        : { sat: "satisfiable", unsat: "unsatisfiable", unknown: "unknown" }
    )[known]!;
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
        engine,
        solvers: ["smtlib2"],
        contracts: { [file]: names },
        targets,
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
  output = JSON.parse(solc.compile(JSON.stringify(input), { import: readSource, smtSolver: solve }));
  result.ms = Date.now() - started;
  for (const diagnostic of output.errors ?? []) {
    if (diagnostic.severity === "error") throw new Error(`${file}: ${diagnostic.message}`);
    if (!diagnostic.message.startsWith(`${engine.toUpperCase()}:`)) continue;
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
      engine,
      line: before.split("\n").length,
      kind,
      status: /might happen/.test(diagnostic.message) ? "unproved" : "proven",
      code: normalise(bytes.subarray(location.start, location.end).toString("utf8")).slice(0, 200),
      message: diagnostic.message.split("\n", 1)[0]!,
    });
  }
  return result;
}

/** Analyzes one file, part after part, each in a child process killed past what is left of the budget. */
async function analyzeFile(file: string): Promise<ContractResult> {
  const plan = planOf(file);
  const budgetMs = Math.max(CONTRACT_BUDGET_MS, plan.budgetMs ?? 0);
  const started = Date.now();
  const merged: ContractResult = {
    file,
    engine: plan.engine,
    done: true,
    ms: 0,
    queries: 0,
    answers: {},
    proved: 0,
    findings: [],
  };
  const parts = plan.parts ?? [TARGETS];
  for (const [index, targets] of parts.entries()) {
    const part = await analyzePart(file, targets, budgetMs - (Date.now() - started));
    const label = parts.length > 1 ? ` (part ${index + 1} of ${parts.length}: ${targets.join(", ")})` : "";
    if (!part.done) return { ...merged, done: false, ms: Date.now() - started, note: `${part.note}${label}` };
    merged.queries += part.queries;
    merged.proved += part.proved;
    merged.findings.push(...part.findings);
    for (const [answer, count] of Object.entries(part.answers)) {
      merged.answers[answer] = (merged.answers[answer] ?? 0) + count;
    }
    if (parts.length > 1) {
      console.log(`  ${file}${label}: ${part.queries} queries, ${(part.ms / 1000).toFixed(1)} s`);
    }
  }
  return { ...merged, ms: Date.now() - started };
}

function analyzePart(file: string, targets: readonly Kind[], budgetMs: number): Promise<ContractResult> {
  const plan = planOf(file);
  return new Promise((done, fail) => {
    const started = Date.now();
    // Made here, not in the child, so that a child killed over budget leaves no query behind.
    const scratch = mkdtempSync(join(tmpdir(), "analyze-contracts-"));
    // solc-js recurses through JavaScript frames on deep expressions (BMC on PositionManager and
    // GovernanceToken ran out of node's default ~1 MB stack); 7,800 KB stays under the usual 8 MB
    // thread stack.
    const args = [
      ...process.execArgv,
      "--stack-size=7800",
      fileURLToPath(import.meta.url),
      "--one",
      file,
      scratch,
      targets.join(","),
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"], detached: true });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    let overBudget = false;
    const timer = setTimeout(() => {
      overBudget = true;
      // Its z3 child too: the whole process group.
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    }, budgetMs);
    child.once("error", fail);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      rmSync(scratch, { recursive: true, force: true });
      const ms = Date.now() - started;
      const notAnalyzed = (note: string) =>
        done({ file, engine: plan.engine, done: false, ms, queries: 0, answers: {}, proved: 0, findings: [], note });
      if (overBudget) {
        notAnalyzed(`not analyzed: over the ${Math.max(CONTRACT_BUDGET_MS, plan.budgetMs ?? 0) / 1000} s budget`);
      } else if (signal || code !== 0) {
        // solc-js can run out of stack on a deep contract: a file not analyzed, not a broken run.
        notAnalyzed(`not analyzed: the analyzer exited with ${signal ?? code}`);
      } else done(JSON.parse(stdout) as ContractResult);
    });
  });
}

function matches(entry: Accepted, finding: Finding): boolean {
  return entry.file === finding.file && entry.kind === finding.kind && normalise(entry.code) === finding.code;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args[0] === "--one") {
    process.stdout.write(JSON.stringify(analyzeHere(args[1]!, args[2]!, args[3]!.split(",") as Kind[])));
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
      `${file} (${result.engine.toUpperCase()}): ${result.done ? `${result.queries} queries (${answers || "none"})` : result.note}, ${(result.ms / 1000).toFixed(1)} s`,
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
      `${entry ? `accepted (${entry.severity})` : "NEW"}  ${finding.file}:${finding.line}  ${finding.kind} ${finding.status} (${finding.engine.toUpperCase()})  \`${finding.code}\``,
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
