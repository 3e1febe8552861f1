// An RPC outage while mints are queued: the worker keeps failing its passes
// without losing or blocking anything, and finishes once the node is back.
import { type Server, type Socket, connect, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseProver } from "@zsd/sdk/notes";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, openStorage, queueMint, settledMint, startRelayApi } from "./helpers.ts";

/** A TCP relay to the node that can drop every connection, as a network outage does. */
async function outageProxy(target: URL) {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("relay through an RPC outage", () => {
  let s: System;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let proxy: Awaited<ReturnType<typeof outageProxy>>;

  beforeAll(async () => {
    s = await deploySystem();
    proxy = await outageProxy(new URL(s.rpcUrl));
    storage = await openStorage("pglite");
    api = await startRelayApi(s, storage.db, { RPC_URL: proxy.url, UPSTREAM_TIMEOUT_MS: "500" });
  });
  afterAll(async () => {
    proxy?.restore();
    await api?.close();
    await proxy?.close();
    await storage?.close();
    await releaseProver();
  });

  it("keeps queued mints through the outage (readiness says so) and confirms each once the node is back", async () => {
    const mintIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      mintIds.push((await queueMint(api, s, { recipient: accounts.bob.address, mintAmount: 20n * ZSD })).mintId);
    }

    proxy.cut();
    api.worker!.start();
    // The worker runs passes against a dead node for a while.
    await new Promise((r) => setTimeout(r, 1500));
    const during = await storage.db.query<{ status: string }>("SELECT status FROM mints WHERE id = ANY($1)", [mintIds]);
    expect(during.every((m) => m.status === "queued" || m.status === "submitted")).toBe(true);
    const ready = await api.call("/v1/health/ready", { key: null });
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { chain: boolean } }).checks.chain).toBe(false);

    proxy.restore();
    for (const mintId of mintIds) {
      expect((await settledMint(api, mintId)).status).toBe("confirmed");
    }
    expect(await s.read.token.read.balanceOf([accounts.bob.address])).toBe(40n * ZSD);
  });
});
