// One tenant's slow receiver must not delay anyone else's webhooks. A
// review's probe: account A's receiver answers after 20 s (the worker gives up
// at 5 s), account B's at once; B's ping took 565 ms with none of A's queued,
// 3.5 s with 16 and 28.6 s with 64. Here B's pings are timed from the request
// to their arrival at B's receiver, first on a quiet worker and then with 64
// of A's deliveries queued, against a real API, PostgreSQL and receivers.
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarize } from "../../../bench/stats.ts";
import { type RunningApi, json, openStorage, startApi } from "../helpers.ts";
import { type Receiver, startReceiver, verify } from "../webhook-receiver.ts";

const SLOW_MS = 20_000;
const TIMEOUT_MS = 5_000;
const QUEUED = 64;
const SAMPLES = 40;
/** A ping not delivered by then is recorded at this and ends the series (today's worker took 28.6 s). */
const GIVE_UP_MS = 30_000;

/** A receiver that answers after `delayMs`, counting the requests it holds open, per path. */
async function slowReceiver(delayMs: number) {
  const open = new Map<string, number>();
  const mostOpen = new Map<string, number>();
  let openTotal = 0;
  let mostOpenTotal = 0;
  let received = 0;
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    received++;
    open.set(path, (open.get(path) ?? 0) + 1);
    mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path)!));
    mostOpenTotal = Math.max(mostOpenTotal, ++openTotal);
    const timer = setTimeout(() => void (res.destroyed || res.writeHead(204).end()), delayMs);
    res.on("close", () => {
      clearTimeout(timer);
      open.set(path, open.get(path)! - 1);
      openTotal--;
    });
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path: string) => `${base}${path}`,
    received: () => received,
    mostOpen: (path: string) => mostOpen.get(path) ?? 0,
    mostOpenTotal: () => mostOpenTotal,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("fair webhook delivery", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let fast: Receiver;
  let slow: Awaited<ReturnType<typeof slowReceiver>>;
  let noisyKey: string;
  let quiet: ReturnType<typeof summarize>;
  let fastAgent: { agentId: string; secret: string };
  /** When each event reached the fast receiver, by webhook-id; and who waits for which. */
  const arrivals = new Map<string, number>();
  const waiting = new Map<string, () => void>();

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db, {
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      // The pool's fairness alone: the slow receiver's breaker never opens here (its own test is below).
      WEBHOOK_BREAKER_TIMEOUTS: "1000",
    });
    api.webhooks.start();
    fast = await startReceiver((request) => {
      const id = String(request.headers["webhook-id"]);
      arrivals.set(id, request.at);
      waiting.get(id)?.();
      return { status: 204 };
    });
    slow = await slowReceiver(SLOW_MS);
    const noisy = await api.keys.createAccount("noisy neighbour");
    noisyKey = (await api.keys.create(noisy.id, "sandbox", "noisy")).secret;
    fastAgent = await register(fast.url, "fast receiver");
  }, 30_000);
  afterAll(async () => {
    await api?.close();
    await fast?.close();
    await slow?.close();
    await storage?.close();
  });

  async function register(url: string, name: string, key?: string) {
    const response = await api.call("/v1/agents/register", {
      ...json({ name, webhookUrl: url, events: ["mint.confirmed"], role: "observer" }),
      ...(key ? { key } : {}),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { agentId: string; secret: string };
  }

  async function ping(agentId: string, key?: string): Promise<string> {
    const response = await api.call(`/v1/agents/${agentId}/test`, { method: "POST", ...(key ? { key } : {}) });
    expect(response.status).toBe(202);
    return ((await response.json()) as { eventId: string }).eventId;
  }

  /** The fast agent's pings one after another, each timed from its request to its arrival. */
  async function fastLatencies(): Promise<number[]> {
    const latencies: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const started = Date.now();
      const eventId = await ping(fastAgent.agentId);
      const arrived = arrivals.has(eventId)
        ? true
        : await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), GIVE_UP_MS - (Date.now() - started));
            waiting.set(eventId, () => {
              clearTimeout(timer);
              resolve(true);
            });
          });
      waiting.delete(eventId);
      latencies.push(arrived ? arrivals.get(eventId)! - started : Date.now() - started);
      if (!arrived) break;
    }
    return latencies;
  }

  /** `QUEUED` pings of the noisy account spread over its agents, queued one after another. */
  async function queueNoisy(agentIds: string[]) {
    for (let i = 0; i < QUEUED; i++) await ping(agentIds[i % agentIds.length]!, noisyKey);
  }

  it("the fast agent's pings on a quiet worker (the baseline)", async () => {
    quiet = summarize(await fastLatencies());
    console.log(`quiet: fast agent's ping → arrival ${JSON.stringify(quiet)} ms`);
    expect(quiet.n).toBe(SAMPLES);
  });

  it("keeps another account's latency while 64 deliveries wait on a 20-second receiver", async () => {
    const noisy = await register(slow.url("/one"), "20-second receiver", noisyKey);
    const before = slow.received();
    await queueNoisy([noisy.agentId]);
    // Measured while the slow receiver holds attempts open.
    while (slow.received() === before) await new Promise((r) => setTimeout(r, 10));
    const noisyLatencies = summarize(await fastLatencies());
    console.log(`64 queued to one 20 s agent: ${JSON.stringify(noisyLatencies)} ms`);
    expect(noisyLatencies.n).toBe(SAMPLES);
    expect(noisyLatencies.p99).toBeLessThan(1_000);
    // Against the quiet figure, with room for a loaded 2-core machine (today's worker: seconds).
    expect(noisyLatencies.median).toBeLessThan(quiet.median * 3 + 100);
    // The slow agent is served too, within its own share of the pool.
    expect(slow.mostOpen("/one")).toBeGreaterThan(0);
    expect(slow.mostOpen("/one")).toBeLessThanOrEqual(api.config.WEBHOOK_AGENT_CONCURRENCY);
    // Every delivery of the fast agent arrived signed with its secret.
    for (const request of fast.received) expect(() => verify(fastAgent.secret, request)).not.toThrow();
    expect((await api.call(`/v1/agents/${noisy.agentId}`, { method: "DELETE", key: noisyKey })).status).toBe(200);
  }, 120_000);

  it("keeps it when the noisy account spreads its 64 deliveries over four agents", async () => {
    const paths = ["/a", "/b", "/c", "/d"];
    const agents = [];
    for (const path of paths) agents.push(await register(slow.url(path), `slow ${path}`, noisyKey));
    const before = slow.received();
    await queueNoisy(agents.map((a) => a.agentId));
    while (slow.received() < before + 4) await new Promise((r) => setTimeout(r, 10));
    const noisyLatencies = summarize(await fastLatencies());
    console.log(`64 queued over four 20 s agents of one account: ${JSON.stringify(noisyLatencies)} ms`);
    expect(noisyLatencies.n).toBe(SAMPLES);
    expect(noisyLatencies.p99).toBeLessThan(1_000);
    expect(noisyLatencies.median).toBeLessThan(quiet.median * 3 + 100);
    for (const path of paths) expect(slow.mostOpen(path)).toBeLessThanOrEqual(api.config.WEBHOOK_AGENT_CONCURRENCY);
    // The account as a whole holds no more than its share, whatever its number of agents.
    expect(slow.mostOpenTotal()).toBeLessThanOrEqual(api.config.WEBHOOK_ACCOUNT_CONCURRENCY);
  }, 120_000);
});
