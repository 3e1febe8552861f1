// `npm start`: the whole stack on one machine with embedded defaults: a local
// Hardhat chain, the contracts deployed through the deploy script, the Ponder
// indexer on embedded PGlite (watched: restarted when it stops following the
// chain, re-synced when its data no longer matches it; its log in
// build/dev/indexer.log) and the relay API.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  LOCAL_ATTESTORS,
  LOCAL_KEEPER_PAYOUT_ADDRESS,
  LOCAL_ROLES,
  hardhatAccount,
  hardhatPrivateKey,
} from "./lib/accounts.ts";
import { startZcashProcesses } from "./lib/zcash-processes.ts";
import { SANDBOX_PAYOUT_RETRIES } from "../api/src/sandbox/refused-address.ts";
import { BlockClock } from "./lib/block-clock.ts";
import { startHardhatNode } from "./lib/hardhat-node.ts";
import { type IndexerOptions, startIndexer, wipeIndexerData } from "./lib/indexer-process.ts";
import { supplyMatches, watchIndexer } from "./lib/indexer-watchdog.ts";
import { DEPLOYMENTS_DIR, ROOT } from "./lib/paths.ts";
import { deploy, resolveAccounts } from "./deploy.ts";
import { openDatabase, provisionDevAccount } from "@zsd/api";
import { LOCAL_CHAIN_ID } from "@zsd/sdk/deployment";

const port = Number(process.env.CHAIN_PORT ?? 8545);
const node = await startHardhatNode(port, { wallClock: true });
console.log(`chain:    ${node.rpcUrl} (chain id ${LOCAL_CHAIN_ID}, Hardhat development accounts)`);

const { deployer, roles } = resolveAccounts({}, true);
const deployment = await deploy({ network: "localhost", rpcUrl: node.rpcUrl, deployer, roles });
console.log("deployed: deployments/localhost.json");
for (const [name, record] of Object.entries(deployment.contracts))
  console.log(`  ${name.padEnd(20)} ${record.address}`);
console.log(`custody:  ${roles.custody} (Hardhat account #${LOCAL_ROLES.custody})`);
console.log(`relayer:  ${hardhatAccount(LOCAL_ROLES.relayer).address} (Hardhat account #${LOCAL_ROLES.relayer})`);
// A block per transaction (automine), a block a second while the chain is in
// use (governance counts blocks), a heartbeat at rest (scripts/lib/block-clock.ts).
const clock = new BlockClock({
  rpcUrl: node.rpcUrl,
  busyBlockMs: 1_000,
  busyForMs: 60_000,
  heartbeatMs: 60_000,
  checkMs: 2_000,
  onError: (error) => console.log(`chain:    block clock: ${(error as Error).message}`),
});
clock.start();

const indexerLog = join(ROOT, "build", "dev", "indexer.log");
mkdirSync(join(ROOT, "build", "dev"), { recursive: true });
rmSync(indexerLog, { force: true });
const indexerOptions: IndexerOptions = {
  rpcUrl: node.rpcUrl,
  deploymentFile: join(DEPLOYMENTS_DIR, "localhost.json"),
  pgliteDirectory: join(ROOT, "build", "dev", "pglite"),
  databaseUrl: process.env.DATABASE_URL,
  schema: "zsd_dev",
  port: Number(process.env.INDEXER_PORT ?? 42069),
  logFile: indexerLog,
  env: {
    // At rest it asks the chain for new heads once a second, not every 100 ms (indexer/resting-transport.ts).
    RPC_IDLE_POLL_MS: process.env.RPC_IDLE_POLL_MS ?? "1000",
    // Ponder's event-loop delay metric sampled every 20 ms, not every millisecond (the file says why).
    NODE_OPTIONS: [
      process.env.NODE_OPTIONS,
      `--import=${pathToFileURL(join(ROOT, "indexer", "coarse-event-loop-delay.mjs")).href}`,
    ]
      .filter(Boolean)
      .join(" "),
  },
};
const watchdog = await watchIndexer({
  rpcUrl: node.rpcUrl,
  // The first start is fresh too: a new chain reuses chain id and addresses,
  // and the indexer must never serve the data of a previous run.
  async start(fresh) {
    if (fresh) await wipeIndexerData(indexerOptions);
    return startIndexer(indexerOptions);
  },
  verify: (indexer) => supplyMatches(indexer.url, node.rpcUrl, deployment.contracts.StableToken!.address),
  intervalMs: 5_000,
  stallMs: Number(process.env.INDEXER_STALL_MS ?? 30_000),
  log(line) {
    console.log(`indexer:  ${line}`);
    appendFileSync(indexerLog, `${JSON.stringify({ level: 40, time: Date.now(), msg: `watchdog: ${line}` })}\n`);
  },
});
const indexerUrl = watchdog.indexer.url;
console.log(`indexer:  ${indexerUrl} (try ${indexerUrl}/supply, ${indexerUrl}/collateral; log ${indexerLog})`);
// The relay API (sandbox) with a fresh key.
const apiData = join(ROOT, "build", "dev", "api");
rmSync(apiData, { recursive: true, force: true });
// With DATABASE_URL the API runs on PostgreSQL: its key and sign-in are made there, where it will look.
const db = await openDatabase({ url: process.env.DATABASE_URL, directory: apiData });
// One account for the key and the dashboard: what the key makes shows to whoever signs in.
const dev = await provisionDevAccount(db);
const { secret } = dev;
await db.close();
// The Zcash side: the simulated node, custody's wallet on it and the three attestors (2 of 3 sign
// each deposit batch), each its own process with its own key and its own wallet.
const zcash = await startZcashProcesses({
  deploymentFile: join(DEPLOYMENTS_DIR, "localhost.json"),
  rpcUrl: node.rpcUrl,
  attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
});
console.log(`zcash:    simulated zcashd ${zcash.env.ZCASHD_RPC_URL}; custody ${zcash.custodyAddress}`);
console.log(`attestors: ${zcash.attestorUrls.join(", ")} (2 of 3 sign each deposit batch)`);
const apiPort = Number(process.env.API_PORT ?? 3000);
const api = spawn(process.execPath, ["--import", "tsx", "api/src/index.ts"], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(apiPort),
    PGLITE_DIRECTORY: apiData,
    INDEXER_URL: indexerUrl,
    RPC_URL: node.rpcUrl,
    DEPLOYMENT_FILE: join(DEPLOYMENTS_DIR, "localhost.json"),
    ...zcash.env,
    // Hardhat development keys: custody's on-chain account and the relayer.
    CUSTODY_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.custody),
    RELAYER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.relayer),
    // The guardian: stops new mints when custody's reserves fall short of the chain's count (GET /v1/reserves).
    GUARDIAN_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.guardian),
    // The two oracle updaters, one per feed: the sandbox's price feeder keeps ZEC/USD fresh on both
    // (POST /v1/sandbox/price sets both).
    ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.oracleUpdater),
    SECONDARY_ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.secondaryOracleUpdater),
    KEEPER_PAYOUT_ADDRESS: LOCAL_KEEPER_PAYOUT_ADDRESS,
    // A payment the simulated node refuses (its failing-payout address) is failed and held within seconds.
    PAYOUT_MAX_ATTEMPTS: process.env.PAYOUT_MAX_ATTEMPTS ?? SANDBOX_PAYOUT_RETRIES.PAYOUT_MAX_ATTEMPTS,
    PAYOUT_RETRY_MS: process.env.PAYOUT_RETRY_MS ?? SANDBOX_PAYOUT_RETRIES.PAYOUT_RETRY_MS,
    RELAY_WORKER_ID: "dev",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  },
  stdio: ["ignore", "inherit", "inherit"],
});
for (let i = 0; i < 100; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${apiPort}/v1/health`)).ok) break;
  } catch {
    await new Promise((r) => setTimeout(r, 200));
  }
}
console.log(`api:      http://127.0.0.1:${apiPort}/v1 (its reference http://127.0.0.1:${apiPort}/docs)`);
// The guides are served once built; until then the line says how, rather than leaving a 404 to find.
console.log(
  existsSync(join(process.env.DOCS_SITE_DIRECTORY || join(ROOT, "docs", ".vitepress", "dist"), "index.html"))
    ? `docs:     http://127.0.0.1:${apiPort}/docs/site/ (guides, concepts, reference)`
    : `docs:     \`npm run docs\` builds the guides, then served at http://127.0.0.1:${apiPort}/docs/site/ (Markdown under docs/ meanwhile)`,
);
console.log(`key:      ${secret} (sandbox, account ${dev.accountId})`);
console.log(
  `sign in:  http://127.0.0.1:${apiPort}/dashboard/signin as ${dev.email}, password ${dev.password} ` +
    "(this run's; the same account as the key)",
);
// Without SMTP_URL the API keeps the mail it sends (verification, reset links) for this page.
if (!process.env.SMTP_URL)
  console.log(`mail:     http://127.0.0.1:${apiPort}/dashboard/mail (the dashboard's mail, captured by this stack)`);
console.log(`try:      curl -H "Authorization: Bearer ${secret}" http://127.0.0.1:${apiPort}/v1/collateral`);
console.log("Ctrl-C stops everything.");

const stop = async () => {
  api.kill("SIGTERM");
  await zcash.stop();
  clock.stop();
  await watchdog.stop();
  await node.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
