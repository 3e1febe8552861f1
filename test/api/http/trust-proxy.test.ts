// Whose X-Forwarded-For is believed decides what an IP-bound key and the
// per-address limits see as the client: nobody's unless TRUST_PROXY names a
// proxy, since any client can send the header.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../api/src/config/config.ts";
import { UNRESTRICTED } from "../../../api/src/domain/accounts/keys.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

describe("proxy trust", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    storage = await openStorage("postgres");
  });
  afterAll(async () => {
    await storage?.close();
  });

  it("is off unless TRUST_PROXY is set, in production and in the sandbox", () => {
    expect(loadConfig({ ENVIRONMENT: "production" }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ ENVIRONMENT: "sandbox" }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ ENVIRONMENT: "production", TRUST_PROXY: "loopback" }).TRUST_PROXY).toBe("loopback");
  });

  /** A key of the API's account usable from `allowedIps` only. */
  async function boundKey(api: RunningApi, allowedIps: string[]) {
    const key = await api.keys.create(api.accountId, api.config.ENVIRONMENT, "bound", {
      restrictions: { ...UNRESTRICTED, allowedIps },
    });
    return key.secret;
  }
  const from = (api: RunningApi, key: string, forwardedFor?: string) =>
    api.call("/v1/keys", { key, headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {} });

  it("without a trusted proxy, an IP-bound key sees the socket's address whatever X-Forwarded-For says", async () => {
    const api = await startApi(storage.db, { ENVIRONMENT: "production" });
    try {
      const elsewhere = await boundKey(api, ["10.9.9.9"]);
      expect((await from(api, elsewhere)).status).toBe(403);
      const spoofed = await from(api, elsewhere, "10.9.9.9");
      expect(spoofed.status).toBe(403);
      expect(((await spoofed.json()) as { code: string }).code).toBe("key_ip_not_allowed");
      // The socket's own address is what counts.
      const here = await boundKey(api, ["127.0.0.1"]);
      expect((await from(api, here)).status).toBe(200);
      expect((await from(api, here, "10.9.9.9")).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it("behind a trusted proxy, an IP-bound key sees the client the proxy names, and no address the client wrote", async () => {
    // The proxy runs on this host (loopback) and appends the address it saw to X-Forwarded-For.
    const api = await startApi(storage.db, { ENVIRONMENT: "production", TRUST_PROXY: "loopback" });
    try {
      const bound = await boundKey(api, ["10.9.9.9"]);
      expect((await from(api, bound, "10.9.9.9")).status).toBe(200);
      expect((await from(api, bound, "10.9.9.8")).status).toBe(403);
      // A client at 203.0.113.7 that sends "X-Forwarded-For: 10.9.9.9" arrives as "10.9.9.9, 203.0.113.7":
      // only the entry the trusted proxy added counts.
      expect((await from(api, bound, "10.9.9.9, 203.0.113.7")).status).toBe(403);
    } finally {
      await api.close();
    }
    // A hop count trusts exactly that many proxies, wherever they are.
    const oneHop = await startApi(storage.db, { ENVIRONMENT: "production", TRUST_PROXY: "1" });
    try {
      const bound = await boundKey(oneHop, ["10.9.9.9"]);
      expect((await from(oneHop, bound, "203.0.113.7, 10.9.9.9")).status).toBe(200);
      expect((await from(oneHop, bound, "10.9.9.9, 203.0.113.7")).status).toBe(403);
    } finally {
      await oneHop.close();
    }
  });
});
