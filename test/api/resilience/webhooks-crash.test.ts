// Webhooks survive the API being killed: the API process is SIGKILLed while
// deliveries are in flight to a slow receiver, events are emitted into the
// outbox while it is dead, and after a restart every event reaches the
// receiver, each under its own webhook-id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../../api/src/adapters/db/index.ts";
import { emitEvent } from "../../../api/src/domain/agents/events.ts";
import { KeyService } from "../../../api/src/domain/accounts/keys.ts";
import { createTestDatabase } from "@zsd/testkit";
import { MAX_ATTEMPTS } from "../../../api/src/workers/webhooks/worker.ts";
import { type ApiProcess, apiProcess, eventually, json, startApi } from "../helpers.ts";
import { type Receiver, startReceiver, verify } from "../webhook-receiver.ts";

const PINGS = 20;
const EMITTED = 10;

describe("webhook delivery across a SIGKILL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Database;
  let accountId: string;
  let secret: string;
  let api: ApiProcess;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await createTestDatabase("zsd_webhook_crash");
    db = await openDatabase({ url: database.url });
    const keys = new KeyService(db);
    accountId = (await keys.createAccount("webhook crash test")).id;
    secret = (await keys.create(accountId, "sandbox", "crash")).secret;
    api = await apiProcess(secret, {
      DATABASE_URL: database.url,
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_RETRY_SCALE: "0.001",
      // The restarted process is the same replica: it takes its lease back without waiting for it to expire.
      RELAY_WORKER_ID: "webhook-crash-replica",
    });
    // Slow: each answer waits, so that the kill finds attempts in flight.
    receiver = await startReceiver(() => ({ status: 204, delayMs: 300 }));
  });

  afterAll(async () => {
    await api.kill();
    await receiver?.close();
    await db?.close();
    await database?.drop();
  });

  it("delivers every event after a restart, those in flight at the kill included", async () => {
    await api.start();
    const registered = await api.call("/v1/agents/register", {
      name: "crash observer",
      webhookUrl: receiver.url,
      events: ["mint.confirmed"],
      role: "observer",
    });
    expect(registered.status).toBe(201);
    const agent = (await registered.json()) as { agentId: string; secret: string };

    const eventIds: string[] = [];
    for (let i = 0; i < PINGS; i++) {
      const queued = await api.call(`/v1/agents/${agent.agentId}/test`, {});
      expect(queued.status).toBe(202);
      eventIds.push(((await queued.json()) as { eventId: string }).eventId);
    }
    // Killed while the receiver holds attempts open: they were sent, and never answered to the API.
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 3,
      "attempts in flight",
    );
    await api.kill();
    const inFlight = (
      await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM webhook_deliveries WHERE agent_id = $1 AND status = 'pending' AND attempts > 0`,
        [agent.agentId],
      )
    )[0]!;
    expect(Number(inFlight.n)).toBeGreaterThan(0);

    // While the API is down, changes still emit events in their own transactions (one rolled back emits nothing).
    for (let i = 0; i < EMITTED; i++) {
      const { eventId, deliveryIds } = await db.transaction((tx) =>
        emitEvent(tx, {
          account: accountId,
          environment: "sandbox",
          type: "mint.confirmed",
          data: { mintId: `mint_${i}` },
        }),
      );
      expect(deliveryIds).toHaveLength(1);
      eventIds.push(eventId);
    }
    await expect(
      db.transaction(async (tx) => {
        await emitEvent(tx, { account: accountId, environment: "sandbox", type: "mint.confirmed", data: {} });
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");

    await api.start();
    await eventually(
      async () =>
        (
          await db.query<{ status: string }>(
            "SELECT status FROM webhook_deliveries WHERE agent_id = $1 AND status <> 'succeeded'",
            [agent.agentId],
          )
        ).length,
      (n) => n === 0,
      "every delivery to succeed",
      30_000,
    );
    const received = receiver.received.map((r) => verify(agent.secret, r).id);
    // Every event arrived, and nothing else (the rolled-back one never existed).
    expect(new Set(received)).toEqual(new Set(eventIds));
    expect(await db.query("SELECT id FROM webhook_events WHERE account_id = $1", [accountId])).toHaveLength(
      PINGS + EMITTED,
    );
    // At least once: an attempt cut short by the kill is sent again under the same webhook-id, and only those.
    expect(received.length - eventIds.length).toBeLessThanOrEqual(Number(inFlight.n));
    const log = (await (await api.call(`/v1/agents/${agent.agentId}/deliveries?limit=100`)).json()) as {
      data: { eventId: string; status: string; attemptCount: number }[];
    };
    expect(log.data).toHaveLength(PINGS + EMITTED);
    expect(log.data.every((d) => d.status === "succeeded")).toBe(true);
  });

  it("delivers each event once after a receiver down for a simulated day", async () => {
    // The retry schedule at 1/20,000 of its pace: a day is 4.3 s, its 5 s first retry 0.25 ms.
    const SCALE = 0.00005;
    const DAY_MS = 24 * 3600_000 * SCALE;
    const EVENTS = 5;
    // A database of its own: the first test's API process still runs on the file's, and its
    // worker (same environment's lease, retries at full pace) took part of these deliveries.
    const own = await createTestDatabase("zsd_webhook_day");
    const db = await openDatabase({ url: own.url });
    const local = await startApi(db, {
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_RETRY_SCALE: String(SCALE),
    });
    const down = await startReceiver();
    try {
      const registered = await local.call(
        "/v1/agents/register",
        json({ name: "day-long outage", webhookUrl: down.url, events: ["mint.confirmed"], role: "observer" }),
      );
      expect(registered.status).toBe(201);
      const agent = (await registered.json()) as { agentId: string; secret: string };
      // Connections refused from before the first attempt until a day later. The worker starts
      // once every event is queued: queued while it ran, on a loaded machine the first events
      // met an outage of a day and the seconds the queueing took, and used up their attempts.
      await down.down();
      const eventIds: string[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const queued = await local.call(`/v1/agents/${agent.agentId}/test`, json({}));
        expect(queued.status).toBe(202);
        eventIds.push(((await queued.json()) as { eventId: string }).eventId);
      }
      local.webhooks.start();
      await new Promise((r) => setTimeout(r, DAY_MS));
      const attemptsInTheDay = await db.query<{ n: string }>(
        "SELECT count(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.agent_id = $1",
        [agent.agentId],
      );
      await down.up();
      await eventually(
        // What is left, as the worker sees it: a failure says which delivery waits, and for what.
        () =>
          db.query(
            `SELECT status, attempts, schedule_start, next_attempt_at, last_error FROM webhook_deliveries
             WHERE agent_id = $1 AND status <> 'succeeded'`,
            [agent.agentId],
          ),
        (left) => left.length === 0,
        "every delivery to succeed after the outage",
        4 * DAY_MS,
      );
      // Nothing given up on, nothing delivered twice: one request per event, after the day.
      const delivered = down.received.map((r) => verify(agent.secret, r).id);
      expect(delivered.sort()).toEqual([...eventIds].sort());
      // Retried through the day (5 s × 5^n, compressed): at least five attempts of each in it.
      expect(Number(attemptsInTheDay[0]!.n)).toBeGreaterThanOrEqual(5 * EVENTS);
      const attempts = await db.query<{ attempts: number; status: string }>(
        "SELECT attempts, status FROM webhook_deliveries WHERE agent_id = $1",
        [agent.agentId],
      );
      for (const d of attempts) expect(d).toMatchObject({ status: "succeeded", attempts: expect.any(Number) });
      for (const d of attempts) expect(d.attempts).toBeLessThanOrEqual(MAX_ATTEMPTS);
    } finally {
      await local.close();
      await down.close();
      await db.close();
      await own.drop();
    }
  });
});
