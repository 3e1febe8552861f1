// Ledger reads through the API against a live Hardhat node and the indexer,
// with real proofs: every figure equals what the contracts say.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatUnits } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../scripts/lib/indexer-process.ts";
import { releaseProver } from "../../sdk/js/src/notes/index.ts";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, openStorage, startApi } from "./helpers.ts";

const { alice, bob, relayer } = accounts;

describe("ledger read endpoints", () => {
  let s: System;
  let indexer: RunningIndexer;
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
      pgliteDirectory: join(dir, "pglite"),
      schema: "zsd_api",
    });
    storage = await openStorage("pglite");
    api = await startApi(storage.db, { INDEXER_URL: indexer.url, RPC_URL: s.rpcUrl });

    await s.depositAndMint({
      amountZat: 6n * ZEC + 1234n,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
    await s.receipt(await s.as(alice).redemptions.write.redeem([10n * ZSD, "ztestsapling1ledger"]));
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
  });

  afterAll(async () => {
    await api?.close();
    await indexer?.stop();
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
      circulating: formatUnits(total, 18),
      burned: "10",
      holders: 2,
    });
    expect(body.asOfBlock).toBeGreaterThan(0);
  });

  it("GET /v1/collateral equals the registry, redemptions and oracle", async () => {
    const body = await (await api.call("/v1/collateral")).json();
    const outstanding = await s.read.registry.read.totalCollateralZat();
    const [, price, , updatedAt] = await s.read.oracle.read.latestRoundData();
    const supply = await s.read.token.read.totalSupply();
    const value = outstanding * price * 100n;
    expect(body).toMatchObject({
      object: "collateral",
      asset: "ZEC",
      depositedZec: formatUnits(await s.read.registry.read.totalDepositedZat(), 8),
      outstandingZec: formatUnits(outstanding, 8),
      paidOutZec: "0",
      pendingRedemptionZec: formatUnits(await s.read.redemptions.read.pendingZatDue(), 8),
      valueUsd: formatUnits(value, 18),
      circulatingSupply: formatUnits(supply, 18),
      collateralRatio: formatUnits((value * 10_000n) / supply, 4),
      price: { zecUsd: formatUnits(price, 8), updatedAt: new Date(Number(updatedAt) * 1000).toISOString() },
    });
    expect(body.price.ageSeconds).toBeGreaterThanOrEqual(0);
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
        { asset: "ZSD", amount: formatUnits(balance, 18), decimals: 18, raw: balance.toString() },
      ]);
    }
    const lower = await (await api.call(`/v1/wallets/${bob.address.toLowerCase()}/balances`)).json();
    expect(lower).toMatchObject({ address: bob.address, balances: [{ amount: "0", raw: "0" }] });
  });

  it("is ready with the indexer and chain up, and answers 503 with Retry-After once the indexer stops", async () => {
    const ready = await api.call("/v1/health/ready", { key: null });
    expect(await ready.json()).toEqual({ status: "ready", checks: { database: true, indexer: true, chain: true } });
    await indexer.stop();
    const started = performance.now();
    const response = await api.call("/v1/collateral");
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBeTruthy();
    expect(performance.now() - started).toBeLessThan(3000);
    const notReady = await api.call("/v1/health/ready", { key: null });
    expect(notReady.status).toBe(503);
    expect((await notReady.json()).checks).toEqual({ database: true, indexer: false, chain: true });
  });
});
