// A stale or untrusted ZEC/USD price: the contracts would refuse every mint and
// redemption (PriceFrozen: neither feed trusted), so the relay refuses first —
// 503 price_stale with Retry-After, nothing queued, the feeds' states in the
// detail — and readiness says why. The sandbox feeder keeps both feeds.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { describe, expect, it } from "vitest";
import { createNote, noteCommitment, publicSignalsToArray } from "@zsd/sdk/notes";
import { formatZsd } from "@zsd/sdk/units";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { type RunningApi, eventually, json, startRelayApi, useRelayApi } from "../helpers.ts";

const { alice, oracleUpdater, secondaryOracleUpdater } = accounts;
const UPDATERS = {
  ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(2),
  SECONDARY_ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(8),
};
const WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

describe("a stale price", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  useRelayApi({}, async (stack) => {
    ({ s, api, db } = stack);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
  });

  async function verifiedProofId(): Promise<string> {
    const note = createNote();
    const deposit = await api.call(
      "/v1/sandbox/deposits",
      json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
    );
    expect(deposit.status).toBe(201);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const submitted = await api.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "100",
        recipient: alice.address,
      }),
    );
    expect(submitted.status).toBe(201);
    return ((await submitted.json()) as { proofId: string }).proofId;
  }

  const mint = (proofId: string) =>
    api.call("/v1/mint", json({ amount: "100", collateralType: "ZEC", proofId, recipient: alice.address }));

  async function redeemBody() {
    const amount = 10n * ZSD;
    const sealedAddress = s.seal(WITHDRAW, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
    return {
      amount: formatZsd(amount),
      sealedAddress,
      owner: alice.address,
      permit: { deadline: Number(deadline), ...sig },
    };
  }

  it("refuses mints and redemptions before queueing them, says so in readiness, and recovers with a new price", async () => {
    const proofId = await verifiedProofId();
    const ready = (await (await api.call("/v1/health/ready", { key: null })).json()) as Record<string, unknown>;
    expect(ready.checks).toMatchObject({ price: true });

    const [, price] = await s.read.oracle.read.latestRoundData();
    await s.increaseTime(3_600);

    const refused = await mint(proofId);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    const problem = (await refused.json()) as { code: string; detail: string; maxPriceAgeSeconds: number };
    expect(problem).toMatchObject({ code: "price_stale", maxPriceAgeSeconds: 3_600 });
    expect(problem.detail).toMatch(/^The ZEC\/USD price is 3,6\d\d s old; mints need one under 3,600 s/);
    expect(problem.detail).toContain("the primary feed is stale, the second stale");
    expect(await api.db.query("SELECT 1 FROM mints")).toEqual([]);
    expect((await (await api.call(`/v1/proofs/${proofId}`)).json()).status).toBe("verified");

    const redeem = await api.call("/v1/redeem", json(await redeemBody()));
    expect(redeem.status).toBe(503);
    expect((await redeem.json()).code).toBe("price_stale");
    expect(await api.db.query("SELECT 1 FROM redemption_requests")).toEqual([]);

    const stale = await api.call("/v1/health/ready", { key: null });
    expect(stale.status).toBe(503);
    expect(await stale.json()).toMatchObject({ checks: { price: false }, code: "price_stale" });

    await s.as(oracleUpdater).oracle.write.setPrice([price]);
    expect((await mint(proofId)).status).toBe(202);
    expect((await api.call("/v1/redeem", json(await redeemBody()))).status).toBe(202);
  });

  it("refuses while the feeds disagree (one drifted or jumped alone), though both are fresh, and recovers once they agree", async () => {
    const proofId = await verifiedProofId();
    const [, price] = await s.read.oracle.read.latestRoundData();
    await s.setPrice(price);
    const queued = (await api.db.query("SELECT 1 FROM mints")).length;
    // The primary alone moves 10%, within the jump bound: healthy by itself, but the second disagrees.
    await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([(price * 11n) / 10n]));
    const drifted = await mint(proofId);
    expect(drifted.status).toBe(503);
    expect(((await drifted.json()) as { detail: string }).detail).toMatch(
      /the primary feed is healthy, the second healthy, and the two disagree\./,
    );
    // The primary alone doubles: suspect, and the second (unchanged) disagrees.
    await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([price * 2n]));
    const refused = await mint(proofId);
    expect(refused.status).toBe(503);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe("price_stale");
    expect(problem.detail).toMatch(
      /frozen at its last good value: the primary feed is suspect .*, the second healthy, and the two disagree\./,
    );
    expect(await api.db.query("SELECT 1 FROM mints")).toHaveLength(queued);
    const ready = await api.call("/v1/health/ready", { key: null });
    expect(ready.status).toBe(503);
    // The second confirms the move: the price is trusted again.
    await s.receipt(await s.as(secondaryOracleUpdater).secondaryOracle.write.setPrice([price * 2n]));
    expect((await mint(proofId)).status).toBe(202);
    await s.setPrice(price);
  });

  it("keeps the sandbox's price fresh with a feeder, and lets a developer set, walk or pause it", async () => {
    const sandbox = await startRelayApi(s, db, { ...UPDATERS, SANDBOX_PRICE_FEED_MS: "100" });
    try {
      await s.increaseTime(3_600);
      const proofId = await verifiedProofId();
      expect((await mint(proofId)).status).toBe(503);
      // Started, the feeder posts at once: the same price, fresh.
      const [, before] = await s.read.oracle.read.latestRoundData();
      await sandbox.priceFeed!.start();
      expect((await mint(proofId)).status).toBe(202);
      expect((await s.read.oracle.read.latestRoundData())[1]).toBe(before);

      // A jump of 59%, posted to both feeds: they agree, so the price follows.
      const set = await sandbox.call("/v1/sandbox/price", json({ price: "20.5" }));
      expect(await set.json()).toMatchObject({ object: "sandbox_price", mode: "fixed", price: "20.5" });
      expect((await s.read.oracle.read.latestRoundData())[1]).toBe(2_050_000_000n);
      expect((await s.read.secondaryOracle.read.latestRoundData())[1]).toBe(2_050_000_000n);
      expect((await s.read.priceFeed.read.peekPrice())[0]).toBe(2_050_000_000n);

      // A random walk moves by at most 0.5% a step.
      await sandbox.call("/v1/sandbox/price", json({ mode: "walk" }));
      const walked = await eventually(
        () => s.read.oracle.read.latestRoundData(),
        ([, answer]) => answer !== 2_050_000_000n,
        "the walk to move the price",
      );
      expect(Number(walked[1]) / 2_050_000_000).toBeGreaterThan(0.95);
      expect(Number(walked[1]) / 2_050_000_000).toBeLessThan(1.05);

      // Paused, nothing is posted: the price goes stale as on a chain whose oracle stopped.
      await sandbox.call("/v1/sandbox/price", json({ mode: "paused", price: "30" }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await s.read.oracle.read.latestRoundData())[1]).toBe(3_000_000_000n);
      await s.increaseTime(3_600);
      expect((await (await sandbox.call("/v1/sandbox/price")).json()).mode).toBe("paused");
      expect((await (await sandbox.call("/v1/health/ready", { key: null })).json()).code).toBe("price_stale");

      for (const bad of [{}, { price: "-1" }, { price: "0" }, { mode: "up" }, { price: 20 }]) {
        expect((await sandbox.call("/v1/sandbox/price", json(bad))).status).toBe(400);
      }
    } finally {
      sandbox.priceFeed?.stop();
      await sandbox.close();
    }
  });

  it("keeps a developer's price when the feeder's ticks queued before it land after it", async () => {
    // A tick fixes its price when it is queued. Ticks queued behind a slow post once posted
    // the old price after a developer's set, and made it the feeder's price again.
    const proxy = await startRpcProxy(s.rpcUrl);
    const sandbox = await startRelayApi(s, db, {
      RPC_URL: proxy.url,
      ...UPDATERS,
      SANDBOX_PRICE_FEED_MS: "20",
    });
    try {
      await sandbox.priceFeed!.start();
      const [, old] = await s.read.oracle.read.latestRoundData();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      proxy.beforeNextSend = () => held;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const set = sandbox.call("/v1/sandbox/price", json({ price: "20.5" }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      expect((await set).status).toBe(200);
      expect(old).not.toBe(2_050_000_000n);
      // What the queue held when the set answered has landed well within 3 s.
      const seen = new Set<bigint>();
      for (const until = Date.now() + 3_000; Date.now() < until;) {
        seen.add((await s.read.oracle.read.latestRoundData())[1]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect([...seen]).toEqual([2_050_000_000n]);
      expect(sandbox.priceFeed!.state.price).toBe(2_050_000_000n);
    } finally {
      sandbox.priceFeed?.stop();
      await sandbox.close();
      await proxy.close();
    }
  });
});
