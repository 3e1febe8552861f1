// An RPC outage while mints are queued: the worker keeps failing its passes
// without losing or blocking anything, and finishes once the node is back.
// Two kinds: the node refusing connections, and the node silent (connections
// accepted, requests swallowed, no error and no answer) for a while: calls
// time out after UPSTREAM_TIMEOUT_MS and answer 503, nothing is sent twice.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Server, type Socket, connect, createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, json, queueMint, settledMint, useRelayApi } from "../helpers.ts";

/**
 * A TCP relay to the node that can drop every connection, as a network
 * outage does, or go silent: bytes either way are swallowed, connections stay open.
 */
async function outageProxy(target: URL) {
  const sockets = new Set<Socket>();
  let down = false;
  let silent = false;
  const server: Server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    const relay = (from: Socket, to: Socket) =>
      from.on("data", (chunk) => {
        if (!silent) to.write(chunk);
      });
    relay(client, upstream);
    relay(upstream, client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    silence() {
      silent = true;
    },
    restore() {
      down = false;
      silent = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("relay through an RPC outage", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;
  let proxy: Awaited<ReturnType<typeof outageProxy>>;

  // Registered first, so it runs last: the API's last requests go through the proxy.
  afterAll(async () => {
    await proxy?.close();
  });
  useRelayApi(
    {
      prepare: async (system) => (proxy = await outageProxy(new URL(system.rpcUrl))),
      env: () => ({ RPC_URL: proxy.url, UPSTREAM_TIMEOUT_MS: "500" }),
    },
    (stack) => ({ s, api, db } = stack),
  );
  // Before the stack stops: its worker must find the node answering.
  afterAll(() => proxy?.restore());

  it("keeps queued mints through the outage (readiness says so) and confirms each once the node is back", async () => {
    const mintIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      mintIds.push((await queueMint(api, s, { recipient: accounts.bob.address, mintAmount: 20n * ZSD })).mintId);
    }

    proxy.cut();
    api.worker!.start();
    // The worker runs passes against a dead node for a while.
    await new Promise((r) => setTimeout(r, 1500));
    const during = await db.query<{ status: string }>("SELECT status FROM mints WHERE id = ANY($1)", [mintIds]);
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

  it("answers 503 while the node is silent, and the worker sends each queued mint once when it answers again", async () => {
    // Queued while the worker is stopped, so that its passes meet the silence.
    await api.worker!.stop();
    const mintIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      mintIds.push((await queueMint(api, s, { recipient: accounts.carol.address, mintAmount: 15n * ZSD })).mintId);
    }
    api.worker!.start();
    // The node says nothing for a while (a minute in the field; 3 s here, six times UPSTREAM_TIMEOUT_MS).
    proxy.silence();
    const silentSince = Date.now();
    const timed: number[] = [];
    while (Date.now() - silentSince < 3_000) {
      const t0 = Date.now();
      const answer = await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: "12345" }));
      timed.push(Date.now() - t0);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ code: "upstream_unavailable" });
    }
    // Each call gave up (about UPSTREAM_TIMEOUT_MS per call to the node), none hung.
    expect(Math.max(...timed)).toBeLessThan(2_900);
    const during = await db.query<{ status: string }>("SELECT status FROM mints WHERE id = ANY($1)", [mintIds]);
    expect(during.every((m) => m.status === "queued" || m.status === "submitted")).toBe(true);

    proxy.restore();
    for (const mintId of mintIds) {
      expect((await settledMint(api, mintId)).status).toBe("confirmed");
    }
    const minted = await s.publicClient.getContractEvents({
      address: s.read.minter.address,
      abi: s.read.minter.abi,
      eventName: "Minted",
      args: { recipient: accounts.carol.address },
      fromBlock: BigInt(s.deployment.contracts.StableMinter.startBlock),
    });
    expect(minted).toHaveLength(2);
    expect(await s.read.token.read.balanceOf([accounts.carol.address])).toBe(30n * ZSD);
    // The deposits refused during the silence left no ledger line.
    expect(await db.query("SELECT 1 FROM custody_ledger WHERE note_commitment = '12345'")).toEqual([]);
  });
});
