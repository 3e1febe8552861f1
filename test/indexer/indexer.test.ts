// The Ponder indexer against a real Hardhat node, real contracts and real
// proofs, on embedded PGlite and on PostgreSQL: after a scripted sequence every
// derived figure equals what the chain says, also after a shallow revert and
// after its head subscription would have gone silent. It is internal: no SQL
// over HTTP, no CORS, no internals in its errors.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, type Hex, keccak256, toHex } from "viem";
import { usdValueOfZat } from "@zsd/sdk/units";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../scripts/lib/indexer-process.ts";
import { DepositTree, createNote, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type ChainProxy, startChainProxy } from "./chain-proxy.ts";

const { alice, bob, carol, relayer, attestor, oracleUpdater, deployer } = accounts;
const STATES = ["pending", "active", "canceled", "defeated", "succeeded", "queued", "expired", "executed"];
const SAPLING = "ztestsapling1indexertest";

async function get<T = Record<string, unknown>>(indexer: RunningIndexer, path: string): Promise<T> {
  const response = await fetch(`${indexer.url}${path}`);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe.each(["pglite", "postgres"] as const)("indexer on %s", (database) => {
  let s: System;
  let indexer: RunningIndexer;
  let proxy: ChainProxy;
  const cleanup: (() => Promise<void> | void)[] = [];
  const holders = [alice, bob, carol, relayer].map((a) => a.address);
  let proposal: { id: bigint; targets: Address[]; values: bigint[]; calldatas: Hex[]; descriptionHash: Hex };

  /** Waits until the indexer has processed the chain head. */
  async function caughtUp() {
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
  }

  /**
   * Every figure the indexer derives, checked against the contracts. The
   * indexer is eventually consistent (after a reorg its status can move on a
   * moment before the rolled-back rows are visible), so the comparison is
   * retried for a few seconds; a wrong figure still fails.
   */
  async function expectMatchesChain() {
    await caughtUp();
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await compareWithChain();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async function compareWithChain() {
    const r = s.read;
    const supply = await get<{ circulating: string; minted: string; burned: string; holders: number }>(
      indexer,
      "/supply",
    );
    const totalSupply = await r.token.read.totalSupply();
    expect(BigInt(supply.circulating)).toBe(totalSupply);
    expect(BigInt(supply.minted) - BigInt(supply.burned)).toBe(totalSupply);
    let nonZero = 0;
    for (const address of holders) {
      const balance = await r.token.read.balanceOf([address]);
      if (balance > 0n) nonZero++;
      expect(BigInt((await get<{ balance: string }>(indexer, `/accounts/${address}`)).balance), address).toBe(balance);
    }
    expect(supply.holders).toBe(nonZero);

    const collateral = await get<Record<string, string>>(indexer, "/collateral");
    expect(BigInt(collateral.outstandingZat!)).toBe(await r.registry.read.totalCollateralZat());
    expect(BigInt(collateral.depositedZat!)).toBe(await r.registry.read.totalDepositedZat());
    expect(BigInt(collateral.paidOutZat!)).toBe(await r.registry.read.totalPaidOutZat());
    expect(BigInt(collateral.pendingRedemptionZat!)).toBe(await r.redemptions.read.pendingZatDue());
    const [, answer] = await r.oracle.read.latestRoundData();
    expect(BigInt(collateral.price!)).toBe(answer);
    const value = usdValueOfZat(await r.registry.read.totalCollateralZat(), answer);
    expect(BigInt(collateral.valueUsd!)).toBe(value);
    if (totalSupply > 0n) expect(BigInt(collateral.collateralRatioBps!)).toBe((value * 10_000n) / totalSupply);

    const { deposits } = await get<{ deposits: { leaf: string }[] }>(indexer, "/deposits?from=0&limit=5000");
    expect(deposits).toHaveLength(Number(await r.registry.read.size()));
    expect(new DepositTree(deposits.map((d) => BigInt(d.leaf))).root).toBe(await r.registry.read.root());

    if (proposal) {
      const p = await get<Record<string, string>>(indexer, `/proposals/${proposal.id}`);
      const [against, forVotes, abstain] = await r.governor.read.proposalVotes([proposal.id]);
      expect([BigInt(p.againstVotes!), BigInt(p.forVotes!), BigInt(p.abstainVotes!)]).toEqual([
        against,
        forVotes,
        abstain,
      ]);
      expect(p.state).toBe(STATES[await r.governor.read.state([proposal.id])]);
    }
  }

  beforeAll(async () => {
    s = await deploySystem();
    const dir = mkdtempSync(join(tmpdir(), "zsd-indexer-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    let databaseUrl: string | undefined;
    if (database === "postgres") {
      const db = await createTestDatabase("zsd_indexer");
      cleanup.push(db.drop);
      databaseUrl = db.url;
    }
    // The indexer reaches the node through a proxy that can silence WebSockets.
    proxy = await startChainProxy(s.rpcUrl);
    cleanup.unshift(() => proxy.close());
    indexer = await startIndexer({
      rpcUrl: proxy.url,
      deploymentFile,
      databaseUrl,
      pgliteDirectory: join(dir, "pglite"),
      schema: "zsd_test",
    });
    cleanup.unshift(() => indexer.stop());
  });

  afterAll(async () => {
    for (const step of cleanup) await step();
    await releaseProver();
  });

  it("derives supply, balances, collateral, mints and redemptions from a scripted sequence", async () => {
    await s.depositAndMint({
      amountZat: 6n * ZEC,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
    const bobMint = await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 80n * ZSD, recipient: bob.address });
    await s.deposit(createNote(), 1n * ZEC + 7n);
    await s.receipt(await s.as(alice).token.write.transfer([carol.address, 20n * ZSD]));
    await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([48_50000000n]));

    // Alice redeems (paid); Bob redeems through a relayer with a signature (failed, refunded).
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, SAPLING]));
    const sig = await s.signedRedeem(bob, 30n * ZSD, SAPLING);
    await s.receipt(
      await s
        .as(relayer)
        .redemptions.write.redeemWithPermit([bob.address, 30n * ZSD, SAPLING, sig.deadline, sig.v, sig.r, sig.s]),
    );
    const txid = `0x${"cd".repeat(32)}` as Hex;
    await s.receipt(await s.as(attestor).redemptions.write.completeRedemption([1n, txid]));
    await s.receipt(await s.as(attestor).redemptions.write.failRedemption([2n, "custody rejected the address"]));

    await expectMatchesChain();

    const mint = await get<Record<string, string>>(indexer, `/mints/${bobMint.request.nullifierHash}`);
    expect(mint).toMatchObject({
      recipient: bob.address,
      amount: String(80n * ZSD),
      fee: "0",
      txHash: bobMint.receipt.transactionHash,
    });
    const paid = await get<Record<string, string>>(indexer, "/redemptions/1");
    expect(paid).toMatchObject({ status: "paid", owner: alice.address, zcashTxId: txid, withdrawAddress: SAPLING });
    const failed = await get<Record<string, string>>(indexer, "/redemptions/2");
    expect(failed).toMatchObject({
      status: "failed",
      owner: bob.address,
      failureReason: "custody rejected the address",
    });
    expect((await fetch(`${indexer.url}/redemptions/99`)).status).toBe(404);
    expect((await fetch(`${indexer.url}/accounts/0x1234`)).status).toBe(400);
    const page = await get<{ deposits: { index: number }[]; next: number | null }>(indexer, "/deposits?from=1&limit=1");
    expect(page).toEqual({ deposits: [expect.objectContaining({ index: 1 })], next: 2 });
  });

  it("follows a proposal through vote, queue and execution with the governor's tallies and state", async () => {
    const g = s.as(deployer).governor;
    await s.receipt(await s.as(deployer).governanceToken.write.delegate([deployer.address]));
    await s.receipt(await s.as(deployer).governanceToken.write.transfer([alice.address, 100_000n * ZSD]));
    await s.receipt(await s.as(alice).governanceToken.write.delegate([alice.address]));
    await s.mineBlocks(1);
    const description = "Lower the redemption fee to 0.3%";
    const { encodeFunctionData } = await import("viem");
    const targets = [s.read.redemptions.address];
    const values = [0n];
    const calldatas = [
      encodeFunctionData({ abi: s.read.redemptions.abi, functionName: "setRedemptionFee", args: [30n] }),
    ];
    const descriptionHash = keccak256(toHex(description));
    await s.receipt(await g.write.propose([targets, values, calldatas, description]));
    proposal = {
      id: await g.read.hashProposal([targets, values, calldatas, descriptionHash]),
      targets,
      values,
      calldatas,
      descriptionHash,
    };
    await expectMatchesChain(); // pending

    await s.mineBlocks(Number(await g.read.votingDelay()) + 1);
    await expectMatchesChain(); // active
    await s.receipt(await g.write.castVote([proposal.id, 1]));
    await s.receipt(await s.as(alice).governor.write.castVoteWithReason([proposal.id, 0, "fees fund custody"]));
    await expectMatchesChain();

    await s.mineBlocks(Number(await g.read.votingPeriod()));
    await expectMatchesChain(); // succeeded
    await s.receipt(await g.write.queue([targets, values, calldatas, descriptionHash]));
    await expectMatchesChain(); // queued
    await s.increaseTime(Number(await s.read.timelock.read.getMinDelay()) + 1);
    await s.receipt(await g.write.execute([targets, values, calldatas, descriptionHash]));
    await expectMatchesChain(); // executed

    const p = await get<{ state: string; description: string }>(indexer, `/proposals/${proposal.id}`);
    expect(p.state).toBe("executed");
    expect(p.description).toBe(description);
    type Votes = { votes: { voter: string; support: number; reason: string }[]; hasMore: boolean };
    const all = await get<Votes>(indexer, `/proposals/${proposal.id}/votes`);
    expect(all.votes.map((v) => [v.voter, v.support, v.reason])).toEqual([
      [deployer.address, 1, ""],
      [alice.address, 0, "fees fund custody"],
    ]);
    // Pages of one, each after the last voter of the page before.
    const first = await get<Votes>(indexer, `/proposals/${proposal.id}/votes?limit=1`);
    expect([first.votes.map((v) => v.voter), first.hasMore]).toEqual([[deployer.address], true]);
    const second = await get<Votes>(
      indexer,
      `/proposals/${proposal.id}/votes?limit=1&startingAfter=${deployer.address}`,
    );
    expect([second.votes.map((v) => v.voter), second.hasMore]).toEqual([[alice.address], false]);
    const listed = await get<{ proposals: { id: string; state: string }[] }>(indexer, "/proposals?state=executed");
    expect(listed.proposals.map((x) => x.id)).toContain(proposal.id.toString());
    expect(await s.read.redemptions.read.redemptionFeeBps()).toBe(30n);
  });

  it("rolls back a shallow revert (evm_snapshot / evm_revert) and matches the chain again", async () => {
    await expectMatchesChain();
    const before = await get<Record<string, unknown>>(indexer, "/supply");
    const snapshot = await s.snapshot();
    const headBefore = await s.publicClient.getBlockNumber();

    await s.depositAndMint({ amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: carol.address });
    await s.receipt(await s.as(carol).token.write.transfer([bob.address, 10n * ZSD]));
    await expectMatchesChain();
    expect(await get(indexer, "/supply")).not.toEqual(before);
    const headAfter = await s.publicClient.getBlockNumber();

    await s.revert(snapshot);
    // New blocks on the old fork, one past the abandoned head, so that the
    // indexer sees the other branch win.
    await s.mineBlocks(Number(headAfter - headBefore) + 1);
    await expectMatchesChain();
    const after = await get<Record<string, unknown>>(indexer, "/supply");
    expect({ ...after, updatedAtBlock: null }).toEqual({ ...before, updatedAtBlock: null });
  });

  // The transport does not depend on the database: once, on the faster one.
  it.runIf(database === "postgres")(
    "keeps following the chain when a head subscription goes silent, 400 blocks on (past block 341)",
    async () => {
      await caughtUp();
      // Hardhat 2 silences a newHeads subscription after five minutes; here at once.
      proxy.silence();
      await s.mineBlocks(400);
      // No nudge: the newest block is indexed without waiting for another.
      await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { timeoutMs: 30_000 });
      await s.depositAndMint({ amountZat: 2n * ZEC, mintAmount: 40n * ZSD, recipient: bob.address });
      await expectMatchesChain();
    },
  );

  it("is internal: JSON routes only, no CORS headers, errors without internals", async () => {
    const origin = "https://attacker.example";
    for (const path of ["/supply", "/status", "/ready", "/health", "/metrics", "/nothing-here"]) {
      const response = await fetch(`${indexer.url}${path}`, { headers: { origin } });
      expect.soft(response.headers.get("access-control-allow-origin"), path).toBeNull();
      await response.arrayBuffer();
    }
    const preflight = await fetch(`${indexer.url}/supply`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET" },
    });
    expect.soft([...preflight.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);

    // No SQL over HTTP.
    for (const path of ["/sql/db", "/sql/live", `/sql/db?sql=${encodeURIComponent('{"json":{"sql":"select 1"}}')}`]) {
      const response = await fetch(`${indexer.url}${path}`);
      expect.soft(response.status, path).toBe(404);
      expect.soft(await response.text()).toBe(JSON.stringify({ error: "not_found", detail: "no such route" }));
    }
    // A value the database would refuse (index is a 32-bit column) is the client's error.
    const deposits = await fetch(`${indexer.url}/deposits?from=3000000000`);
    expect.soft(deposits.status).toBe(400);
    expect.soft(await deposits.text()).toMatch(/^\{"error":"invalid_query"/);
  });
});
