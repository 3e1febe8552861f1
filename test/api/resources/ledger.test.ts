// Ledger reads through the API against a live Hardhat node and the indexer,
// with real proofs: every figure equals what the contracts say, and says which
// block it is as of and how old that is. Readiness notices an indexer that
// answers but no longer follows the chain. An indexer killed mid-stream makes
// reads answer 503, and after a restart it recovers and catches up.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatUnits } from "viem";
import { ZSD_DECIMALS, formatPrice, formatZec, formatZsd, parseZec, usdValueOfZat } from "@zsd/sdk/units";
import { collateralRegistryAbi } from "@zsd/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../../scripts/lib/indexer-process.ts";
import { createNote, depositLeaf, noteCommitment, registryLeaves, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";
import { createTestDatabase } from "@zsd/testkit";

const { alice, bob, relayer } = accounts;

describe("ledger read endpoints", () => {
  let s: System;
  let indexer: RunningIndexer;
  let indexerDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let dir: string;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-api-ledger-"));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    indexer = await startIndexer({
      rpcUrl: s.rpcUrl,
      deploymentFile,
      // On PostgreSQL Ponder is ready in about half the time it takes on PGlite.
      databaseUrl: (indexerDb = await createTestDatabase("zsd_indexer")).url,
      schema: "zsd_api",
    });
    storage = await openStorage("postgres");
    api = await startApi(storage.db, { INDEXER_URL: indexer.url, RPC_URL: s.rpcUrl, DEPLOYMENT_FILE: deploymentFile });

    await s.depositAndMint({
      amountZat: 6n * ZEC + 1234n,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
    await s.receipt(
      await s.as(alice).redemptions.write.redeem([10n * ZSD, s.seal("ztestsapling1ledger", alice.address)]),
    );
    // A deposit no one mints against: never a redeemer's.
    await s.deposit(createNote(), 2n * ZEC);
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
  });

  afterAll(async () => {
    await api?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("GET /v1/supply equals totalSupply", async () => {
    const body = await (await api.call("/v1/supply")).json();
    const total = await s.read.token.read.totalSupply();
    expect(body).toMatchObject({
      object: "supply",
      symbol: "ZSD",
      circulating: formatZsd(total),
      burned: "10",
      holders: 2,
    });
    expect(body.asOfBlock).toBeGreaterThan(0);
  });

  it("says in every ledger answer which block it is as of, that block's time and its age", async () => {
    const head = await s.publicClient.getBlock();
    for (const path of [
      "/v1/supply",
      "/v1/collateral",
      "/v1/prices/peg",
      `/v1/wallets/${alice.address}/balances`,
      "/v1/deposits/pending",
    ]) {
      const body = await (await api.call(path)).json();
      expect(body.asOfBlock, path).toBe(Number(head.number));
      expect(body.asOfBlockTime, path).toBe(new Date(Number(head.timestamp) * 1000).toISOString());
      const age = Math.max(0, Math.floor(Date.now() / 1000) - Number(head.timestamp));
      expect(Math.abs(body.asOfBlockAgeSeconds - age), path).toBeLessThanOrEqual(1);
    }
    const documented = (api.openApi as { components: { schemas: Record<string, { required?: string[] }> } }).components
      .schemas;
    for (const schema of ["Supply", "Collateral", "PegPrice", "Balances", "PendingLeaves"]) {
      expect(documented[schema]!.required, schema).toEqual(
        expect.arrayContaining(["asOfBlock", "asOfBlockTime", "asOfBlockAgeSeconds"]),
      );
    }
  });

  it("is not ready while the indexer answers but stays behind the chain, and its answers show their age", async () => {
    // An indexer stuck at block 3 for an hour, as the dev stack's once stayed at block 341.
    const stuckAt = { number: 3, timestamp: Math.floor(Date.now() / 1000) - 3600 };
    const stuck: Server = createServer((req, res) => {
      const answers: Record<string, unknown> = {
        "/ready": "",
        "/status": { zsd: { id: 31337, block: stuckAt } },
        "/supply": { minted: "0", burned: "0", circulating: "0", holders: 0, updatedAtBlock: null },
      };
      const answer = answers[req.url ?? ""];
      if (answer === undefined) res.writeHead(404).end();
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => stuck.listen(0, "127.0.0.1", resolve));
    const stuckApi = await startApi(storage.db, {
      INDEXER_URL: `http://127.0.0.1:${(stuck.address() as { port: number }).port}`,
      RPC_URL: s.rpcUrl,
    });
    try {
      await s.mineBlocks(1);
      const chainHead = Number(await s.publicClient.getBlockNumber());
      const ready = await stuckApi.call("/v1/health/ready", { key: null });
      expect(ready.status).toBe(503);
      expect(ready.headers.get("retry-after")).toBeTruthy();
      expect(await ready.json()).toEqual({
        status: "not_ready",
        code: "indexer_lagging",
        detail: `The indexer is at block 3, ${chainHead - 3} blocks behind the chain (at most 10).`,
        checks: { database: true, indexer: false, chain: true },
        indexer: { block: 3, chainHead, lagBlocks: chainHead - 3, maxLagBlocks: 10 },
      });
      const supply = await (await stuckApi.call("/v1/supply")).json();
      expect(supply).toMatchObject({ asOfBlock: 3, asOfBlockTime: new Date(stuckAt.timestamp * 1000).toISOString() });
      expect(supply.asOfBlockAgeSeconds).toBeGreaterThanOrEqual(3600);
    } finally {
      await stuckApi.close();
      await new Promise((resolve) => stuck.close(resolve));
    }
  });

  it("GET /v1/collateral equals the registry, redemptions and oracle", async () => {
    const body = await (await api.call("/v1/collateral")).json();
    const outstanding = await s.read.registry.read.totalCollateralZat();
    const [, price, , updatedAt] = await s.read.oracle.read.latestRoundData();
    const supply = await s.read.token.read.totalSupply();
    const value = usdValueOfZat(outstanding, price);
    expect(body).toMatchObject({
      object: "collateral",
      asset: "ZEC",
      depositedZec: formatZec(await s.read.registry.read.totalDepositedZat()),
      outstandingZec: formatZec(outstanding),
      paidOutZec: "0",
      pendingRedemptionZec: formatZec(await s.read.redemptions.read.pendingZatDue()),
      valueUsd: formatZsd(value),
      circulatingSupply: formatZsd(supply),
      collateralRatio: formatUnits((value * 10_000n) / supply, 4),
      price: { zecUsd: formatPrice(price), updatedAt: new Date(Number(updatedAt) * 1000).toISOString() },
    });
    expect(body.price.ageSeconds).toBeGreaterThanOrEqual(0);
    // Where the ZEC is, from the contracts: the positions' collateral (less what the redemption took),
    // the unminted deposit, and what the redemption is owed.
    const backing = await s.read.positions.read.backingCollateralZat();
    const pending = await s.read.redemptions.read.pendingZatDue();
    expect(backing + pending + 2n * ZEC).toBe(outstanding);
    expect(body.split).toEqual({
      inPositionsZec: formatZec(backing),
      claimableZec: "0",
      unmintedZec: formatZec(2n * ZEC),
      pendingPayoutZec: formatZec(pending),
      positionsValueUsd: formatZsd(usdValueOfZat(backing, price)),
      systemRatio: formatUnits((usdValueOfZat(backing, price) * 10_000n) / supply, 4),
      systemFloorRatio: "1.5",
      recoveryMode: false,
      // The governed least reward of a liquidation or redistribution: 125,000 zatoshi by default.
      keeperRewardFloorZec: "0.00125",
    });
  });

  it("GET /v1/prices/peg gives the 1.00 target and the oracle price", async () => {
    expect(await (await api.call("/v1/prices/peg")).json()).toMatchObject({
      object: "peg_price",
      pegPrice: "1.00",
      zecUsd: "50",
    });
  });

  it("GET /v1/wallets/{address}/balances equals balanceOf, zero for an unknown address", async () => {
    for (const account of [alice, relayer]) {
      const body = await (await api.call(`/v1/wallets/${account.address}/balances`)).json();
      const balance = await s.read.token.read.balanceOf([account.address]);
      expect(body.balances).toEqual([
        { asset: "ZSD", amount: formatZsd(balance), decimals: ZSD_DECIMALS, raw: balance.toString() },
      ]);
    }
    const lower = await (await api.call(`/v1/wallets/${bob.address.toLowerCase()}/balances`)).json();
    expect(lower).toMatchObject({ address: bob.address, balances: [{ amount: "0", raw: "0" }] });
  });

  it("GET /v1/relay/anonymity counts the deposits that could reach a floor at once (of a batch, no more than its total covers), change leaves apart", async () => {
    // Two deposits recorded in a batch publish their total only (12.00002468 ZEC): as far as the chain
    // shows, either could hold all of it but a zatoshi, and both 6 ZEC at once.
    const batch = [createNote(), createNote()].map((n) => depositLeaf(600_001_234n, noteCommitment(n)));
    await s.receipt(await s.sendDeposits(batch, 1_200_002_468n));
    // Dust beside a large deposit, in one batch as the attestor records one window's deposits (an
    // attacker's 10 ZEC and 15 deposits of a zatoshi): each leaf's bound is 10 ZEC, yet at most
    // floor(total / floor) of the 16 can hold a floor at once, 10 at 1 ZEC, 5 at 2 ZEC.
    const dust = [10n * ZEC, ...Array<bigint>(15).fill(1n)].map((a) => depositLeaf(a, noteCommitment(createNote())));
    await s.receipt(await s.sendDeposits(dust, 10n * ZEC + 15n));
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    // A page of leaves that ends inside the batch has no root to check against (the registry
    // never had one there); a page that ends with the batch has the registry's.
    const size = Number(await s.read.registry.read.size());
    const pageRoot = async (limit: number) =>
      (await (await api.call(`/v1/deposits/leaves?from=0&limit=${limit}`)).json()).root as string | null;
    expect(await pageRoot(size - 1)).toBeNull();
    expect(await pageRoot(size)).toBe(String(await s.read.registry.read.root()));
    // What the chain says: a released note's amount (its LeafQueued's, public), once an insertion put its
    // leaf in the tree; a change leaf's is private (queued with 0), and so is each amount of a batch of
    // deposits (DepositsRecorded, every deposit's way in). PendingLeavesInserted names leaves only.
    const registry = { address: s.read.registry.address, abi: collateralRegistryAbi, fromBlock: 0n } as const;
    const events = await s.publicClient.getContractEvents(registry);
    const batched = events.flatMap((e) =>
      e.eventName === "DepositsRecorded" || e.eventName === "PendingLeavesInserted" ? e.args.leaves! : [],
    );
    const amounts = events.flatMap((e) =>
      e.eventName === "LeafQueued" && e.args.amountZat! > 0n && batched.includes(e.args.leaf!)
        ? [e.args.amountZat!]
        : [],
    );
    const hidden = batched.length - amounts.length;
    // Each batch of deposits: its size, its total, and the most one of its leaves could hold (the total
    // less a zatoshi for each other leaf).
    const batches = events.flatMap((e) =>
      e.eventName === "DepositsRecorded"
        ? [
            {
              n: BigInt(e.args.leaves!.length),
              total: e.args.totalZat!,
              bound: e.args.totalZat! - BigInt(e.args.leaves!.length - 1),
            },
          ]
        : [],
    );
    // A batch whose bound reaches the floor counts min(n, floor(total / floor)); a note counts when its amount does.
    const candidates = (floorZat: bigint) =>
      amounts.filter((a) => a >= floorZat).length +
      batches
        .filter((b) => b.bound >= floorZat)
        .reduce((sum, b) => sum + Number(b.total / floorZat < b.n ? b.total / floorZat : b.n), 0);
    // Deposits of single batches (the fixture's) and the two batches above: candidates at some floors, not at others.
    expect(batches.length).toBeGreaterThanOrEqual(4);
    expect(batched.length).toBeGreaterThanOrEqual(19);
    // Counted leaf by leaf, the dust batch would add 16 at 1 and at 2 ZEC.
    const leafByLeaf = (floorZat: bigint) =>
      amounts.filter((a) => a >= floorZat).length +
      batches.filter((b) => b.bound >= floorZat).reduce((sum, b) => sum + Number(b.n), 0);
    expect(leafByLeaf(ZEC) - candidates(ZEC)).toBe(6);
    expect(leafByLeaf(2n * ZEC) - candidates(2n * ZEC)).toBe(11);
    for (const floor of [
      "0.00000001",
      "0.00000002",
      "1",
      "2",
      "2.00000001",
      "6.00001234",
      "10",
      "10.00000001",
      "12.00002467",
      "12.00002468",
    ]) {
      const response = await api.call(`/v1/relay/anonymity?floor=${floor}`, { key: null });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        object: "anonymity",
        floor,
        floorZat: parseZec(floor).toString(),
        candidates: candidates(parseZec(floor)),
        hiddenAmountLeaves: hidden,
        leaves: registryLeaves(events).length,
        advisedMinimum: 20,
      });
    }
    const refused = await api.call("/v1/relay/anonymity?floor=-1", { key: null });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    // The problem names the field and the rule it broke.
    expect(JSON.stringify(await refused.json())).toMatch(/floor.*must be positive/);
  });

  it("GET /v1/deposits/pending lists the change leaves queued for the tree until an insertion takes them", async () => {
    type Pending = {
      object: string;
      data: { sequence: number; leaf: string; queuedAt: string }[];
      queuedCount: number;
    };
    const pending = async () => (await (await api.call("/v1/deposits/pending")).json()) as Pending;
    const before = await pending();
    expect(before).toMatchObject({ object: "pending_leaves", data: [], queuedCount: 0 });
    // Two mints that leave change (a floor under the note's amount): their change waits, in order.
    const mints = [];
    for (const amountZat of [3n * ZEC, 4n * ZEC]) {
      mints.push(
        await s.depositAndMint({
          amountZat,
          collateralFloorZat: 2n * ZEC,
          mintAmount: 20n * ZSD,
          recipient: bob.address,
        }),
      );
    }
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    const queuedAt = async (blockNumber: bigint) =>
      new Date(Number((await s.publicClient.getBlock({ blockNumber })).timestamp) * 1000).toISOString();
    const queued = await pending();
    expect(queued.data).toEqual([
      {
        sequence: 0,
        leaf: String(mints[0]!.request.changeLeaf),
        queuedAt: await queuedAt(mints[0]!.receipt.blockNumber),
      },
      {
        sequence: 1,
        leaf: String(mints[1]!.request.changeLeaf),
        queuedAt: await queuedAt(mints[1]!.receipt.blockNumber),
      },
    ]);
    expect(queued.queuedCount).toBe(2);
    // Not in the tree: no leaf of the tree is either.
    const leaves = async () =>
      ((await (await api.call("/v1/deposits/leaves?limit=5000")).json()) as { data: { leaf: string }[] }).data.map(
        (d) => d.leaf,
      );
    expect(await leaves()).not.toContain(queued.data[0]!.leaf);

    // The list is the queue the registry takes, by sequence: the first of the two enters the tree, the other waits.
    const insert = (d: (typeof queued.data)[number]) =>
      s.as(bob).registry.write.insertPendingLeaves([BigInt(d.sequence), [BigInt(d.leaf)]]);
    await s.receipt(await insert(queued.data[0]!));
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    expect((await pending()).data).toEqual([queued.data[1]]);
    expect((await leaves()).at(-1)).toBe(queued.data[0]!.leaf);
    await s.receipt(await insert(queued.data[1]!));
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    expect(await pending()).toMatchObject({ data: [], queuedCount: 2 });
    expect((await leaves()).slice(-2)).toEqual(queued.data.map((d) => d.leaf));
  });

  it("is ready with the indexer and chain up, answers 503 once it is killed, and catches up after a restart", async () => {
    const head = Number(await s.publicClient.getBlockNumber());
    await waitForBlock(indexer.url, BigInt(head));
    const ready = await api.call("/v1/health/ready", { key: null });
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: { database: true, indexer: true, chain: true, price: true },
      indexer: { block: head, chainHead: head, lagBlocks: 0, maxLagBlocks: 10 },
    });
    // SIGKILL, as a crash or the OOM killer would: no shutdown, its schema left locked.
    const exited = new Promise((resolve) => indexer.process.once("exit", resolve));
    indexer.process.kill("SIGKILL");
    await exited;
    const started = performance.now();
    const response = await api.call("/v1/collateral");
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBeTruthy();
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({
      code: "upstream_unavailable",
      detail: expect.stringMatching(/indexer/),
    });
    expect(performance.now() - started).toBeLessThan(3000);
    expect((await api.call("/v1/relay/anonymity?floor=1", { key: null })).status).toBe(503);
    expect((await api.call("/v1/deposits/pending")).status).toBe(503);
    const notReady = await api.call("/v1/health/ready", { key: null });
    expect(notReady.status).toBe(503);
    expect((await notReady.json()).checks).toEqual({ database: true, indexer: false, chain: true, price: true });

    // The chain goes on without it: a mint, a transfer and a redemption it has not seen.
    await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 40n * ZSD, recipient: bob.address });
    await s.receipt(await s.as(bob).token.write.transfer([alice.address, 5n * ZSD]));
    await s.receipt(await s.as(bob).redemptions.write.redeem([7n * ZSD, s.seal("ztestsapling1ledger", bob.address)]));
    const chainHead = await s.publicClient.getBlockNumber();

    // Restarted on the same schema, it recovers from its checkpoint once the dead one's lock expires (Ponder's
    // 25 s heartbeat timeout). Meanwhile every read answers 503 or says which block it is as of: never a 500,
    // never figures newer than their block.
    const answers: string[] = [];
    let restarting = true;
    const polling = (async () => {
      while (restarting) {
        const read = await api.call("/v1/supply");
        const body = (await read.json()) as { code?: string; asOfBlock?: number };
        answers.push(read.status === 200 ? `200 ${body.asOfBlock! <= chainHead}` : `${read.status} ${body.code}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      indexer = await startIndexer({
        rpcUrl: s.rpcUrl,
        deploymentFile: join(dir, "deployment.json"),
        databaseUrl: indexerDb!.url,
        schema: "zsd_api",
        // Where the API expects it.
        port: Number(new URL(indexer.url).port),
      });
      await waitForBlock(indexer.url, chainHead, { nudge: () => s.mineBlocks(1) });
    } finally {
      restarting = false;
      await polling;
    }
    expect(new Set(answers)).toEqual(
      new Set(answers.filter((a) => a === "503 upstream_unavailable" || a === "200 true")),
    );
    expect(answers).toContain("503 upstream_unavailable");
    // It resumed from its own checkpoint on the dead one's schema, not from a new one.
    expect(indexer.logs()).toMatch(/Detected crash recovery/);
    // Caught up: what it missed while down is in its figures, and they are the chain's.
    const supply = await (await api.call("/v1/supply")).json();
    expect(supply).toMatchObject({ circulating: formatZsd(await s.read.token.read.totalSupply()), burned: "17" });
    expect(supply.asOfBlock).toBeGreaterThanOrEqual(Number(chainHead));
    for (const account of [alice, bob]) {
      const body = await (await api.call(`/v1/wallets/${account.address}/balances`)).json();
      expect(body.balances[0].raw).toBe((await s.read.token.read.balanceOf([account.address])).toString());
    }
    expect((await api.call("/v1/health/ready", { key: null })).status).toBe(200);
  });
});
