// At rest the webhook worker polls every WEBHOOK_IDLE_POLL_MS, not every
// WEBHOOK_POLL_MS: on the idle dev stack its claim query every second was
// part of the API's 0.036 of a core. What queues deliveries in this process
// (emitEvent, wherever it is called from) wakes it, and a retry that comes
// due at rest is attempted on time, not at the next idle poll. On PGlite its
// lease is not renewed apart from passes: no other process can take it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { emitEvent } from "../../../api/src/domain/agents/events.ts";
import { type RunningApi, eventually, json, openStorage, startApi } from "../helpers.ts";
import { type Receiver, startReceiver } from "../webhook-receiver.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("webhook worker at rest", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let receiver: Receiver;
  let renewals = 0;

  beforeAll(async () => {
    storage = await openStorage("pglite");
    // The real database, its lease renewals counted.
    const real = storage.db;
    const db: Database = {
      kind: real.kind,
      query: (sql, params) => {
        if (/^\s*UPDATE worker_leases/.test(sql)) renewals++;
        return real.query(sql, params);
      },
      transaction: (work) => real.transaction(work),
      close: () => real.close(),
    };
    api = await startApi(db, {
      WEBHOOK_POLL_MS: "20",
      // Renewed every 500 ms where renewals are made.
      WEBHOOK_LEASE_MS: "1500",
      WEBHOOK_IDLE_POLL_MS: "60000",
      RELAY_BUSY_MS: "1",
      // The first retry 2 s (±20 %) after a failure.
      WEBHOOK_RETRY_SCALE: "0.4",
    });
    // The first attempt of each event fails; its retry succeeds.
    const seen = new Set<string>();
    receiver = await startReceiver((request) => {
      const id = String(request.headers["webhook-id"]);
      if (seen.has(id)) return { status: 204 };
      seen.add(id);
      return { status: 500 };
    });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await storage?.close();
  });

  it("slows to the idle poll, wakes for deliveries queued anywhere in the process, and retries on time", async () => {
    const registered = await api.call(
      "/v1/agents/register",
      json({ name: "idle observer", webhookUrl: receiver.url, events: ["mint.confirmed"], role: "observer" }),
    );
    expect(registered.status).toBe(201);
    api.webhooks.start();
    // Past the busy time: at most one pass in 5 s at a 60 s idle poll, where the busy poll makes hundreds.
    await sleep(3_000);
    const idleFrom = api.webhooks.passes;
    const renewedFrom = renewals;
    await sleep(5_000);
    expect(api.webhooks.passes - idleFrom).toBeLessThanOrEqual(1);
    // On PGlite no other process can take the lease (one process opens the directory): no renewals either.
    expect(renewals - renewedFrom).toBe(0);

    // An event emitted outside any request (as the relay worker emits mint.confirmed) is sent now.
    const emittedAt = Date.now();
    const { deliveryIds } = await storage.db.transaction((tx) =>
      emitEvent(tx, {
        account: api.accountId,
        environment: "sandbox",
        type: "mint.confirmed",
        data: { mintId: "mint_idle" },
      }),
    );
    expect(deliveryIds).toHaveLength(1);
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 1,
      "the first attempt",
    );
    expect(Date.now() - emittedAt).toBeLessThan(5_000);

    // It failed; its retry comes due about 2 s later, at rest, and is made then, not a minute later.
    const firstAt = receiver.received[0]!.at;
    await eventually(
      async () => receiver.received.length,
      (n) => n >= 2,
      "the retry",
      20_000,
    );
    expect(receiver.received[1]!.at - firstAt).toBeLessThan(8_000);
    await eventually(
      async () =>
        (
          await storage.db.query<{ status: string }>("SELECT status FROM webhook_deliveries WHERE id = $1", [
            deliveryIds[0],
          ])
        )[0]!.status,
      (status) => status === "succeeded",
      "the delivery recorded",
    );
  });
});
