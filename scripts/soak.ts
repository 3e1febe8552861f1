// `npm run soak -- --minutes 10`: starts the `npm start` stack (scripts/dev.ts)
// on free ports, measures what it costs at rest, then drives steady, bounded,
// mixed traffic through the SDK (reads, deposits, mints with real proofs,
// redemptions, repayments and closes, webhook deliveries to a local receiver)
// and reports the error rate, p50/p99 per route, queue depths, and each
// process's memory and CPU. Memory that keeps growing fails the run.
//
// Like `npm start`, it rewrites deployments/localhost.json and build/dev:
// stop `npm start` first. The stack runs on a fresh PostgreSQL database (made
// with TEST_POSTGRES_URL, dropped after) and on Redis (REDIS_URL, by default
// the local one), as a deployment would; `--pglite` keeps npm start's
// embedded defaults instead.
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { privateKeyToAccount } from "viem/accounts";
import { Zsd } from "@zsd/sdk/client";
import { releaseProver } from "@zsd/sdk/notes";
import { createTestDatabase } from "@zsd/testkit";
import { hardhatPrivateKey } from "./lib/accounts.ts";
import { freePort } from "./lib/hardhat-node.ts";
import { type ProcSample, cpuCores, sampleProcesses } from "./lib/processes.ts";
import { ROOT } from "./lib/paths.ts";
import { summarize } from "../bench/stats.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    "idle-seconds": { type: "string", default: "60" },
    "reads-per-second": { type: "string", default: "5" },
    "cycle-seconds": { type: "string", default: "20" },
    pglite: { type: "boolean", default: false },
  },
});
const MINUTES = Number(values.minutes);
const IDLE_S = Number(values["idle-seconds"]);
const READS_PER_S = Number(values["reads-per-second"]);
const CYCLE_S = Number(values["cycle-seconds"]);
for (const [name, v] of Object.entries({ MINUTES, IDLE_S, READS_PER_S, CYCLE_S })) {
  if (!Number.isFinite(v) || v <= 0 || v > 24 * 60 * 60) throw new Error(`${name} must be a positive number`);
}
const SAMPLE_MS = 15_000;
const WITHDRAW_ADDRESS = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

// --- timings of every request, by route --------------------------------------

const timings = new Map<string, number[]>();
/** 5xx answers and network errors by route; 503s (an upstream said so) are also counted apart. */
const failures = new Map<string, number>();
const unavailable = new Map<string, number>();
const template = (url: string) =>
  new URL(url).pathname
    .split("/")
    .map((part) => (/^(0x[0-9a-fA-F]+|\d+|[a-z]+_[0-9A-Za-z]+)$/.test(part) ? ":id" : part))
    .join("/");
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const key = `${(init?.method ?? "GET").toUpperCase()} ${template(url)}`;
  const started = performance.now();
  try {
    const response = await realFetch(input, init);
    if (response.status >= 500) failures.set(key, (failures.get(key) ?? 0) + 1);
    if (response.status === 503) unavailable.set(key, (unavailable.get(key) ?? 0) + 1);
    return response;
  } catch (error) {
    failures.set(key, (failures.get(key) ?? 0) + 1);
    throw error;
  } finally {
    const list = timings.get(key) ?? [];
    list.push(performance.now() - started);
    timings.set(key, list);
  }
};

// --- the stack ---------------------------------------------------------------

const database = values.pglite ? undefined : await createTestDatabase("zsd_soak");
const storage = database
  ? { DATABASE_URL: database.url, REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" }
  : {};

async function startStack(): Promise<{ child: ChildProcess; apiUrl: string; key: string }> {
  const env = {
    ...process.env,
    ...storage,
    CHAIN_PORT: String(await freePort()),
    INDEXER_PORT: String(await freePort()),
    API_PORT: String(await freePort()),
    HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
    PONDER_TELEMETRY_DISABLED: "true",
    // The soak measures the stack, not the sandbox's 100 requests a minute per account.
    RATE_LIMIT_SANDBOX: "1000000",
  };
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack did not start in 5 minutes:\n${out}`)), 300_000);
    child.on("exit", (code) => reject(new Error(`npm start exited ${code}:\n${out}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const key = /key:\s+(sk_test_\w+)/.exec(out)?.[1];
      const api = /api:\s+(http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out)?.[1];
      if (key && api) {
        clearTimeout(timer);
        resolve({ child, apiUrl: api.replace(/\/v1$/, ""), key });
      }
    });
  });
}

// --- the webhook receiver ------------------------------------------------------

function startReceiver(): Promise<{
  server: Server;
  url: string;
  received: Map<string, number>;
  secret: { value?: string };
}> {
  const received = new Map<string, number>();
  const secret: { value?: string } = {};
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      // Standard Webhooks: HMAC-SHA256 over "id.timestamp.body" with the base64 secret after "whsec_".
      const expected = secret.value
        ? createHmac("sha256", Buffer.from(secret.value.replace(/^whsec_/, ""), "base64"))
            .update(`${id}.${String(req.headers["webhook-timestamp"])}.${body}`)
            .digest("base64")
        : "";
      const signed = String(req.headers["webhook-signature"] ?? "")
        .split(" ")
        .some((s) => s === `v1,${expected}`);
      if (!signed) return void res.writeHead(401).end();
      received.set(id, (received.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}/zsd`, received, secret });
    }),
  );
}

// --- the run -----------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ops = { cycles: 0, deposits: 0, mints: 0, redemptions: 0, repayments: 0, closes: 0, reads: 0 };
const opErrors: { op: string; message: string }[] = [];

const { child, apiUrl, key } = await startStack();
const root = child.pid!;
const receiver = await startReceiver();
try {
  // Past the start's busy minute (the relay's and webhooks' fast polls, the dev chain's block a
  // second after the price feed's first transaction): 20 s measured that minute, not the rest.
  console.log(`stack up at ${apiUrl}; settling 90 s, then ${IDLE_S} s at rest`);
  await sleep(90_000);
  const idleFrom = sampleProcesses(root);
  await sleep(IDLE_S * 1000);
  const idleTo = sampleProcesses(root);
  const idle = cpuCores(idleFrom, idleTo, IDLE_S);
  console.log(`at rest: ${JSON.stringify(idle)} cores`);

  const zsd = new Zsd(key, { baseUrl: apiUrl });
  const wallet = privateKeyToAccount(hardhatPrivateKey(15));
  const agent = await zsd.agents.register({
    name: "soak receiver",
    webhookUrl: receiver.url,
    events: ["deposit.recorded", "mint.confirmed", "redemption.paid", "position.action.confirmed"],
    role: "observer",
  });
  receiver.secret.value = agent.secret ?? undefined;

  const series: { at: number; processes: ProcSample[]; relay: string }[] = [];
  const metricsLine = async () => {
    const text = await (await realFetch(`${apiUrl}/metrics`)).text();
    return text
      .split("\n")
      .filter((l) => l.startsWith("zsd_relay_items{") && !l.endsWith(" 0"))
      .map((l) => l.replace("zsd_relay_items", ""))
      .join(" ");
  };
  const deadline = Date.now() + MINUTES * 60_000;
  const trafficFrom = sampleProcesses(root);
  const trafficStarted = Date.now();
  series.push({ at: 0, processes: trafficFrom, relay: await metricsLine() });

  const sampler = (async () => {
    while (Date.now() < deadline) {
      await sleep(SAMPLE_MS);
      series.push({
        at: Math.round((Date.now() - trafficStarted) / 1000),
        processes: sampleProcesses(root),
        relay: await metricsLine().catch((e: unknown) => `metrics failed: ${String(e)}`),
      });
    }
  })();

  const reads = ["/v1/supply", "/v1/collateral", "/v1/health", "/v1/relay", "/v1/health/ready", "/v1/prices/peg"];
  const reader = (async () => {
    for (let i = 0; Date.now() < deadline; i++) {
      const path = reads[i % reads.length]!;
      const response = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      ops.reads++;
      if (!response.ok) opErrors.push({ op: `GET ${path}`, message: String(response.status) });
      await sleep(1000 / READS_PER_S);
    }
  })();

  const money = (async () => {
    while (Date.now() < deadline) {
      const started = Date.now();
      const step = async <T>(op: string, run: () => Promise<T>): Promise<T | undefined> => {
        try {
          return await run();
        } catch (error) {
          opErrors.push({ op, message: error instanceof Error ? error.message : String(error) });
          return undefined;
        }
      };
      const note = zsd.notes.create();
      const deposit = await step("deposit", () => zsd.sandbox.depositNote(note, "4"));
      if (deposit) ops.deposits++;
      const mint = deposit && (await step("mint", () => zsd.mint({ note, amount: "100", recipient: wallet.address })));
      if (mint) ops.mints++;
      if (
        mint &&
        (await step("redeem", () => zsd.redeem({ amount: "10", withdrawAddress: WITHDRAW_ADDRESS, signer: wallet })))
      )
        ops.redemptions++;
      const positionId = (mint as { positionId?: string } | undefined)?.positionId;
      if (positionId && (await step("repay", () => zsd.repayPosition({ positionId, amount: "10", signer: wallet }))))
        ops.repayments++;
      if (positionId && ops.cycles % 3 === 0) {
        const closed = await step("close", () =>
          zsd.closePosition({ positionId, note, payer: wallet, to: { zcashAddress: WITHDRAW_ADDRESS } }),
        );
        if (closed) ops.closes++;
      }
      ops.cycles++;
      await sleep(Math.max(0, CYCLE_S * 1000 - (Date.now() - started)));
    }
  })();

  await Promise.all([reader, money, sampler]);
  const trafficTo = sampleProcesses(root);
  const trafficSeconds = (Date.now() - trafficStarted) / 1000;
  // Deliveries still due get a minute to arrive.
  const deliveries = async () => (await zsd.agents.deliveries(agent.agentId)) as { data: { status: string }[] };
  for (let i = 0; i < 60 && (await deliveries()).data.some((d) => d.status === "pending"); i++) await sleep(1000);

  const routes: Record<string, ReturnType<typeof summarize> & { failures: number; unavailable: number }> = {};
  for (const [route, list] of [...timings].sort())
    routes[route] = {
      ...summarize(list),
      failures: failures.get(route) ?? 0,
      unavailable: unavailable.get(route) ?? 0,
    };
  const requests = [...timings.values()].reduce((a, l) => a + l.length, 0);
  const failed = [...failures.values()].reduce((a, b) => a + b, 0);
  const answered503 = [...unavailable.values()].reduce((a, b) => a + b, 0);

  // A trend, not a level: memory of each process over the last two thirds of
  // the run, least-squares slope, as MiB per hour; a process that grows by
  // more than half its size in an hour at that pace is leaking. The Hardhat
  // node is reported, not judged: it keeps every block in memory by design.
  const growth: Record<string, { startMiB: number; endMiB: number; slopeMiBPerHour: number; growing: boolean }> = {};
  const later = series.slice(Math.floor(series.length / 3));
  for (const proc of trafficTo) {
    const points = later
      .map((s) => ({ t: s.at / 3600, y: s.processes.find((p) => p.pid === proc.pid)?.rssMiB }))
      .filter((p): p is { t: number; y: number } => p.y !== undefined);
    if (points.length < 3) continue;
    const mt = points.reduce((a, p) => a + p.t, 0) / points.length;
    const my = points.reduce((a, p) => a + p.y, 0) / points.length;
    const slope =
      points.reduce((a, p) => a + (p.t - mt) * (p.y - my), 0) / points.reduce((a, p) => a + (p.t - mt) ** 2, 0);
    const startMiB = trafficFrom.find((p) => p.pid === proc.pid)?.rssMiB ?? proc.rssMiB;
    growth[proc.name] = {
      startMiB,
      endMiB: proc.rssMiB,
      slopeMiBPerHour: Math.round(slope),
      // A few minutes are warm-up (JIT, caches, pools): shorter runs report the slope without judging it.
      growing: MINUTES >= 5 && slope > startMiB / 2 && !proc.name.startsWith("chain"),
    };
  }
  const received = [...receiver.received.values()];
  const result = {
    measuredAt: new Date().toISOString(),
    minutes: MINUTES,
    settings: { readsPerSecond: READS_PER_S, cycleSeconds: CYCLE_S, idleSeconds: IDLE_S },
    storage: database ? "PostgreSQL" : "PGlite",
    redis: database ? storage.REDIS_URL : null,
    idleCpuCores: idle,
    trafficCpuCores: cpuCores(trafficFrom, trafficTo, trafficSeconds),
    ops,
    opErrors: opErrors.slice(0, 50),
    errorRate: requests === 0 ? 0 : Math.round((failed / requests) * 10_000) / 10_000,
    unavailableRate: requests === 0 ? 0 : Math.round((answered503 / requests) * 10_000) / 10_000,
    requests,
    routes,
    webhooks: {
      deliveriesReceived: received.length,
      duplicates: received.filter((n) => n > 1).length,
      pendingAtEnd: (await deliveries()).data.filter((d) => d.status === "pending").length,
    },
    queueDepths: series.map((s) => ({ at: s.at, relay: s.relay })),
    memory: growth,
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "soak.json"), JSON.stringify(result, null, 2) + "\n");

  console.log(
    `\n${MINUTES} min soak: ${requests} requests, ${failed} 5xx or network errors (${answered503} of them 503), ops ${JSON.stringify(ops)}`,
  );
  for (const [route, s] of Object.entries(routes))
    console.log(
      `  ${route.padEnd(44)} n ${String(s.n).padStart(5)}  p50 ${s.median} ms  p99 ${s.p99} ms${s.failures ? `  ${s.failures} failed (${s.unavailable} × 503)` : ""}`,
    );
  console.log(`at rest: ${idle.total} cores; under traffic: ${result.trafficCpuCores.total} cores`);
  for (const [name, g] of Object.entries(growth))
    console.log(
      `  ${name.padEnd(24)} ${g.startMiB} -> ${g.endMiB} MiB (${g.slopeMiBPerHour} MiB/h)${g.growing ? " GROWING" : ""}`,
    );
  console.log(`webhooks: ${JSON.stringify(result.webhooks)}`);
  if (opErrors.length) console.log(`errors:\n  ${opErrors.map((e) => `${e.op}: ${e.message}`).join("\n  ")}`);
  console.log("wrote bench/results/soak.json");
  // An upstream's honest 503 is reported; a 500, a lost connection or a failed money path fails the soak.
  const bad =
    failed > answered503 ||
    opErrors.length > 0 ||
    Object.values(growth).some((g) => g.growing) ||
    result.webhooks.duplicates > 0;
  process.exitCode = bad ? 1 : 0;
} finally {
  receiver.server.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await releaseProver();
  await database?.drop();
}
process.exit();
