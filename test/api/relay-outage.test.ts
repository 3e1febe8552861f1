// An RPC outage while mints are queued: the worker keeps failing its passes
// without losing or blocking anything, and finishes once the node is back.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, type Socket, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "../../sdk/js/src/notes/index.ts";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, json, openStorage, startApi } from "./helpers.ts";

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
  let dir: string;
  let proxy: Awaited<ReturnType<typeof outageProxy>>;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-relay-outage-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    proxy = await outageProxy(new URL(s.rpcUrl));
    storage = await openStorage("pglite");
    api = await startApi(storage.db, {
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: proxy.url,
      ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(1),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RELAY_POLL_MS: "50",
      UPSTREAM_TIMEOUT_MS: "500",
    });
  });
  afterAll(async () => {
    proxy?.restore();
    await api?.worker?.stop();
    await api?.close();
    await proxy?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("keeps queued mints through the outage (readiness says so) and confirms each once the node is back", async () => {
    const mintIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const note = createNote();
      await api.call("/v1/sandbox/deposits", json({ amount: "4", noteCommitment: noteCommitment(note).toString() }));
      const proved = await s.prove({
        note,
        amountZat: 400_000_000n,
        mintAmount: 20n * ZSD,
        recipient: accounts.bob.address,
      });
      const proof = (await (
        await api.call(
          "/v1/proofs/submit",
          json({
            proof: proved.raw.proof,
            publicSignals: publicSignalsToArray(proved.raw.publicSignals),
            mintAmount: "20",
            recipient: accounts.bob.address,
          }),
        )
      ).json()) as { proofId: string };
      const queued = await api.call(
        "/v1/mint",
        json({ amount: "20", collateralType: "ZEC", proofId: proof.proofId, recipient: accounts.bob.address }),
      );
      mintIds.push(((await queued.json()) as { mintId: string }).mintId);
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
      let status = "";
      for (let i = 0; i < 200 && status !== "confirmed"; i++) {
        status = ((await (await api.call(`/v1/mints/${mintId}`)).json()) as { status: string }).status;
        if (status === "failed") throw new Error(`mint ${mintId} failed`);
        if (status !== "confirmed") await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe("confirmed");
    }
    expect(await s.read.token.read.balanceOf([accounts.bob.address])).toBe(40n * ZSD);
  });
});
