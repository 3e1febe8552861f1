// `npm run idle-cpu`: what `npm start`'s stack costs doing nothing. Starts
// scripts/dev.ts on free ports with its embedded defaults (PGlite), lets it
// settle past the relay's busy minute after start, then samples each
// process's CPU time (/proc utime + stime, all its threads, and its child
// processes) over consecutive windows and prints the cores each used, per
// window and as the median of the windows. CPU time, not the machine's load:
// on a shared machine others' work does not enter it.
//
//   npm run idle-cpu -- --samples 3 --seconds 60 --settle 90 [--out file.json]
//
// Like `npm start`, it rewrites deployments/localhost.json and build/dev:
// stop `npm start` (and any soak) first.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { freePort } from "./lib/hardhat-node.ts";
import { ROOT } from "./lib/paths.ts";
import { cpuCores, sampleProcesses } from "./lib/processes.ts";

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "3" },
    seconds: { type: "string", default: "60" },
    settle: { type: "string", default: "90" },
    out: { type: "string" },
  },
});
const SAMPLES = Number(values.samples);
const SECONDS = Number(values.seconds);
const SETTLE_S = Number(values.settle);
for (const [name, v] of Object.entries({ SAMPLES, SECONDS, SETTLE_S })) {
  if (!Number.isFinite(v) || v < 0 || v > 3600) throw new Error(`--${name.toLowerCase()} must be 0..3600`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const child = spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], {
  cwd: ROOT,
  env: {
    ...process.env,
    CHAIN_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    API_PORT: String(await freePort()),
    HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
    PONDER_TELEMETRY_DISABLED: "true",
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const stop = () =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
process.once("SIGINT", () => void stop().then(() => process.exit(130)));

try {
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack did not start in 5 minutes:\n${out}`)), 300_000);
    child.once("exit", (code) => reject(new Error(`npm start exited ${code}:\n${out}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (/^key:/m.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  console.log(`stack up; settling ${SETTLE_S} s, then ${SAMPLES} × ${SECONDS} s at rest`);
  await sleep(SETTLE_S * 1000);
  const windows: Record<string, number>[] = [];
  let from = sampleProcesses(child.pid!);
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(SECONDS * 1000);
    const to = sampleProcesses(child.pid!);
    windows.push(cpuCores(from, to, SECONDS));
    console.log(`window ${i + 1}: ${JSON.stringify(windows.at(-1))} cores`);
    from = to;
  }
  const names = [...new Set(windows.flatMap((w) => Object.keys(w)))];
  const medians = Object.fromEntries(
    names.map((name) => [name, Math.round(median(windows.map((w) => w[name] ?? 0)) * 1000) / 1000]),
  );
  console.log("\nmedian cores at rest:");
  for (const [name, cores] of Object.entries(medians)) console.log(`  ${name.padEnd(22)} ${cores.toFixed(3)}`);
  if (values.out) {
    const result = { date: new Date().toISOString(), samples: SAMPLES, seconds: SECONDS, windows, medians };
    writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
  }
} finally {
  await stop();
}
