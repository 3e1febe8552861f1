// Webhook delivery to a local receiver on 127.0.0.1: events delivered per
// second when a backlog is drained, and the time from the change that made an
// event (its createdAt: the time of the database transaction that wrote the
// change and its event) to the receiver's 2xx, while events are made live at
// a steady rate below that throughput (a saturated worker would measure its
// queue instead). Then a noisy neighbour: the same live events,
// timed without and then with another account's 64 deliveries queued to a
// receiver that answers after 20 s (the worker giving up at 5 s, as the probe
// had it), reported as medians and p99s and their ratios.
// The events are real: alerts an agent raises through POST /v1/agents/alerts,
// each written with its alert.raised event in one transaction. Writes
// bench/results/webhooks.json; reports figures, asserts none.
import { mkdirSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { createApp, loadConfig, openDatabase } from "@zsd/api";
import { ROOT } from "../scripts/lib/paths.ts";
import { summarize } from "./stats.ts";

const BACKLOG = Number(process.env.WEBHOOK_BENCH_BACKLOG ?? 1_000);
const LIVE = Number(process.env.WEBHOOK_BENCH_LIVE ?? 1_000);
/** Live events per second. */
const RATE = Number(process.env.WEBHOOK_BENCH_RATE ?? 50);
/** Requests in flight while the backlog is made (the API's callers, not the worker's concurrency). */
const PRODUCERS = 4;
/** The noisy neighbour: deliveries queued to its slow receiver, how slow, and the fast agent's events timed. */
const NOISY_QUEUED = 64;
const NOISY_ANSWER_MS = 20_000;
const NOISY_TIMEOUT_MS = 5_000;
const NEIGHBOUR_EVENTS = 100;
const NEIGHBOUR_RATE = 10;
/** The first two parts stop here, whatever is left; the noisy neighbour has its own minute after them. */
const DEADLINE_MS = 60_000;
const NEIGHBOUR_BUDGET_MS = 60_000;
let deadline = Date.now() + DEADLINE_MS;
const left = () => deadline - Date.now();

/** A receiver that takes `answerMs` to answer: another account's slow endpoint. */
function startSlowReceiver(answerMs: number) {
  let received = 0;
  const server: Server = createServer((req, res) => {
    received++;
    const timer = setTimeout(() => void (res.destroyed || res.writeHead(204).end()), answerMs);
    res.on("close", () => clearTimeout(timer));
    req.resume();
  });
  return {
    received: () => received,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A receiver that verifies each delivery as a real one would, and notes when it answered 2xx. */
function startReceiver(secret: () => string) {
  const answered = new Map<string, { createdAt: number; answeredAt: number }>();
  let duplicates = 0;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        const event = new Webhook(secret()).verify(
          Buffer.concat(chunks).toString("utf8"),
          req.headers as Record<string, string>,
        ) as { id: string; createdAt: string };
        res.writeHead(204).end();
        if (answered.has(event.id)) duplicates++;
        else answered.set(event.id, { createdAt: Date.parse(event.createdAt), answeredAt: Date.now() });
      } catch {
        refused++;
        res.writeHead(400).end();
      }
    });
  });
  return {
    answered,
    stats: () => ({ duplicates, refused }),
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(what: string, done: () => boolean): Promise<boolean> {
  while (!done()) {
    if (left() <= 0) {
      console.warn(`stopped at the deadline, waiting for ${what}`);
      return false;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

const db = await openDatabase({});
const config = loadConfig({
  LOG_LEVEL: "silent",
  // No chain or indexer: alerts on an address need neither.
  INDEXER_URL: "http://127.0.0.1:9",
  RPC_URL: "http://127.0.0.1:9",
  RATE_LIMIT_SANDBOX: "1000000",
  // The probe's: a fast receiver never comes near it; a slow one holds its slot this long.
  WEBHOOK_TIMEOUT_MS: String(NOISY_TIMEOUT_MS),
});
const { app, keys, webhooks } = createApp({ config, db });
const server = app.listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
let signingSecret = "";
const receiver = startReceiver(() => signingSecret);
const slowReceiver = startSlowReceiver(NOISY_ANSWER_MS);
try {
  const { secret } = await keys.create((await keys.createAccount("bench")).id, "sandbox", "bench");
  const post = async (path: string, body: unknown, key = secret) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const agent = await post("/v1/agents/register", {
    name: "bench receiver",
    webhookUrl: await receiver.listen(),
    events: ["alert.raised"],
    role: "observer",
  });
  signingSecret = agent.secret as string;
  let made = 0;
  const raise = () => {
    const n = made++;
    return post("/v1/agents/alerts", {
      agentId: agent.agentId,
      subject: { type: "address", id: `0x${n.toString(16).padStart(40, "0")}` },
      severity: "low",
      category: "bench",
      reason: "A benchmark alert",
    });
  };
  /** `count` alerts as fast as PRODUCERS callers go; each is one transaction with its event. */
  const produce = async (count: number) => {
    const target = made + count;
    await Promise.all(
      Array.from({ length: PRODUCERS }, async () => {
        while (made < target && left() > 0) await raise();
      }),
    );
  };
  /** `count` alerts at `perSecond`, whatever the answers' pace. */
  const produceAt = async (count: number, perSecond: number) => {
    const t0 = performance.now();
    const sent: Promise<unknown>[] = [];
    for (let i = 0; i < count && left() > 0; i++) {
      const wait = t0 + (i * 1000) / perSecond - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sent.push(raise());
    }
    await Promise.all(sent);
  };

  // 1. A backlog written with the worker stopped, then drained.
  await produce(BACKLOG);
  const backlog = made;
  const drainStart = performance.now();
  webhooks.start();
  const drained = await until("the backlog", () => receiver.answered.size >= backlog);
  const drainSeconds = (performance.now() - drainStart) / 1000;

  // 2. Events made while the worker runs: change → 2xx, each.
  const liveFrom = receiver.answered.size;
  const liveStart = performance.now();
  await produceAt(LIVE, RATE);
  const madeSeconds = (performance.now() - liveStart) / 1000;
  const live = made - backlog;
  const liveDone = await until("the live events", () => receiver.answered.size >= made);
  const liveSeconds = (performance.now() - liveStart) / 1000;
  const liveTo = receiver.answered.size;

  // 3. The noisy neighbour: the same live events at NEIGHBOUR_RATE, first alone, then with another
  // account's NOISY_QUEUED deliveries waiting on a receiver that answers after NOISY_ANSWER_MS.
  deadline = Date.now() + NEIGHBOUR_BUDGET_MS;
  // Alone means alone: what the first parts left undelivered goes first.
  let neighbourComplete = await until("the earlier events", () => receiver.answered.size >= made);
  const timedAt = async (perSecond: number) => {
    const from = receiver.answered.size;
    const target = made + NEIGHBOUR_EVENTS;
    await produceAt(NEIGHBOUR_EVENTS, perSecond);
    neighbourComplete =
      (await until("the fast agent's events", () => receiver.answered.size >= target)) && neighbourComplete;
    return [...receiver.answered.values()].slice(from).map((a) => a.answeredAt - a.createdAt);
  };
  const alone = await timedAt(NEIGHBOUR_RATE);
  const neighbourKey = (await keys.create((await keys.createAccount("noisy neighbour")).id, "sandbox", "noisy")).secret;
  const noisy = await post(
    "/v1/agents/register",
    {
      name: "20-second receiver",
      webhookUrl: await slowReceiver.listen(),
      events: ["mint.confirmed"],
      role: "observer",
    },
    neighbourKey,
  );
  for (let i = 0; i < NOISY_QUEUED; i++) await post(`/v1/agents/${noisy.agentId}/test`, {}, neighbourKey);
  await until("the slow receiver's first request", () => slowReceiver.received() > 0);
  const beside = await timedAt(NEIGHBOUR_RATE);
  const slowRequests = slowReceiver.received();
  await webhooks.stop();

  const latencies = [...receiver.answered.values()].slice(liveFrom, liveTo).map((a) => a.answeredAt - a.createdAt);
  const round = (v: number) => Math.round(v * 10) / 10;
  const results = {
    measuredAt: new Date().toISOString(),
    machine:
      "2 cores, PGlite in memory (one connection the API and the worker share), API, worker and receiver " +
      "in one process; noisy",
    // Other work on the machine moves these figures most: the load while measured.
    loadAverage1m: Math.round(loadavg()[0]! * 10) / 10,
    settings: {
      concurrency: config.WEBHOOK_CONCURRENCY,
      pollMs: config.WEBHOOK_POLL_MS,
      backlogProducers: PRODUCERS,
      liveRatePerSecond: RATE,
      receiver: "node:http on 127.0.0.1, verifying each delivery with standardwebhooks, answering 204",
    },
    backlog: {
      events: backlog,
      delivered: Math.min(liveTo, backlog),
      complete: drained,
      seconds: round(drainSeconds),
      deliveredPerSecond: round(Math.min(liveTo, backlog) / drainSeconds),
    },
    live: {
      events: live,
      delivered: liveTo - liveFrom,
      complete: liveDone && live === LIVE,
      madePerSecond: round(live / madeSeconds),
      deliveredPerSecond: round((liveTo - liveFrom) / liveSeconds),
      // Whether delivery kept up with the changes: 1 when every event was delivered as fast as it was made.
      keptUpRatio: Math.round(((liveTo - liveFrom) / liveSeconds / (live / madeSeconds)) * 100) / 100,
      // The live rate as a share of the backlog's throughput: how loaded the worker was while timed.
      loadRatio: Math.round((live / madeSeconds / (Math.min(liveTo, backlog) / drainSeconds)) * 100) / 100,
      changeTo2xxMs: summarize(latencies),
    },
    noisyNeighbour: {
      settings: {
        queued: NOISY_QUEUED,
        slowReceiverAnswerMs: NOISY_ANSWER_MS,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        agentConcurrency: config.WEBHOOK_AGENT_CONCURRENCY,
        accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
        breakerTimeouts: config.WEBHOOK_BREAKER_TIMEOUTS,
        fastEvents: NEIGHBOUR_EVENTS,
        fastRatePerSecond: NEIGHBOUR_RATE,
      },
      complete: neighbourComplete,
      // The fast agent's change → 2xx, alone and beside the neighbour's queue.
      aloneMs: summarize(alone),
      besideMs: summarize(beside),
      // 1 when the neighbour costs the fast agent nothing.
      medianRatio: Math.round((summarize(beside).median / summarize(alone).median) * 100) / 100,
      p99Ratio: Math.round((summarize(beside).p99 / summarize(alone).p99) * 100) / 100,
      // Attempts the slow receiver got meanwhile: its share of the pool, then its breaker's probes.
      slowReceiverRequests: slowRequests,
    },
    ...receiver.stats(),
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "webhooks.json"), JSON.stringify(results, null, 2) + "\n");
  const l = results.live.changeTo2xxMs;
  console.log(
    `\nbacklog of ${backlog} events drained in ${results.backlog.seconds} s: ${results.backlog.deliveredPerSecond}/s`,
  );
  console.log(
    `live: ${live} events made at ${results.live.madePerSecond}/s, delivered at ${results.live.deliveredPerSecond}/s ` +
      `(kept up ${results.live.keptUpRatio}); change → 2xx p50 ${l.median} ms, p99 ${l.p99} ms (max ${l.max})`,
  );
  const n = results.noisyNeighbour;
  console.log(
    `noisy neighbour (${NOISY_QUEUED} queued to a ${NOISY_ANSWER_MS / 1000} s receiver of another account): ` +
      `fast agent change → 2xx p50 ${n.aloneMs.median} → ${n.besideMs.median} ms (×${n.medianRatio}), ` +
      `p99 ${n.aloneMs.p99} → ${n.besideMs.p99} ms (×${n.p99Ratio}); the slow receiver got ${n.slowReceiverRequests} requests`,
  );
  console.log(`${results.duplicates} duplicate deliveries, ${results.refused} refused signatures`);
  console.log("\nwrote bench/results/webhooks.json");
} finally {
  await webhooks.stop();
  await receiver.close();
  await slowReceiver.close();
  server.close();
  await db.close();
}
