// The dev stack's indexer watchdog: the decision on its own, then with a real
// Ponder process that stops advancing (its head subscription silenced) and
// whose data stops matching the chain (the chain reverted below it).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startIndexer, waitForBlock, wipeIndexerData } from "../../scripts/lib/indexer-process.ts";
import {
  type Observation,
  indexerStatus,
  judge,
  newWatchState,
  supplyMatches,
  watchIndexer,
} from "../../scripts/lib/indexer-watchdog.ts";
import { releaseProver } from "@zsd/sdk/notes";
import { ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { startChainProxy } from "./chain-proxy.ts";

describe("judge", () => {
  const options = { stallMs: 10_000 };
  const at = (now: number, o: Partial<Observation>): Observation => ({ now, exited: false, head: 100, ...o });
  const block = (number: number, timestamp = 1000 + number) => ({ number, timestamp });

  it("leaves an indexer that advances, or is caught up with an idle chain", () => {
    const state = newWatchState(0);
    for (let t = 0; t <= 60_000; t += 5_000) {
      expect(judge(state, at(t, { head: 100 + t / 1000, indexed: block(99 + t / 1000) }), options)).toEqual({
        action: "ok",
      });
    }
    const idle = newWatchState(0);
    for (let t = 0; t <= 60_000; t += 5_000) {
      expect(judge(idle, at(t, { head: 100, indexed: block(100) }), options).action).toBe("ok");
    }
  });

  it("restarts an indexer that stays behind an advancing chain, does not answer, or exited", () => {
    const state = newWatchState(0);
    expect(judge(state, at(5_000, { head: 105, indexed: block(100) }), options).action).toBe("ok");
    expect(judge(state, at(10_000, { head: 110, indexed: block(100) }), options).action).toBe("ok");
    expect(judge(state, at(15_000, { head: 115, indexed: block(100) }), options).action).toBe("ok");
    expect(judge(state, at(20_000, { head: 120, indexed: block(100) }), options)).toEqual({
      action: "restart",
      reason: "the indexer has stayed at block 100 for 15 s while the chain is at 120",
    });

    const silent = newWatchState(0);
    expect(judge(silent, at(5_000, {}), options).action).toBe("ok");
    expect(judge(silent, at(11_000, {}), options)).toMatchObject({ action: "restart" });

    expect(judge(newWatchState(0), at(1, { exited: true }), options).action).toBe("restart");
  });

  it("does not blame the indexer while the node is down", () => {
    const state = newWatchState(0);
    for (let t = 0; t <= 60_000; t += 5_000) {
      expect(judge(state, at(t, { head: undefined, indexed: block(100) }), options).action).toBe("ok");
    }
  });

  it("re-syncs when the data does not match the chain twice in a row: ahead of it, another block, other figures", () => {
    for (const mismatch of [
      { head: 90, indexed: block(100) },
      { indexed: block(100), chainTimestamp: 5 },
      { indexed: block(100), chainTimestamp: 1100, figuresMatch: false },
    ]) {
      const state = newWatchState(0);
      expect(judge(state, at(1_000, mismatch), options).action).toBe("ok");
      expect(judge(state, at(2_000, mismatch), options)).toMatchObject({ action: "resync" });
      // A mismatch seen once (a shallow reorganisation Ponder rolls back) is not acted on.
      const once = newWatchState(0);
      expect(judge(once, at(1_000, mismatch), options).action).toBe("ok");
      expect(judge(once, at(2_000, { indexed: block(100), chainTimestamp: 1100 }), options).action).toBe("ok");
      expect(judge(once, at(3_000, mismatch), options).action).toBe("ok");
    }
  });
});

describe("watchIndexer with a real indexer", () => {
  // Three indexer starts (20-40 s each on a loaded host: 119.5 s in all in CI on b7822d1). Its own
  // phase deadlines, up to about 280 s in all, say which phase hung; vitest's 120 s would cut them short.
  it("restarts an indexer that stopped advancing, and re-syncs one the chain went back under", async () => {
    const s = await deploySystem();
    const dir = mkdtempSync(join(tmpdir(), "zsd-watchdog-"));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    const proxy = await startChainProxy(s.rpcUrl);
    const db = await createTestDatabase("zsd_watchdog");
    const storage = { databaseUrl: db.url, schema: "zsd_watchdog" };
    const log: string[] = [];
    const t0 = Date.now();
    const starts: boolean[] = [];
    let verifications = 0;
    const watchdog = await watchIndexer({
      rpcUrl: s.rpcUrl,
      async start(fresh) {
        starts.push(fresh);
        if (fresh) await wipeIndexerData(storage);
        // Over a WebSocket the proxy can silence: one way, of many, to stop an indexer.
        return startIndexer({ rpcUrl: proxy.url, deploymentFile, ...storage, env: { RPC_WS_URL: proxy.wsUrl } });
      },
      verify: (indexer) => {
        verifications++;
        return supplyMatches(indexer.url, s.rpcUrl, s.read.token.address);
      },
      intervalMs: 250,
      stallMs: 3_000,
      log: (line) => log.push(`${((Date.now() - t0) / 1000).toFixed(1)} ${line}`),
    });
    let mining = true;
    const mine = async () => {
      while (mining) {
        await s.mineBlocks(1);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    let miner = mine();
    const caughtUp = async () => {
      const head = await s.publicClient.getBlockNumber();
      // The indexer now, not the one at the call: on a busy machine the watchdog may restart it meanwhile.
      await waitForBlock(() => watchdog.indexer.url, head, { timeoutMs: 30_000 });
    };
    const until = async (what: () => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!what()) {
        if (Date.now() > deadline) throw new Error(`timed out; watchdog log:\n${log.join("\n")}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 50n * ZSD, recipient: accounts.alice.address });
      const beforeMint = await s.snapshot();
      await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 70n * ZSD, recipient: accounts.bob.address });
      await caughtUp();

      // At rest (no new block) the figures compared once stand: no supply and call every interval.
      mining = false;
      await miner;
      await caughtUp();
      await new Promise((r) => setTimeout(r, 1_000));
      const restFrom = verifications;
      await new Promise((r) => setTimeout(r, 2_000));
      expect(verifications - restFrom).toBeLessThanOrEqual(1);
      mining = true;
      miner = mine();

      log.push(`${((Date.now() - t0) / 1000).toFixed(1)} caught up; silencing the indexer's head subscription`);
      proxy.silence();
      await until(() => watchdog.actions.length > 0, 20_000);
      expect(watchdog.actions[0]).toMatchObject({
        action: "restart",
        reason: expect.stringMatching(/stayed at block/),
      });
      await until(() => log.some((line) => line.includes("indexer back")), 60_000);
      await caughtUp();
      expect(starts).toEqual([true, false]);

      // The chain goes back under the indexer (a restarted node would too).
      mining = false;
      await miner;
      log.push(`${((Date.now() - t0) / 1000).toFixed(1)} caught up again; reverting the chain`);
      await s.revert(beforeMint);
      await until(() => watchdog.actions.some((a) => a.action === "resync"), 20_000);
      await until(() => starts.length > 2 && starts.at(-1) === true && log.at(-1)!.includes("indexer back"), 60_000);
      await s.mineBlocks(1);
      await caughtUp();
      const indexed = await indexerStatus(watchdog.indexer.url);
      const chainBlock = await s.publicClient.getBlock({ blockNumber: BigInt(indexed!.number) });
      expect(indexed!.timestamp).toBe(Number(chainBlock.timestamp));
      const supply = (await (await fetch(`${watchdog.indexer.url}/supply`)).json()) as { circulating: string };
      expect(BigInt(supply.circulating)).toBe(await s.read.token.read.totalSupply());
      expect(BigInt(supply.circulating)).toBe(50n * ZSD);
    } finally {
      mining = false;
      await miner;
      await watchdog.stop();
      await proxy.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
      await releaseProver();
    }
  }, 360_000);
});
