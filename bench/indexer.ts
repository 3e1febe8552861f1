// Indexer lag (transaction mined → visible over HTTP) and backfill rate, on
// PGlite and on PostgreSQL. Writes bench/results/indexer.json. `npm run bench:indexer`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hex, encodeFunctionData } from "viem";
import { startHardhatNode } from "../scripts/lib/hardhat-node.ts";
import { type RunningIndexer, startIndexer, waitForBlock } from "../scripts/lib/indexer-process.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { releaseProver } from "@zsd/sdk/notes";
import { ZEC, ZSD, accounts, createSystem, createTestDatabase } from "@zsd/testkit";
import { summarize } from "./stats.ts";

const LAG_TRANSACTIONS = Number(process.env.LAG_TRANSACTIONS ?? 60);
const BACKFILL_EVENTS = Number(process.env.BACKFILL_EVENTS ?? 12_000);
const PER_BLOCK = 400;
const TARGETS = { lagP50Ms: 100, backfillPostgresEventsPerSecond: 2_000 };

const node = await startHardhatNode();
const dir = mkdtempSync(join(tmpdir(), "zsd-bench-indexer-"));
const cleanup: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
try {
  const s = await createSystem(node.rpcUrl);
  const deploymentFile = join(dir, "deployment.json");
  writeFileSync(deploymentFile, JSON.stringify(s.deployment));
  const { alice, bob } = accounts;
  await s.depositAndMint({ amountZat: 100n * ZEC, mintAmount: 1_000n * ZSD, recipient: alice.address });
  const token = s.read.token.address;
  const transferData = encodeFunctionData({ abi: s.read.token.abi, functionName: "transfer", args: [bob.address, 1n] });
  const aliceWallet = s.as(alice).wallet;
  let nonce = await s.publicClient.getTransactionCount({ address: alice.address });
  const fees = { maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, gas: 80_000n };

  async function indexer(
    database: "pglite" | "postgres",
    name: string,
    env: NodeJS.ProcessEnv = {},
  ): Promise<RunningIndexer> {
    let databaseUrl: string | undefined;
    if (database === "postgres") {
      const db = await createTestDatabase(`zsd_bench_${name}`);
      cleanup.push(db.drop);
      databaseUrl = db.url;
    }
    const running = await startIndexer({
      rpcUrl: node.rpcUrl,
      deploymentFile,
      databaseUrl,
      pgliteDirectory: join(dir, `pglite-${name}`),
      schema: "zsd_bench",
      env,
    });
    cleanup.unshift(() => running.stop());
    return running;
  }

  // The indexer polls for new heads (100 ms); a WebSocket subscription is
  // measured too, for comparison (Hardhat drops it after five minutes).
  async function lag(database: "pglite" | "postgres", transport: "polling" | "websocket" = "polling") {
    const env = transport === "websocket" ? { RPC_WS_URL: node.rpcUrl.replace(/^http/, "ws") } : {};
    const running = await indexer(database, `lag_${database}_${transport}`, env);
    await waitForBlock(running.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    const samples: number[] = [];
    for (let i = 0; i < LAG_TRANSACTIONS; i++) {
      const expected = (await s.read.token.read.balanceOf([bob.address])) + 1n;
      // With automine, the node answers eth_sendRawTransaction once the block is mined.
      await aliceWallet.sendTransaction({ to: token, data: transferData, nonce: nonce++, ...fees });
      const mined = performance.now();
      for (;;) {
        const body = (await (await fetch(`${running.url}/accounts/${bob.address}`)).json()) as { balance: string };
        if (BigInt(body.balance) >= expected) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      samples.push(performance.now() - mined);
    }
    await running.stop();
    return summarize(samples);
  }

  const lagPglite = await lag("pglite");
  console.log("lag PGlite, polling", lagPglite);
  const lagPgliteWs = await lag("pglite", "websocket");
  console.log("lag PGlite, WebSocket", lagPgliteWs);
  const lagPostgres = await lag("postgres");
  console.log("lag Postgres, polling", lagPostgres);

  // Backfill: BACKFILL_EVENTS transfers, PER_BLOCK to a block, then enough
  // empty blocks that Ponder (30 blocks to finality on chain 31337) backfills them all.
  await s.testClient.setAutomine(false);
  const firstBlock = (await s.publicClient.getBlockNumber()) + 1n;
  for (let sent = 0; sent < BACKFILL_EVENTS;) {
    const batch: Promise<Hex>[] = [];
    for (let i = 0; i < PER_BLOCK && sent < BACKFILL_EVENTS; i++, sent++) {
      batch.push(aliceWallet.sendTransaction({ to: token, data: transferData, nonce: nonce++, ...fees }));
    }
    await Promise.all(batch);
    await s.testClient.mine({ blocks: 1 });
  }
  await s.testClient.setAutomine(true);
  const lastBlock = await s.publicClient.getBlockNumber();
  const logs = await s.publicClient.getContractEvents({
    address: token,
    abi: s.read.token.abi,
    eventName: "Transfer",
    fromBlock: firstBlock,
    toBlock: lastBlock,
  });
  if (logs.length !== BACKFILL_EVENTS) throw new Error(`expected ${BACKFILL_EVENTS} transfers, found ${logs.length}`);
  await s.mineBlocks(35);
  const head = await s.publicClient.getBlockNumber();

  async function backfill(database: "pglite" | "postgres") {
    const started = performance.now();
    // startIndexer resolves at /ready: the finalized range, all the transfers, is indexed.
    const running = await indexer(database, `backfill_${database}`);
    const seconds = (performance.now() - started) / 1000;
    // The newest 30 blocks follow in realtime once a new head arrives.
    await waitForBlock(running.url, head, { nudge: () => s.mineBlocks(1) });
    // Ponder reports the duration of its backfill phase in its log.
    // Ponder's JSON log: how long it fetched from the node, how long it ran handlers.
    const entries = running
      .logs()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg?: string; duration?: number; event_count?: number });
    const total = entries.find((e) => e.msg === "Completed backfill indexing across all chains")?.duration;
    const fetching = entries.find((e) => e.msg === "Finished fetching backfill JSON-RPC data")?.duration;
    const indexing = entries
      .filter((e) => e.msg === "Indexed block range")
      .reduce((sum, e) => sum + (e.duration ?? 0), 0);
    await running.stop();
    return {
      events: BACKFILL_EVENTS,
      blocks: Number(lastBlock - firstBlock + 1n),
      wallSecondsIncludingStartup: Math.round(seconds * 10) / 10,
      eventsPerSecondWall: Math.round(BACKFILL_EVENTS / seconds),
      backfillSeconds: total ? Math.round(total) / 1000 : undefined,
      rpcFetchSeconds: fetching ? Math.round(fetching) / 1000 : undefined,
      handlerSeconds: Math.round(indexing) / 1000,
      eventsPerSecondBackfill: total ? Math.round((BACKFILL_EVENTS * 1000) / total) : undefined,
      eventsPerSecondHandlers: indexing ? Math.round((BACKFILL_EVENTS * 1000) / indexing) : undefined,
    };
  }
  const backfillPglite = await backfill("pglite");
  const backfillPostgres = await backfill("postgres");

  const results = {
    measuredAt: new Date().toISOString(),
    machine: "2 cores; timings are noisy, medians reported",
    lagMs: {
      pglite: lagPglite,
      postgres: lagPostgres,
      pgliteWebSocket: lagPgliteWs,
      transactions: LAG_TRANSACTIONS,
    },
    backfill: { pglite: backfillPglite, postgres: backfillPostgres },
    targets: TARGETS,
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "indexer.json"), JSON.stringify(results, null, 2) + "\n");
  const row = (a: string, b: string, c = "") => console.log(`${a.padEnd(44)} ${b.padEnd(40)} ${c}`);
  console.log("");
  row(
    `lag mined → HTTP, PGlite (${LAG_TRANSACTIONS} tx, ms)`,
    `p50 ${lagPglite.median}, p90 ${lagPglite.p90}`,
    `p50 <= ${TARGETS.lagP50Ms}`,
  );
  row(
    `lag mined → HTTP, Postgres (${LAG_TRANSACTIONS} tx, ms)`,
    `p50 ${lagPostgres.median}, p90 ${lagPostgres.p90}`,
    `p50 <= ${TARGETS.lagP50Ms}`,
  );
  row(
    `lag mined → HTTP, PGlite, WebSocket (ms)`,
    `p50 ${lagPgliteWs.median}, p90 ${lagPgliteWs.p90}`,
    "for comparison: not used",
  );
  for (const [name, b] of [
    ["PGlite", backfillPglite],
    ["Postgres", backfillPostgres],
  ] as const) {
    row(
      `backfill ${b.events} events, ${name} (events/s)`,
      `${b.eventsPerSecondBackfill} backfill (RPC ${b.rpcFetchSeconds} s), ${b.eventsPerSecondHandlers} handlers, ${b.eventsPerSecondWall} wall`,
      name === "Postgres" ? `>= ${TARGETS.backfillPostgresEventsPerSecond}` : "",
    );
  }
  console.log("\nwrote bench/results/indexer.json");
} finally {
  for (const step of cleanup) await step();
  await releaseProver();
  await node.stop();
}
