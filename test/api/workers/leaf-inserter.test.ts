// The relay inserts the registry's queued change leaves (api/src/workers/upkeep/leaf-inserter.ts)
// on a live Hardhat node, with the indexer and the API's relay worker, real proofs.
// Change of several relayed mints enters the tree in one insertion; a wallet's own
// mint's change is inserted after the wait; someone inserting everything first costs
// the relay one reverted transaction and no error, while a leaf inserted or queued
// between its read and its send costs nothing (it inserts the rest); an indexer stuck
// behind or listing other leaves is reported once; at rest the inserter reads the
// pending count and nothing else; the gas limit holds what insertions use.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hex, decodeFunctionData, keccak256, numberToHex, parseTransaction, toFunctionSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { formatZsd } from "@zsd/sdk/units";
import { createTestDatabase } from "@zsd/testkit";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { TX_GAS_CAP } from "../../../api/src/adapters/gas.ts";
import { loadConfig } from "../../../api/src/config/config.ts";
import {
  INSERT_GAS,
  LeafInserter,
  type LeafInserterOptions,
  insertionGas,
  readPendingLeaves,
} from "../../../api/src/workers/upkeep/leaf-inserter.ts";
import { TransactionSender } from "../../../api/src/workers/relay/sender.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type RunningIndexer, startIndexer } from "../../../scripts/lib/indexer-process.ts";
import { type RpcProxy, startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, openStorage, settledMint, startRelayApi } from "../helpers.ts";
import { captureLogs } from "../log-capture.ts";

const { alice, bob } = accounts;
const WAIT_MS = 3_000;

describe("the relay's leaf inserter", () => {
  let s: System;
  let dir: string;
  let deploymentFile: string;
  let indexer: RunningIndexer;
  let indexerDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let proxy: RpcProxy;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  const logs = captureLogs("info");

  const registry = () => s.read.registry;
  const pendingCount = () => registry().read.pendingCount();
  const insertions = async () =>
    (
      await s.publicClient.getContractEvents({
        address: registry().address,
        abi: collateralRegistryAbi,
        eventName: "PendingLeavesInserted",
        fromBlock: 0n,
      })
    ).map((e) => ({ ...e.args, txHash: e.transactionHash, blockNumber: e.blockNumber }));
  const queuedSince = async (fromBlock: bigint) =>
    (
      await s.publicClient.getContractEvents({
        address: registry().address,
        abi: collateralRegistryAbi,
        eventName: "LeafQueued",
        fromBlock,
      })
    ).map((e) => e.args.leaf!);
  const failures = () => logs.lines.filter((line) => line.includes("change leaf insertion failed"));
  const selector = (raw: Hex) => {
    try {
      return decodeFunctionData({ abi: collateralRegistryAbi, data: parseTransaction(raw).data! }).functionName;
    } catch {
      return undefined;
    }
  };
  /** A wallet's own mint of 1 ZSD against a fresh 4 ZEC note proving 3, proved and not sent yet. */
  async function ownMint() {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({
      note,
      amountZat: 4n * ZEC,
      collateralFloorZat: 3n * ZEC,
      mintAmount: ZSD,
      recipient: alice.address,
    });
    return async () => s.receipt(await s.as(alice).minter.write.mint([proved.proof, proved.request]));
  }

  /** A wallet's mint of 1 ZSD against a 4 ZEC note proving 3: 1 ZEC of change, queued by the mint. */
  async function proveWithChange(recipient: Hex) {
    const note = createNote();
    const deposit = await api.call(
      "/v1/sandbox/deposits",
      json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
    );
    if (deposit.status !== 201) throw new Error(`sandbox deposit: ${deposit.status} ${await deposit.text()}`);
    return s.prove({ note, amountZat: 4n * ZEC, collateralFloorZat: 3n * ZEC, mintAmount: ZSD, recipient });
  }

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-leaf-inserter-"));
    deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    indexer = await startIndexer({
      rpcUrl: s.rpcUrl,
      deploymentFile,
      databaseUrl: (indexerDb = await createTestDatabase("zsd_indexer")).url,
      schema: "zsd_leaves",
    });
    proxy = await startRpcProxy(s.rpcUrl);
    storage = await openStorage("postgres");
    api = await startRelayApi(
      s,
      storage.db,
      {
        RPC_URL: proxy.url,
        INDEXER_URL: indexer.url,
        // Each mint its own transaction: several mints' change meets in the queue, not in one mintBatch.
        RELAY_MINT_BATCH_MAX: "1",
        LEAF_BATCH_WAIT_MS: String(WAIT_MS),
        LEAF_BATCH_MAX: "16",
      },
      { logger: logs.logger },
    );
    api.worker!.start();
  });

  afterAll(async () => {
    await api?.close();
    await proxy?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("inserts the change of several relayed mints in one insertion, within its limit", async () => {
    const fromBlock = (await s.publicClient.getBlockNumber()) + 1n;
    const before = (await insertions()).length;
    // Proved first, then queued together: the three mints land well within the wait.
    const proved = [];
    for (let i = 0; i < 3; i++) proved.push(await proveWithChange(bob.address));
    const mintIds: string[] = [];
    for (const p of proved) {
      const submitted = await api.call(
        "/v1/proofs/submit",
        json({
          proof: p.raw.proof,
          publicSignals: publicSignalsToArray(p.raw.publicSignals),
          owner: p.binding.owner,
          mintAmount: formatZsd(ZSD),
          recipient: bob.address,
        }),
      );
      expect(submitted.status).toBe(201);
      const { proofId } = (await submitted.json()) as { proofId: string };
      const queued = await api.call(
        "/v1/mint",
        json({ amount: formatZsd(ZSD), collateralType: "ZEC", proofId, recipient: bob.address }),
      );
      expect(queued.status).toBe(202);
      mintIds.push(((await queued.json()) as { mintId: string }).mintId);
    }
    for (const id of mintIds) expect((await settledMint(api, id)).status).toBe("confirmed");
    const confirmedAt = Date.now();
    const change = await queuedSince(fromBlock);
    expect(change).toHaveLength(3);

    await eventually(pendingCount, (n) => n === 0n, "the queue to empty", 30_000);
    const insertedAfter = Date.now() - confirmedAt;
    const added = (await insertions()).slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]!.leaves).toEqual(change);
    expect(added[0]!.consumed).toBe(3n);
    // Not long after the wait ran out (3 leaves, under LEAF_BATCH_MAX): the worker was woken by the mints.
    expect(insertedAfter).toBeLessThan(WAIT_MS + 10_000);

    // The limit it was sent with is the formula's; what it used fits the formula at the tree's real depth.
    const receipt = await s.publicClient.getTransactionReceipt({ hash: added[0]!.txHash });
    const tx = await s.publicClient.getTransaction({ hash: added[0]!.txHash });
    expect(receipt.status).toBe("success");
    expect(tx.gas).toBe(insertionGas(3));
    const depth = await registry().read.depth();
    const atDepth = insertionGas(3) - (INSERT_GAS.levels - depth) * INSERT_GAS.perLevel;
    expect(receipt.gasUsed).toBeLessThanOrEqual(atDepth);
    console.log(
      `insertion of 3: ${receipt.gasUsed} gas used, limit ${tx.gas} (${atDepth} at depth ${depth}); in the tree ${insertedAfter} ms after the last mint confirmed`,
    );
    expect(failures()).toEqual([]);
  });

  it("inserts the change of a wallet's own mint, sent without the relay, once the wait ran out", async () => {
    const fromBlock = (await s.publicClient.getBlockNumber()) + 1n;
    const before = (await insertions()).length;
    await (
      await ownMint()
    )();
    const queuedAt = Date.now();
    const [leaf] = await queuedSince(fromBlock);
    expect(leaf).toBeDefined();
    await eventually(pendingCount, (n) => n === 0n, "the wallet's change to be inserted", 30_000);
    const waited = Date.now() - queuedAt;
    const added = (await insertions()).slice(before);
    expect(added.map((a) => a.leaves)).toEqual([[leaf]]);
    // Its block's time is whole seconds: the wait counts from up to a second before the mint.
    expect(waited).toBeGreaterThanOrEqual(WAIT_MS - 1_000);
    console.log(`a wallet's own change inserted ${waited} ms after its mint`);
    expect(failures()).toEqual([]);
  });

  it("goes on when someone else inserts everything first: its insertion reverts, nothing is reported, later change goes in", async () => {
    const before = (await insertions()).length;
    let raced: Hex | undefined;
    // Just before the relay's insertion reaches the node, alice inserts the whole queue herself.
    const arm = () => {
      proxy.beforeNextSend = async (raw) => {
        if (selector(raw) !== "insertPendingLeaves") return arm();
        raced = raw;
        const pending = await readPendingLeaves(indexer.url);
        await s.receipt(
          await s.as(alice).registry.write.insertPendingLeaves([pending[0]!.sequence, pending.map((p) => p.leaf)], {
            gas: 3_000_000n,
          }),
        );
      };
    };
    arm();
    await (
      await ownMint()
    )();
    await eventually(async () => raced, Boolean, "the relay's insertion", 30_000);
    const relays = await eventually(
      () => s.publicClient.getTransactionReceipt({ hash: keccak256(raced!) }),
      (r) => r !== undefined,
      "the relay's insertion to be mined",
    );
    expect(relays.status).toBe("reverted");
    const added = (await insertions()).slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]!.txHash).not.toBe(keccak256(raced!));

    // The relay read the queue again and goes on: the next change is its to insert.
    await (
      await ownMint()
    )();
    await eventually(
      async () => (await insertions()).slice(before),
      (list) => list.length === 2,
      "the next insertion",
      30_000,
    );
    expect(await pendingCount()).toBe(0n);
    // Who inserted first is normal: no failure reported.
    expect(failures()).toEqual([]);
  });

  it("inserts the rest when an outsider inserts a leaf and a mint queues one between its read and its send", async () => {
    const before = (await insertions()).length;
    const fromBlock = (await s.publicClient.getBlockNumber()) + 1n;
    // Proved first: two mints queue their change together, the third lands while the relay's insertion is on its way.
    const mints = [await ownMint(), await ownMint(), await ownMint()];
    const firstSequence = await registry().read.queuedCount();
    let relays: Hex | undefined;
    let carried: readonly [bigint, readonly bigint[]] | undefined;
    let outsider: Hex | undefined;
    const arm = () => {
      proxy.beforeNextSend = async (raw) => {
        if (selector(raw) !== "insertPendingLeaves") return arm();
        relays = raw;
        const args = decodeFunctionData({ abi: collateralRegistryAbi, data: parseTransaction(raw).data! }).args;
        const [from, leaves] = (carried = args as unknown as readonly [bigint, readonly bigint[]]);
        // Before its insertion reaches the node: bob inserts the first leaf it carries, and a third leaf is queued.
        outsider = (await s.receipt(await s.as(bob).registry.write.insertPendingLeaves([from, [leaves[0]!]])))
          .transactionHash;
        await mints[2]!();
      };
    };
    arm();
    await mints[0]!();
    await mints[1]!();
    await eventually(async () => relays, Boolean, "the relay's insertion", 30_000);
    const receipt = await eventually(
      () => s.publicClient.getTransactionReceipt({ hash: keccak256(relays!) }),
      (r) => r !== undefined,
      "the relay's insertion to be mined",
    );
    const change = await queuedSince(fromBlock);
    expect(change).toHaveLength(3);
    // It carried the two leaves queued when it read the queue, with the limit for two.
    expect(carried).toEqual([firstSequence, change.slice(0, 2)]);
    expect((await s.publicClient.getTransaction({ hash: receipt.transactionHash })).gas).toBe(insertionGas(2));
    // Mined after both: the leaf bob inserted skipped, the other inserted, the third left queued.
    expect(receipt.status).toBe("success");
    const added = (await insertions()).slice(before);
    expect(added.map((a) => [a.txHash, a.leaves, a.consumed])).toEqual([
      [outsider, [change[0]], 1n],
      [receipt.transactionHash, [change[1]], 1n],
    ]);
    expect(await pendingCount()).toBe(1n);
    // The third goes in with the next insertion, after its wait.
    await eventually(pendingCount, (n) => n === 0n, "the third leaf to be inserted", 30_000);
    const after = (await insertions()).slice(before);
    expect(after).toHaveLength(3);
    expect(after[2]!.leaves).toEqual([change[2]]);
    expect(failures()).toEqual([]);
  });

  it("sends nothing while the indexer lists fewer leaves than the chain queued or other leaves, says so once when it lasts, and inserts once it caught up", async () => {
    // This inserter alone from here: the worker stops (and hands back the key's lease).
    await api.worker!.stop();
    const before = (await insertions()).length;
    // The indexer's answer from before the mint (once it shows the queue empty, as the chain does): an
    // indexer that has not reached the mint's block yet.
    expect(await pendingCount()).toBe(0n);
    await eventually(
      () => readPendingLeaves(indexer.url),
      (list) => list.length === 0,
      "the indexer to catch up",
    );
    const stale = await (await fetch(`${indexer.url}/pending-leaves`)).text();
    /** The answer while the indexer is wrong: a leaf the registry did not queue at the real sequence. */
    let wrong = "";
    let serving: "stale" | "wrong" | "live" = "stale";
    const view: Server = createServer((req, res) => {
      if (serving !== "live")
        return void res.writeHead(200, { "content-type": "application/json" }).end(serving === "stale" ? stale : wrong);
      void fetch(`${indexer.url}${req.url}`).then(async (answer) =>
        res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text()),
      );
    }).listen(0, "127.0.0.1");
    await new Promise((r) => view.once("listening", r));
    const counter = await countingProxy(s.rpcUrl);
    try {
      await (
        await ownMint()
      )();
      expect(await pendingCount()).toBe(1n);
      const chain = Chain.load(deploymentFile, counter.url, 10_000);
      const inserterOn = (errors: unknown[], indexerCatchUpMs?: number) =>
        new LeafInserter(chain, new TransactionSender(chain, hardhatPrivateKey(4), 30_000), {
          indexerUrl: `http://127.0.0.1:${(view.address() as AddressInfo).port}`,
          batchMax: 16,
          batchWaitMs: 0,
          insertMax: 64,
          indexerCatchUpMs,
          onError: (error) => errors.push(error),
        });
      const messages = (errors: unknown[]) => errors.map((e) => (e as Error).message);
      const errors: unknown[] = [];
      const inserter = inserterOn(errors);
      for (let i = 0; i < 3; i++) await inserter.pass();
      // Waited for, fast: no transaction, no call of the insertion, no error.
      expect(counter.methods.filter((m) => m !== "eth_call")).toEqual([]);
      expect(counter.methods).toHaveLength(3);
      expect(inserter.waiting).toBe(true);
      expect(await pendingCount()).toBe(1n);

      // Behind past its catch-up time (none here): reported on the pass that finds it so, and not again.
      const stuckErrors: unknown[] = [];
      const stuck = inserterOn(stuckErrors, 0);
      for (let i = 0; i < 4; i++) await stuck.pass();
      expect(messages(stuckErrors)).toEqual([
        expect.stringMatching(/has been behind the registry's queue .*lists 0 leaves.*holds 1 not inserted.*stuck/),
      ]);
      expect(stuck.waiting).toBe(false);

      // Listing a leaf the registry did not queue there: each pass's insertion is refused before it is sent,
      // and the third refusal in a row is reported, once.
      const sequence = (await registry().read.queuedCount()) - 1n;
      wrong = JSON.stringify({
        pending: [{ sequence: String(sequence), leaf: "12345", timestamp: "0" }],
        queuedCount: String(sequence + 1n),
      });
      serving = "wrong";
      const misledErrors: unknown[] = [];
      const misled = inserterOn(misledErrors);
      for (let i = 0; i < 2; i++) await misled.pass();
      expect(misledErrors).toEqual([]);
      for (let i = 0; i < 3; i++) await misled.pass();
      expect(messages(misledErrors)).toEqual([
        expect.stringMatching(/refused the indexer's pending leaves as not its queue 3 passes in a row/),
      ]);
      expect(counter.methods.filter((m) => m !== "eth_call")).toEqual([]);
      expect(await pendingCount()).toBe(1n);

      serving = "live";
      await eventually(
        async () => (await readPendingLeaves(indexer.url)).length,
        (n) => n === 1,
        "the indexer to list the leaf",
      );
      await inserter.pass();
      expect(counter.methods).toContain("eth_sendRawTransaction");
      await eventually(
        async () => {
          await inserter.pass();
          return pendingCount();
        },
        (n) => n === 0n,
        "the insertion",
      );
      expect((await insertions()).slice(before)).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await counter.close();
      await new Promise((r) => view.close(r));
    }
  });

  /** One wallet's own mint whose change leaf the indexer lists as pending. */
  async function oneListedLeaf() {
    await (
      await ownMint()
    )();
    await eventually(
      () => readPendingLeaves(indexer.url),
      (list) => list.length === 1,
      "the indexer to list the leaf",
    );
  }
  /** An inserter of its own on `chain`, sending from account 4, with these options over the usual ones. */
  const inserterOn = (chain: Chain, options: Partial<LeafInserterOptions>) =>
    new LeafInserter(chain, new TransactionSender(chain, hardhatPrivateKey(4), 30_000), {
      indexerUrl: indexer.url,
      batchMax: 16,
      batchWaitMs: 0,
      insertMax: 64,
      ...options,
    });

  it("tries an insertion out of gas once more on the queue read again, and says so when it runs out twice", async () => {
    const before = (await insertions()).length;
    await oneListedLeaf();
    const chain = Chain.load(deploymentFile, proxy.url, 10_000);
    const sends = proxy.sent.length;
    const limits: bigint[] = [];
    // Far below what any insertion takes, every time: nothing is sent, and the pass fails saying why.
    const starved = inserterOn(chain, {
      gasLimit: () => (limits.push(60_000n), 60_000n),
    });
    await expect(starved.pass()).rejects.toThrow(/ran out of gas within its computed limit, twice/);
    expect(limits).toEqual([60_000n, 60_000n]);
    expect(proxy.sent.length).toBe(sends);
    // Starved the first time only: the second read of the queue goes with the computed limit.
    let first = true;
    const errors: unknown[] = [];
    const inserter = inserterOn(chain, {
      gasLimit: (count) => (first ? ((first = false), 60_000n) : insertionGas(count)),
      onError: (error) => errors.push(error),
    });
    await inserter.pass();
    expect(proxy.sent.length).toBe(sends + 1);
    await eventually(
      async () => {
        await inserter.pass();
        return pendingCount();
      },
      (n) => n === 0n,
      "the insertion",
    );
    expect((await insertions()).slice(before)).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it("sends once more, on the queue read again, an insertion that ran out of gas when mined", async () => {
    const before = (await insertions()).length;
    await oneListedLeaf();
    const chain = Chain.load(deploymentFile, proxy.url, 10_000);
    const sends = proxy.sent.length;
    // The starved insertion's simulation is told it goes through (a node answering from other state
    // than the block it is mined in): it is sent, and runs out of gas when mined.
    const starved = 60_000n;
    const insertSelector = toFunctionSelector("insertPendingLeaves(uint256,uint256[])");
    let lied = 0;
    proxy.answerCall = (call) => {
      if (call.gas !== numberToHex(starved) || !(call.data ?? call.input)?.startsWith(insertSelector)) return undefined;
      lied++;
      return numberToHex(0n, { size: 32 });
    };
    let first = true;
    const errors: unknown[] = [];
    const inserter = inserterOn(chain, {
      gasLimit: (count) => (first ? ((first = false), starved) : insertionGas(count)),
      onError: (error) => errors.push(error),
    });
    try {
      await eventually(
        async () => {
          await inserter.pass();
          return pendingCount();
        },
        (n) => n === 0n,
        "the insertion",
      );
    } finally {
      proxy.answerCall = undefined;
    }
    expect(lied).toBe(1);
    // The starved one, mined and failed with all its gas used, then the one with the computed limit.
    const sent = proxy.sent.slice(sends);
    expect(sent).toHaveLength(2);
    const [outOfGas, retried] = await Promise.all(
      sent.map((tx) => s.publicClient.getTransactionReceipt({ hash: keccak256(tx.raw) })),
    );
    expect(outOfGas).toMatchObject({ status: "reverted", gasUsed: starved });
    expect(retried!.status).toBe("success");
    expect(errors.map(String)).toEqual([expect.stringMatching(/ran out of gas \(60000\); sent once more/)]);
    expect((await insertions()).slice(before)).toHaveLength(1);
  });

  it("at rest reads the pending count once a pass and nothing else: no indexer request, no transaction", async () => {
    const counter = await countingProxy(s.rpcUrl);
    const indexerRequests: string[] = [];
    const fakeIndexer: Server = createServer((req, res) => {
      indexerRequests.push(req.url ?? "");
      res.writeHead(500).end();
    }).listen(0, "127.0.0.1");
    await new Promise((r) => fakeIndexer.once("listening", r));
    try {
      const chain = Chain.load(deploymentFile, counter.url, 10_000);
      const sender = new TransactionSender(chain, hardhatPrivateKey(9), 30_000);
      const errors: unknown[] = [];
      const inserter = new LeafInserter(chain, sender, {
        indexerUrl: `http://127.0.0.1:${(fakeIndexer.address() as AddressInfo).port}`,
        batchMax: 16,
        batchWaitMs: 0,
        insertMax: 64,
        onError: (error) => errors.push(error),
      });
      expect(await pendingCount()).toBe(0n);
      for (let i = 0; i < 20; i++) await inserter.pass();
      // Its cost here, once warm (the counting proxy runs in this process too: an upper bound).
      const cpu = process.cpuUsage();
      for (let i = 0; i < 50; i++) await inserter.pass();
      const used = process.cpuUsage(cpu);
      console.log(`an idle pass of the inserter: ${((used.user + used.system) / 50 / 1000).toFixed(2)} ms of CPU`);
      expect(counter.methods).toEqual(Array(70).fill("eth_call"));
      expect(indexerRequests).toEqual([]);
      expect(inserter.waiting).toBe(false);
      expect(errors).toEqual([]);
    } finally {
      await counter.close();
      await new Promise((r) => fakeIndexer.close(r));
    }
  });

  it("keeps every limit under the per-transaction cap, and refuses settings past it", () => {
    // The most LEAF_INSERT_MAX allows carried, each inserted: the queue's length beyond them costs nothing.
    expect(insertionGas(256)).toBeLessThanOrEqual(TX_GAS_CAP);
    expect(insertionGas(64)).toBe(5_145_000n);
    expect(() => loadConfig({ LEAF_INSERT_MAX: "257" })).toThrow(/LEAF_INSERT_MAX/);
    expect(() => loadConfig({ LEAF_BATCH_MAX: "0" })).toThrow(/LEAF_BATCH_MAX/);
    expect(() => loadConfig({ LEAF_BATCH_WAIT_MS: "-1" })).toThrow(/LEAF_BATCH_WAIT_MS/);
    expect(loadConfig({})).toMatchObject({ LEAF_BATCH_MAX: 16, LEAF_BATCH_WAIT_MS: 1000, LEAF_INSERT_MAX: 64 });
  });
});

/** A JSON-RPC proxy that records the method of every call it forwards. */
async function countingProxy(target: string): Promise<{ url: string; methods: string[]; close(): Promise<void> }> {
  const methods: string[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      const parsed = JSON.parse(raw) as { method: string } | { method: string }[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) methods.push(call.method);
      const answer = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: raw,
      });
      res.writeHead(200, { "content-type": "application/json" }).end(await answer.text());
    });
  }).listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
