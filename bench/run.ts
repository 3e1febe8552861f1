// `npm run bench`: every bench in turn on one compiled build, the load
// average sampled while each runs, then one report (bench/report.ts).
//   npm run bench -- --check          fail when a figure regressed against the committed table
//   npm run bench -- --only api,relay run only these benches
//   npm run bench -- --report         rewrite the report from the results already in bench/results
import { spawn, spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { ROOT } from "../scripts/lib/paths.ts";
import { type BenchRun, machine, report } from "./report.ts";

const BENCHES = ["contracts", "api", "relay", "webhooks", "indexer"] as const;

const { values } = parseArgs({
  options: {
    check: { type: "boolean", default: false },
    only: { type: "string" },
    report: { type: "boolean", default: false },
  },
});
const chosen = values.only ? values.only.split(",").map((s) => s.trim()) : [...BENCHES];
const unknown = chosen.filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")} (choose from ${BENCHES.join(", ")})`);
  process.exit(2);
}

const env = { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", PONDER_TELEMETRY_DISABLED: "true" };

async function run(name: string): Promise<BenchRun> {
  const startedAt = new Date();
  const samples: number[] = [loadavg()[0]!];
  const timer = setInterval(() => samples.push(loadavg()[0]!), 2_000);
  const exitCode = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", `bench/${name}.ts`], {
      cwd: ROOT,
      env,
      stdio: "inherit",
    });
    child.on("exit", (code) => resolve(code ?? 1));
  });
  clearInterval(timer);
  samples.push(loadavg()[0]!);
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    startedAt: startedAt.toISOString(),
    seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    exitCode,
    load: {
      min: round(sorted[0]!),
      median: round(sorted[Math.floor(sorted.length / 2)]!),
      max: round(sorted.at(-1)!),
      samples: samples.length,
    },
    machine: machine(),
  };
}

let runs: Record<string, BenchRun> | undefined;
if (!values.report) {
  const compiled = spawnSync("npm", ["run", "compile"], { cwd: ROOT, env, stdio: "inherit" });
  if (compiled.status !== 0) process.exit(compiled.status ?? 1);
  runs = {};
  for (const name of chosen) {
    console.log(`\n== bench ${name}`);
    runs[name] = await run(name);
  }
}
const { regressions } = await report({ check: values.check, runs });
console.log("\nwrote BENCHMARKS.md, bench/results/summary.json and bench/results/chart.png");
const failed = Object.entries(runs ?? {}).filter(([, r]) => r.exitCode !== 0);
if (failed.length > 0) console.error(`failed: ${failed.map(([n]) => n).join(", ")}`);
process.exit(failed.length > 0 || (values.check && regressions.length > 0) ? 1 : 0);
