// A key acts only within its own rights: it revokes, and sees the last four
// characters of, only keys no broader than itself, and every route it may be
// limited to belongs to a resource that a restriction can name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../../api/src/app.ts";
import { loadConfig } from "../../../api/src/config/config.ts";
import {
  KEY_RESOURCES,
  type KeyResource,
  type KeyRestrictions,
  UNRESTRICTED,
  checkRestrictions,
  noBroaderThan,
  resourceOf,
} from "../../../api/src/domain/accounts/keys.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

interface KeyBody {
  id: string;
  last4: string | null;
}

describe("what a key may do to other keys", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  const make = async (restrictions: Partial<KeyRestrictions>) =>
    api.keys.create(api.accountId, "sandbox", "scoped", { restrictions: { ...UNRESTRICTED, ...restrictions } });
  const revoke = (caller: string, id: string) => api.call(`/v1/keys/${id}`, { key: caller, method: "DELETE" });
  const listed = async (caller: string) => {
    const response = await api.call("/v1/keys", { key: caller });
    expect(response.status).toBe(200);
    return new Map(((await response.json()) as { data: KeyBody[] }).data.map((k) => [k.id, k.last4]));
  };

  it("a key restricted to `keys` cannot revoke an unrestricted key, nor read its last four", async () => {
    const unrestricted = await make({});
    const keysOnly = await make({ resources: ["keys"] });
    const refused = await revoke(keysOnly.secret, unrestricted.id);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe("key_broader_than_caller");
    expect(problem.detail).toContain(unrestricted.id);
    // Nothing changed: the unrestricted key still works.
    expect((await api.call("/v1/keys", { key: unrestricted.secret })).status).toBe(200);

    const seen = await listed(keysOnly.secret);
    expect(seen.get(unrestricted.id)).toBeNull();
    expect(seen.get(keysOnly.id)).toBe(keysOnly.last4);
    // The unrestricted key sees every key's last four.
    expect((await listed(unrestricted.secret)).get(keysOnly.id)).toBe(keysOnly.last4);
    // And may revoke the narrower one.
    expect((await revoke(unrestricted.secret, keysOnly.id)).status).toBe(200);
  });

  it("revokes keys as narrow as itself or narrower, and refuses each way a key can be broader", async () => {
    const caller = await make({ resources: ["keys", "ledger"], allowedIps: ["127.0.0.0/8"] });
    const narrower: Partial<KeyRestrictions>[] = [
      { resources: ["keys", "ledger"], allowedIps: ["127.0.0.0/8"] },
      { resources: ["keys"], allowedIps: ["127.0.0.1"] },
      { resources: ["ledger"], allowedIps: ["127.1.0.0/16"], readOnly: true },
      { resources: [], allowedIps: ["::ffff:127.0.0.9"] },
    ];
    for (const restrictions of narrower) {
      const key = await make(restrictions);
      expect((await listed(caller.secret)).get(key.id), JSON.stringify(restrictions)).toBe(key.last4);
      expect((await revoke(caller.secret, key.id)).status, JSON.stringify(restrictions)).toBe(200);
    }
    const broader: Partial<KeyRestrictions>[] = [
      { resources: null, allowedIps: ["127.0.0.1"] },
      { resources: ["keys", "mints"], allowedIps: ["127.0.0.1"] },
      { resources: ["keys"], allowedIps: null },
      { resources: ["keys"], allowedIps: ["127.0.0.0/7"] },
      { resources: ["keys"], allowedIps: ["127.0.0.1", "10.0.0.1"] },
      { resources: ["keys"], allowedIps: ["::1"] },
    ];
    for (const restrictions of broader) {
      const key = await make(restrictions);
      expect((await listed(caller.secret)).get(key.id), JSON.stringify(restrictions)).toBeNull();
      const response = await revoke(caller.secret, key.id);
      expect(response.status, JSON.stringify(restrictions)).toBe(403);
      expect(((await response.json()) as { code: string }).code).toBe("key_broader_than_caller");
      const [row] = await api.db.query<{ revoked_at: unknown }>("SELECT revoked_at FROM api_keys WHERE id = $1", [
        key.id,
      ]);
      expect(row!.revoked_at, JSON.stringify(restrictions)).toBeNull();
    }
    // A read-only key is broader than nothing that may write: it cannot revoke at all (read_only comes first).
    const readOnly = await make({ readOnly: true });
    const writer = await make({ resources: ["keys"] });
    expect((await listed(readOnly.secret)).get(writer.id)).toBeNull();
  });

  it("compares restrictions as sets and ranges", () => {
    const base: KeyRestrictions = { readOnly: false, resources: ["keys", "mints"], allowedIps: ["10.0.0.0/8"] };
    expect(noBroaderThan(base, base)).toBe(true);
    expect(noBroaderThan({ ...base, readOnly: true }, base)).toBe(true);
    expect(noBroaderThan(base, { ...base, readOnly: true })).toBe(false);
    expect(noBroaderThan({ ...base, resources: ["mints", "keys"] }, base)).toBe(true);
    expect(noBroaderThan({ ...base, resources: null }, base)).toBe(false);
    expect(noBroaderThan(base, { ...base, resources: null })).toBe(true);
    expect(noBroaderThan({ ...base, allowedIps: ["10.2.0.0/16", "10.9.9.9"] }, base)).toBe(true);
    expect(noBroaderThan({ ...base, allowedIps: ["11.0.0.0/8"] }, base)).toBe(false);
    expect(noBroaderThan({ ...base, allowedIps: ["0.0.0.0/0"] }, base)).toBe(false);
    expect(noBroaderThan({ ...base, allowedIps: ["::ffff:10.0.0.0/104"] }, base)).toBe(true);
    expect(noBroaderThan({ ...base, allowedIps: ["fd00::/8"] }, base)).toBe(false);
    expect(noBroaderThan({ ...base, allowedIps: null }, base)).toBe(false);
    expect(noBroaderThan(UNRESTRICTED, UNRESTRICTED)).toBe(true);
  });
});

describe("resources a key may be limited to", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  it("cover every authenticated route of the route table, and each names at least one", () => {
    // The sandbox has the most routes (its /v1/sandbox ones); production has a subset.
    const { routes } = createApp({ config: loadConfig({ LOG_LEVEL: "silent" }), db: storage.db });
    const used = new Set<KeyResource>();
    const authenticated = routes.filter((r) => r.auth);
    expect(authenticated.length).toBeGreaterThan(40);
    for (const route of authenticated) {
      const template = `/v1${route.path}`;
      const resource = resourceOf(template);
      expect(resource, `${route.method.toUpperCase()} ${template} belongs to no key resource`).toBeDefined();
      used.add(resource!);
      // A key limited to that resource alone may call it; one limited to every other resource may not.
      const others = (Object.keys(KEY_RESOURCES) as KeyResource[]).filter((r) => r !== resource);
      expect(checkRestrictions({ ...UNRESTRICTED, resources: [resource!] }, "GET", template, "127.0.0.1")).toBe(
        undefined,
      );
      expect(checkRestrictions({ ...UNRESTRICTED, resources: others }, "GET", template, "127.0.0.1")).toBe("resource");
    }
    expect([...used].sort()).toEqual(Object.keys(KEY_RESOURCES).sort());
  });

  it("include positions and withdrawals, which a limited key can call", async () => {
    for (const [resource, path] of [
      ["positions", "/v1/positions/1"],
      ["withdrawals", `/v1/withdrawals/wdr_${"a".repeat(20)}`],
    ] as const) {
      const key = await api.keys.create(api.accountId, "sandbox", resource, {
        restrictions: { ...UNRESTRICTED, resources: [resource as KeyResource] },
      });
      const response = await api.call(path, { key: key.secret });
      const body = (await response.json()) as { code?: string };
      expect(body.code, path).not.toBe("key_resource_not_allowed");
      expect(response.status, path).not.toBe(403);
      // And nothing else.
      const other = await api.call("/v1/keys", { key: key.secret });
      expect(((await other.json()) as { code: string }).code).toBe("key_resource_not_allowed");
    }
  });
});
