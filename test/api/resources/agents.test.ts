// Compliance agents and their webhooks, against a real API, a real database
// and a real HTTP receiver on 127.0.0.1; every delivery's signature is checked
// with the standardwebhooks library, not with our own code.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../api/src/observability/logger.ts";
import { retryDelayMs } from "../../../api/src/workers/webhooks/worker.ts";
import { type RunningApi, eventually, json, openStorage, startApi } from "../helpers.ts";
import { type Receiver, signaturesBy, startReceiver, verify, webhookSchemaCheck } from "../webhook-receiver.ts";

interface AgentBody {
  agentId: string;
  secret?: string | null;
  enabled: boolean;
  disabledReason: string | null;
  events: string[];
  name: string;
  previousSecretExpiresAt: string | null;
}

interface DeliveryBody {
  deliveryId: string;
  eventId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  lastError: string | null;
  attempts: { attempt: number; responseStatus: number | null; latencyMs: number; error: string | null }[];
}

function captureLogs() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger("info", stream) };
}

async function register(api: RunningApi, body: Record<string, unknown>, key?: string) {
  const response = await api.call("/v1/agents/register", { ...json(body), ...(key ? { key } : {}) });
  return { status: response.status, body: (await response.json()) as AgentBody & { code?: string } };
}

const deliveryOf = async (api: RunningApi, agentId: string, deliveryId: string) => {
  const list = (await (await api.call(`/v1/agents/${agentId}/deliveries?limit=100`)).json()) as {
    data: DeliveryBody[];
  };
  return list.data.find((d) => d.deliveryId === deliveryId)!;
};

const ping = async (api: RunningApi, agentId: string) => {
  const response = await api.call(`/v1/agents/${agentId}/test`, { method: "POST" });
  expect(response.status).toBe(202);
  return (await response.json()) as DeliveryBody;
};

describe("compliance agents", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let receiver: Receiver;
  const logs = captureLogs();

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(
      storage.db,
      {
        LOG_LEVEL: "info",
        WEBHOOK_POLL_MS: "50",
        WEBHOOK_RETRY_SCALE: "0.001",
        WEBHOOK_TIMEOUT_MS: "2000",
        WEBHOOK_SECRET_GRACE_SECONDS: "3",
      },
      { logger: logs.logger },
    );
    api.webhooks.start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await api?.close();
    await storage?.close();
  });

  it("registers, lists, changes and deletes agents of the caller's account and environment only", async () => {
    const created = await register(api, {
      name: "screening desk",
      webhookUrl: receiver.url,
      events: ["mint.queued", "mint.confirmed", "mint.queued"],
      role: "screener",
      description: "our compliance team",
    });
    expect(created.status).toBe(201);
    const agent = created.body;
    expect(agent).toMatchObject({
      object: "agent",
      agentId: expect.stringMatching(/^agt_[0-9A-Za-z]{20}$/),
      environment: "sandbox",
      role: "screener",
      enabled: true,
      events: ["mint.queued", "mint.confirmed"],
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    // The secret is shown once: no read shows it again.
    const read = await api.call(`/v1/agents/${agent.agentId}`);
    expect(read.status).toBe(200);
    const readText = await read.text();
    expect(readText).not.toContain(agent.secret!);
    expect(JSON.parse(readText)).not.toHaveProperty("secret");
    const list = await (await api.call("/v1/agents")).text();
    expect(list).toContain(agent.agentId);
    expect(list).not.toContain("whsec_");

    const changed = await api.call(
      `/v1/agents/${agent.agentId}`,
      json({ name: "screening desk 2", events: ["alert.raised"], description: null }),
    );
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      name: "screening desk 2",
      events: ["alert.raised"],
      description: null,
    });
    const disabled = (await (
      await api.call(`/v1/agents/${agent.agentId}`, json({ enabled: false }))
    ).json()) as AgentBody;
    expect(disabled).toMatchObject({ enabled: false, disabledReason: "requested" });
    const test = await api.call(`/v1/agents/${agent.agentId}/test`, { method: "POST" });
    expect(test.status).toBe(409);
    expect(((await test.json()) as { code: string }).code).toBe("agent_disabled");
    const enabled = (await (
      await api.call(`/v1/agents/${agent.agentId}`, json({ enabled: true }))
    ).json()) as AgentBody;
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null });

    // Another account's key, and this account's key of the other environment, see nothing of it.
    const stranger = await api.keys.create((await api.keys.createAccount("stranger")).id, "sandbox", "s");
    const other = { key: stranger.secret };
    for (const [path, init] of [
      [`/v1/agents/${agent.agentId}`, {}],
      [`/v1/agents/${agent.agentId}`, json({ name: "mine now" })],
      [`/v1/agents/${agent.agentId}`, { method: "DELETE" }],
      [`/v1/agents/${agent.agentId}/test`, { method: "POST" }],
      [`/v1/agents/${agent.agentId}/rotate-secret`, { method: "POST" }],
      [`/v1/agents/${agent.agentId}/deliveries`, {}],
      [`/v1/agents/${agent.agentId}/deliveries/retry`, json({ since: "2020-01-01T00:00:00Z" })],
    ] as const) {
      const response = await api.call(path, { ...init, ...other });
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    expect(await (await api.call("/v1/agents", other)).json()).toEqual({ object: "list", data: [] });
    const production = await startApi(storage.db, { ENVIRONMENT: "production" });
    try {
      const live = await api.keys.create(api.accountId, "production", "live");
      expect((await production.call(`/v1/agents/${agent.agentId}`, { key: live.secret })).status).toBe(404);
      expect(await (await production.call("/v1/agents", { key: live.secret })).json()).toEqual({
        object: "list",
        data: [],
      });
    } finally {
      await production.close();
    }
    expect((await api.call(`/v1/agents/${agent.agentId}`)).status).toBe(200);

    const deleted = await api.call(`/v1/agents/${agent.agentId}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ object: "agent", agentId: agent.agentId, deleted: true });
    expect((await api.call(`/v1/agents/${agent.agentId}`)).status).toBe(404);
    expect((await api.call(`/v1/agents/${agent.agentId}`, { method: "DELETE" })).status).toBe(404);
    expect(await (await api.call("/v1/agents")).text()).not.toContain(agent.agentId);
  });

  it("refuses invalid registrations with a 400 problem naming the field, and creates nothing", async () => {
    const before = await storage.db.query("SELECT id FROM agents");
    const valid = { name: "x", webhookUrl: receiver.url, events: ["ping" as string], role: "observer" };
    for (const [body, field] of [
      [{ ...valid, events: ["ping"] }, "body.events.0"],
      [{ ...valid, events: [] }, "body.events"],
      [{ ...valid, events: ["mint.minted"] }, "body.events.0"],
      [{ ...valid, events: ["mint.queued"], role: "admin" }, "body.role"],
      [{ ...valid, events: ["mint.queued"], role: undefined }, "body.role"],
      [{ ...valid, events: ["mint.queued"], webhookUrl: "javascript:alert(1)" }, "body.webhookUrl"],
      [{ ...valid, events: ["mint.queued"], webhookUrl: "ftp://127.0.0.1/x" }, "body.webhookUrl"],
      [{ ...valid, events: ["mint.queued"], description: "d".repeat(501) }, "body.description"],
      [{ ...valid, events: ["mint.queued"], secret: "whsec_mine" }, "body"],
    ] as const) {
      const { status, body: problem } = await register(api, body);
      expect(status, field).toBe(400);
      expect((problem as unknown as { errors: { field: string }[] }).errors.map((e) => e.field)).toContain(field);
    }
    // A sandbox webhook may be http and loopback, but never another private or link-local address.
    for (const webhookUrl of ["http://169.254.169.254/latest/meta-data", "http://10.0.0.1/hooks"]) {
      const { status, body } = await register(api, { ...valid, events: ["mint.queued"], webhookUrl });
      expect(status, webhookUrl).toBe(400);
      expect(body.code).toBe("webhook_url_not_allowed");
    }
    expect(await storage.db.query("SELECT id FROM agents")).toEqual(before);
    const unknown = await api.call("/v1/agents/agt_00000000000000000000");
    expect(unknown.status).toBe(404);
    expect((await api.call("/v1/agents/agt_00000000000000000000/deliveries?limit=0")).status).toBe(400);
    expect((await api.call("/v1/agents/not-an-id")).status).toBe(400);
  });

  it("delivers a ping signed as Standard Webhooks, which the standardwebhooks library verifies", async () => {
    const { body: agent } = await register(api, {
      name: "observer",
      webhookUrl: receiver.url,
      events: ["mint.confirmed"],
      role: "observer",
    });
    const seen = receiver.received.length;
    const queued = await ping(api, agent.agentId);
    expect(queued).toMatchObject({ object: "webhook_delivery", eventType: "ping", status: "pending" });
    await eventually(
      async () => receiver.received.length,
      (n) => n > seen,
      "the ping",
    );
    const request = receiver.received[seen]!;
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe(queued.eventId);
    expect(String(request.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const event = verify(agent.secret!, request);
    expect(event).toEqual({
      id: queued.eventId,
      type: "ping",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      environment: "sandbox",
      data: expect.objectContaining({ agentId: agent.agentId }),
    });
    // The check can fail: another secret, or one changed byte, is refused.
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, request)).toThrow();
    expect(() => verify(agent.secret!, { ...request, body: request.body.replace("ping", "pong") })).toThrow();

    const delivery = await eventually(
      () => deliveryOf(api, agent.agentId, queued.deliveryId),
      (d) => d.status === "succeeded",
      "the delivery log",
    );
    expect(delivery).toMatchObject({ attemptCount: 1, lastResponseStatus: 204, lastError: null });
    expect(delivery.attempts).toEqual([
      { attempt: 1, startedAt: expect.any(String), responseStatus: 204, latencyMs: expect.any(Number), error: null },
    ]);
    // The secret never reached a log line.
    expect(logs.lines.join("")).not.toContain(agent.secret!.slice(6));
  });

  it("signs with the old and the new secret during the grace period after a rotation, then the new alone", async () => {
    const { body: agent } = await register(api, {
      name: "rotating",
      webhookUrl: receiver.url,
      events: ["alert.raised"],
      role: "observer",
    });
    const rotated = await api.call(`/v1/agents/${agent.agentId}/rotate-secret`, { method: "POST" });
    expect(rotated.status).toBe(200);
    const { secret, previousSecretExpiresAt } = (await rotated.json()) as AgentBody;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(agent.secret);
    expect(Date.parse(previousSecretExpiresAt!)).toBeGreaterThan(Date.now());

    const during = await ping(api, agent.agentId);
    const first = await eventually(
      async () => receiver.received.find((r) => r.headers["webhook-id"] === during.eventId),
      Boolean,
      "the ping during the grace period",
    );
    expect(String(first!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    // Each signature checked alone: one is the new secret's, the other the old one's.
    expect(signaturesBy(secret!, first!)).toEqual([true, false]);
    expect(signaturesBy(agent.secret!, first!)).toEqual([false, true]);
    expect(verify(secret!, first!).id).toBe(during.eventId);
    expect(verify(agent.secret!, first!).id).toBe(during.eventId);

    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(previousSecretExpiresAt!) - Date.now()) + 100));
    expect(((await (await api.call(`/v1/agents/${agent.agentId}`)).json()) as AgentBody).previousSecretExpiresAt).toBe(
      null,
    );
    const after = await ping(api, agent.agentId);
    const second = await eventually(
      async () => receiver.received.find((r) => r.headers["webhook-id"] === after.eventId),
      Boolean,
      "the ping after the grace period",
    );
    expect(String(second!.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(verify(secret!, second!).id).toBe(after.eventId);
    expect(() => verify(agent.secret!, second!)).toThrow();
  });

  it("retries a receiver that fails, then is down, then is back: the same webhook-id, every attempt logged", async () => {
    const flaky = await startReceiver();
    try {
      const { body: agent } = await register(api, {
        name: "flaky",
        webhookUrl: flaky.url,
        events: ["mint.confirmed"],
        role: "observer",
      });
      flaky.answer = () => ({ status: 500 });
      const queued = await ping(api, agent.agentId);
      await eventually(
        async () => flaky.received.length,
        (n) => n >= 2,
        "two failed attempts",
      );
      await flaky.down();
      await eventually(
        () => deliveryOf(api, agent.agentId, queued.deliveryId),
        (d) => d.attempts.some((a) => a.error === "connection refused"),
        "an attempt while the receiver is down",
      );
      flaky.answer = () => ({ status: 200 });
      await flaky.up();
      const delivery = await eventually(
        () => deliveryOf(api, agent.agentId, queued.deliveryId),
        (d) => d.status === "succeeded",
        "the delivery once the receiver is back",
        20_000,
      );
      const ids = new Set(flaky.received.map((r) => r.headers["webhook-id"]));
      expect([...ids]).toEqual([queued.eventId]);
      // Every attempt that reached the receiver sent the same event, signed.
      expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
      for (const request of flaky.received) expect(verify(agent.secret!, request).id).toBe(queued.eventId);
      expect(flaky.received.map((r) => r.headers["webhook-id"])).toHaveLength(
        delivery.attemptCount - refused(delivery),
      );
      expect(delivery.attempts.map((a) => a.attempt)).toEqual(
        Array.from({ length: delivery.attemptCount }, (_, i) => delivery.attemptCount - i),
      );
      expect(delivery.attempts.at(-1)).toMatchObject({ responseStatus: 500, error: "answered 500" });
      expect(delivery.attempts[0]).toMatchObject({ responseStatus: 200, error: null });
      expect(refused(delivery)).toBeGreaterThan(0);
    } finally {
      await flaky.close();
    }
  });

  it("waits as long as a receiver's Retry-After asks", async () => {
    const busy = await startReceiver();
    try {
      let calls = 0;
      busy.answer = () => (calls++ === 0 ? { status: 503, headers: { "retry-after": "2" } } : { status: 204 });
      const { body: agent } = await register(api, {
        name: "busy",
        webhookUrl: busy.url,
        events: ["mint.confirmed"],
        role: "observer",
      });
      await ping(api, agent.agentId);
      await eventually(
        async () => busy.received.length,
        (n) => n >= 2,
        "the retry after Retry-After",
      );
      // Without Retry-After the compressed schedule would retry within 10 ms.
      expect(busy.received[1]!.at - busy.received[0]!.at).toBeGreaterThanOrEqual(1_900);
    } finally {
      await busy.close();
    }
  });

  it("disables an agent whose endpoint answers 410, and tells the account's other agents (agent.disabled)", async () => {
    const gone = await startReceiver(() => ({ status: 410 }));
    try {
      const { body: watcher } = await register(api, {
        name: "watcher",
        webhookUrl: receiver.url,
        events: ["agent.disabled"],
        role: "observer",
      });
      const { body: agent } = await register(api, {
        name: "retired endpoint",
        webhookUrl: gone.url,
        events: ["mint.confirmed"],
        role: "observer",
      });
      const queued = await ping(api, agent.agentId);
      const disabled = await eventually(
        async () => (await (await api.call(`/v1/agents/${agent.agentId}`)).json()) as AgentBody,
        (a) => !a.enabled,
        "the agent to be disabled",
      );
      expect(disabled).toMatchObject({ enabled: false, disabledReason: "gone", disabledAt: expect.any(String) });
      const request = await eventually(
        async () =>
          receiver.received.find((r) => {
            const event = JSON.parse(r.body) as { type: string; data: { agentId?: string } };
            return event.type === "agent.disabled" && event.data.agentId === agent.agentId;
          }),
        Boolean,
        "the agent.disabled event",
      );
      expect(verify(watcher.secret!, request!).data).toMatchObject({
        agentId: agent.agentId,
        reason: "gone",
        name: "retired endpoint",
      });
      // One attempt: a 410 is not retried.
      expect(gone.received).toHaveLength(1);
      expect(await deliveryOf(api, agent.agentId, queued.deliveryId)).toMatchObject({
        status: "failed",
        attemptCount: 1,
      });
      const again = await api.call(`/v1/agents/${agent.agentId}/deliveries/${queued.deliveryId}/retry`, {
        method: "POST",
      });
      expect(again.status).toBe(409);
    } finally {
      await gone.close();
    }
  });

  it("redelivers on request: one delivery, or every failed one since a time, with the same webhook-id", async () => {
    const { body: agent } = await register(api, {
      name: "replay",
      webhookUrl: receiver.url,
      events: ["mint.confirmed"],
      role: "observer",
    });
    const queued = await ping(api, agent.agentId);
    await eventually(
      () => deliveryOf(api, agent.agentId, queued.deliveryId),
      (d) => d.status === "succeeded",
      "the first delivery",
    );
    const retried = await api.call(`/v1/agents/${agent.agentId}/deliveries/${queued.deliveryId}/retry`, {
      method: "POST",
    });
    expect(retried.status).toBe(202);
    const delivery = await eventually(
      () => deliveryOf(api, agent.agentId, queued.deliveryId),
      (d) => d.status === "succeeded" && d.attemptCount === 2,
      "the redelivery",
    );
    expect(delivery.attempts.map((a) => a.responseStatus)).toEqual([204, 204]);
    const copies = receiver.received.filter((r) => r.headers["webhook-id"] === queued.eventId);
    expect(copies).toHaveLength(2);
    expect(copies[0]!.body).toBe(copies[1]!.body);
    const unknown = await api.call(`/v1/agents/${agent.agentId}/deliveries/dlv_00000000000000000000/retry`, {
      method: "POST",
    });
    expect(unknown.status).toBe(404);
    const none = await api.call(
      `/v1/agents/${agent.agentId}/deliveries/retry`,
      json({ since: "2020-01-01T00:00:00Z" }),
    );
    expect(await none.json()).toMatchObject({ object: "delivery_retry", count: 0 });
    expect((await api.call(`/v1/agents/${agent.agentId}/deliveries/retry`, json({ since: "yesterday" }))).status).toBe(
      400,
    );
  });

  it("delivered only events that match their webhooks in /v1/openapi.json", async () => {
    const check = webhookSchemaCheck(await (await api.call("/v1/openapi.json")).json());
    const delivered = receiver.received.map((r) => JSON.parse(r.body) as { type: string });
    expect(delivered.flatMap(check)).toEqual([]);
    expect(new Set(delivered.map((e) => e.type))).toEqual(new Set(["ping", "agent.disabled"]));
  });
});

const refused = (delivery: DeliveryBody) => delivery.attempts.filter((a) => a.responseStatus === null).length;

describe("an agent that keeps failing", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let receiver: Receiver;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    // The three-day schedule compressed to under three seconds.
    api = await startApi(storage.db, { WEBHOOK_POLL_MS: "20", WEBHOOK_RETRY_SCALE: "0.00001" });
    api.webhooks.start();
    receiver = await startReceiver(() => ({ status: 500 }));
  });
  afterAll(async () => {
    await receiver?.close();
    await api?.close();
    await storage?.close();
  });

  it("is disabled once every attempt of the schedule failed; re-enabled, its failed deliveries are sent again", async () => {
    // The schedule: about three days between the first and the last of ten attempts.
    const total = Array.from({ length: 9 }, (_, i) => retryDelayMs(i + 1, 1, () => 0.5)).reduce((a, b) => a + b);
    expect(total / 3600_000).toBeGreaterThan(70);
    expect(total / 3600_000).toBeLessThan(80);

    const since = new Date(Date.now() - 1000).toISOString();
    const { body: agent } = await register(api, {
      name: "always failing",
      webhookUrl: receiver.url,
      events: ["mint.confirmed"],
      role: "observer",
    });
    const queued = await ping(api, agent.agentId);
    const disabled = await eventually(
      async () => (await (await api.call(`/v1/agents/${agent.agentId}`)).json()) as AgentBody,
      (a) => !a.enabled,
      "the agent to be disabled",
      20_000,
    );
    expect(disabled.disabledReason).toBe("failing");
    const failed = await deliveryOf(api, agent.agentId, queued.deliveryId);
    expect(failed).toMatchObject({ status: "failed", attemptCount: 10, lastResponseStatus: 500 });
    expect(receiver.received).toHaveLength(10);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([queued.eventId]));

    // Disabled, nothing is sent; enabled again, "every failed delivery since T" sends it once more.
    expect((await api.call(`/v1/agents/${agent.agentId}/deliveries/retry`, json({ since }))).status).toBe(409);
    await api.call(`/v1/agents/${agent.agentId}`, json({ enabled: true }));
    receiver.answer = () => ({ status: 202 });
    const retried = await api.call(`/v1/agents/${agent.agentId}/deliveries/retry`, json({ since }));
    expect(retried.status).toBe(202);
    expect(await retried.json()).toMatchObject({ count: 1 });
    const delivered = await eventually(
      () => deliveryOf(api, agent.agentId, queued.deliveryId),
      (d) => d.status === "succeeded",
      "the redelivery",
    );
    expect(delivered.attemptCount).toBe(11);
    expect(verify(agent.secret!, receiver.received.at(-1)!).id).toBe(queued.eventId);
  });
});

describe("webhook URLs in production", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let receiver: Receiver;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db, {
      ENVIRONMENT: "production",
      WEBHOOK_POLL_MS: "20",
      WEBHOOK_RETRY_SCALE: "0.001",
    });
    api.webhooks.start();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await api?.close();
    await storage?.close();
  });

  it("refuses http, and names or addresses that reach loopback, private, link-local or other special networks", async () => {
    const port = new URL(receiver.url).port;
    const refused = [
      [`http://example.com/hooks`, "must use https"],
      [receiver.url, "must use https"],
      [`https://127.0.0.1:${port}/hooks`, "loopback"],
      ["https://127.1.2.3/hooks", "loopback"],
      ["https://2130706433/hooks", "loopback"],
      [`https://localhost:${port}/hooks`, "loopback"],
      ["https://[::1]/hooks", "loopback"],
      ["https://[::ffff:127.0.0.1]/hooks", "loopback"],
      ["https://10.0.0.1/hooks", "private"],
      ["https://192.168.1.10/hooks", "private"],
      ["https://172.16.0.1/hooks", "private"],
      ["https://[::ffff:10.0.0.1]/hooks", "private"],
      ["https://169.254.169.254/latest/meta-data", "linkLocal"],
      ["https://[fe80::1]/hooks", "linkLocal"],
      ["https://[fd00::1]/hooks", "uniqueLocal"],
      ["https://100.64.0.1/hooks", "carrierGradeNat"],
      ["https://0.0.0.0/hooks", "unspecified"],
      // IPv6 forms that carry an IPv4 address are judged by that address (address-policy.ts).
      ["https://[::127.0.0.1]/", "loopback"],
      ["https://[::7f00:1]/", "loopback"],
      ["https://[::a00:1]/", "private"],
      ["https://[::ffff:0:a00:1]/hooks", "private"],
      ["https://[64:ff9b::a00:1]/hooks", "private"],
      ["https://[64:ff9b:1::7f00:1]/hooks", "loopback"],
      ["https://[2002:7f00:1::1]/hooks", "loopback"],
      ["https://[2002:a9fe:a9fe::]/hooks", "linkLocal"],
      ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks", "loopback"],
      ["https://user:pass@93.184.216.34/hooks", "user name or password"],
    ] as const;
    for (const [webhookUrl, why] of refused) {
      const { status, body } = await register(api, {
        name: "ssrf",
        webhookUrl,
        events: ["mint.queued"],
        role: "observer",
      });
      expect(status, webhookUrl).toBe(400);
      expect(body.code, webhookUrl).toBe("webhook_url_not_allowed");
      expect(JSON.stringify(body), webhookUrl).toContain(why);
    }
    expect(await storage.db.query("SELECT id FROM agents")).toEqual([]);
    // A public address is taken.
    const { status, body: agent } = await register(api, {
      name: "public",
      webhookUrl: "https://93.184.216.34/hooks",
      events: ["mint.queued"],
      role: "observer",
    });
    expect(status).toBe(201);
    // Changing it to a refused one is refused too, and changes nothing.
    const changed = await api.call(`/v1/agents/${agent.agentId}`, json({ webhookUrl: `https://localhost:${port}/x` }));
    expect(changed.status).toBe(400);
    expect(((await (await api.call(`/v1/agents/${agent.agentId}`)).json()) as { webhookUrl: string }).webhookUrl).toBe(
      "https://93.184.216.34/hooks",
    );
  });

  it("checks the address again at every attempt, and sends nothing to one that became refused", async () => {
    const { body: agent } = await register(api, {
      name: "rebinding",
      webhookUrl: "https://93.184.216.34/hooks",
      events: ["mint.queued"],
      role: "observer",
    });
    // What a name that resolved to a public address at registration and now resolves to loopback amounts to.
    await storage.db.query("UPDATE agents SET webhook_url = $2 WHERE id = $1", [
      agent.agentId,
      `https://localhost:${new URL(receiver.url).port}/hooks`,
    ]);
    const queued = await ping(api, agent.agentId);
    const delivery = await eventually(
      () => deliveryOf(api, agent.agentId, queued.deliveryId),
      (d) => d.attemptCount >= 2,
      "two refused attempts",
    );
    expect(delivery.status).toBe("pending");
    expect(delivery.attempts[0]!.error).toMatch(/^webhook URL resolves to a loopback address/);
    expect(receiver.received).toHaveLength(0);
  });
});
