// Throughput and latency of GET /v1/supply with a valid key, against a bare
// Express "hello" measured in the same run. Writes bench/results/api.json.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { KeyService, openDatabase } from "@zsd/api";
import { freePort, startHardhatNode } from "../scripts/lib/hardhat-node.ts";
import { startIndexer, waitForBlock } from "../scripts/lib/indexer-process.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { releaseProver } from "@zsd/sdk/notes";
import { ZEC, ZSD, accounts, createSystem } from "@zsd/testkit";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 20;
const TARGETS = { throughputRatio: 0.5, p99Ms: 20 };

// BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each served process there, to find what a request costs.
const CPU_PROF = process.env.BENCH_CPU_PROF;

async function startProcess(script: string, env: Record<string, string>, readyUrl: string): Promise<ChildProcess> {
  const profile = CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", CPU_PROF] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${script} did not answer ${readyUrl}`);
    try {
      if ((await fetch(readyUrl)).ok) return child;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function load(url: string, headers: Record<string, string> = {}) {
  // Warm-up, then the measured run.
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers });
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 },
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const dir = mkdtempSync(join(tmpdir(), "zsd-bench-api-"));
const node = await startHardhatNode();
const children: ChildProcess[] = [];
let stopIndexer: (() => Promise<void>) | undefined;
try {
  const s = await createSystem(node.rpcUrl);
  await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 300n * ZSD, recipient: accounts.alice.address });
  const deploymentFile = join(dir, "deployment.json");
  writeFileSync(deploymentFile, JSON.stringify(s.deployment));
  const indexer = await startIndexer({
    rpcUrl: node.rpcUrl,
    deploymentFile,
    pgliteDirectory: join(dir, "pglite"),
    schema: "zsd_bench",
  });
  stopIndexer = indexer.stop;
  await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });

  const pgliteDirectory = join(dir, "api");
  const db = await openDatabase({ directory: pgliteDirectory });
  const keys = new KeyService(db);
  const { secret } = await keys.create((await keys.createAccount("bench")).id, "sandbox", "bench");
  await db.close();

  const apiPort = await freePort();
  children.push(
    await startProcess(
      "api/src/index.ts",
      {
        PORT: String(apiPort),
        PGLITE_DIRECTORY: pgliteDirectory,
        INDEXER_URL: indexer.url,
        RPC_URL: node.rpcUrl,
        RATE_LIMIT_SANDBOX: "1000000000",
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
      },
      `http://127.0.0.1:${apiPort}/v1/health`,
    ),
  );
  const barePort = await freePort();
  children.push(
    await startProcess("bench/bare-express.ts", { PORT: String(barePort) }, `http://127.0.0.1:${barePort}/hello`),
  );

  const bare = await load(`http://127.0.0.1:${barePort}/hello`);
  const supply = await load(`http://127.0.0.1:${apiPort}/v1/supply`, { authorization: `Bearer ${secret}` });
  const ratio = Math.round((supply.requestsPerSecond / bare.requestsPerSecond) * 100) / 100;
  const results = {
    measuredAt: new Date().toISOString(),
    machine: "2 cores, load generator on the same machine; noisy",
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    bareExpressHello: bare,
    supplyWithKey: supply,
    throughputRatio: ratio,
    notes: "GET /v1/supply authenticates, rate-limits, logs, and reads the indexer through a 250 ms shared cache",
    targets: TARGETS,
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "api.json"), JSON.stringify(results, null, 2) + "\n");
  console.log(
    `\nbare Express hello      ${bare.requestsPerSecond} req/s, p50 ${bare.latencyMs.p50} ms, p99 ${bare.latencyMs.p99} ms`,
  );
  console.log(
    `GET /v1/supply (key)    ${supply.requestsPerSecond} req/s, p50 ${supply.latencyMs.p50} ms, p99 ${supply.latencyMs.p99} ms, non-2xx ${supply.non2xx}`,
  );
  console.log(
    `throughput ratio        ${ratio} (target >= ${TARGETS.throughputRatio}); p99 target <= ${TARGETS.p99Ms} ms`,
  );
  console.log("\nwrote bench/results/api.json");
} finally {
  // Both servers exit on SIGTERM; waiting lets a profiled one write its profile.
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          const timer = setTimeout(resolve, 10_000);
          child.once("exit", () => (clearTimeout(timer), resolve()));
          child.kill("SIGTERM");
        }),
    ),
  );
  await stopIndexer?.();
  await releaseProver();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
}
