// `npm start`: the whole stack on one machine with embedded defaults: a local
// Hardhat chain, the contracts deployed through the deploy script, and the
// Ponder indexer on embedded PGlite. The relay API joins it when it lands.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_ROLES, hardhatAccount, hardhatPrivateKey } from "./lib/accounts.ts";
import { startHardhatNode } from "./lib/hardhat-node.ts";
import { startIndexer } from "./lib/indexer-process.ts";
import { DEPLOYMENTS_DIR, ROOT } from "./lib/paths.ts";
import { deploy, resolveAccounts } from "./deploy.ts";
import { openDatabase } from "../api/src/db/index.ts";
import { KeyService } from "../api/src/resources/keys/service.ts";

const port = Number(process.env.CHAIN_PORT ?? 8545);
const node = await startHardhatNode(port);
console.log(`chain:    ${node.rpcUrl} (chain id 31337, Hardhat development accounts)`);

const { deployer, roles } = resolveAccounts({}, true);
const deployment = await deploy({ network: "localhost", rpcUrl: node.rpcUrl, deployer, roles });
console.log("deployed: deployments/localhost.json");
for (const [name, record] of Object.entries(deployment.contracts))
  console.log(`  ${name.padEnd(20)} ${record.address}`);
console.log(`attestor: ${roles.attestor} (Hardhat account #${LOCAL_ROLES.attestor})`);
console.log(`relayer:  ${hardhatAccount(LOCAL_ROLES.relayer).address} (Hardhat account #${LOCAL_ROLES.relayer})`);
// A block a second, as on a real chain, besides one per transaction: the
// indexer follows new heads, and an idle chain would leave the newest block waiting.
await fetch(node.rpcUrl, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_setIntervalMining", params: [1000] }),
});

// A fresh chain reuses chain id and addresses: never let the indexer see the
// data of a previous run.
const pgliteDirectory = join(ROOT, "build", "dev", "pglite");
rmSync(pgliteDirectory, { recursive: true, force: true });
const indexer = await startIndexer({
  rpcUrl: node.rpcUrl,
  deploymentFile: join(DEPLOYMENTS_DIR, "localhost.json"),
  pgliteDirectory,
  databaseUrl: process.env.DATABASE_URL,
  schema: "zsd_dev",
  port: Number(process.env.INDEXER_PORT ?? 42069),
});
console.log(`indexer:  ${indexer.url} (try ${indexer.url}/supply, ${indexer.url}/collateral)`);
// The relay API (sandbox) with a fresh key.
const apiData = join(ROOT, "build", "dev", "api");
rmSync(apiData, { recursive: true, force: true });
const db = await openDatabase({ directory: apiData });
const keys = new KeyService(db);
const { secret } = await keys.create((await keys.createAccount("local developer")).id, "sandbox", "npm start");
await db.close();
const apiPort = Number(process.env.API_PORT ?? 3000);
const api = spawn(process.execPath, ["--import", "tsx", "api/src/index.ts"], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(apiPort),
    PGLITE_DIRECTORY: apiData,
    INDEXER_URL: indexer.url,
    RPC_URL: node.rpcUrl,
    DEPLOYMENT_FILE: join(DEPLOYMENTS_DIR, "localhost.json"),
    // Hardhat development keys: the attestor (local custody) and the relayer.
    ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.attestor),
    RELAYER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.relayer),
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
console.log(`api:      http://127.0.0.1:${apiPort}/v1 (docs http://127.0.0.1:${apiPort}/docs)`);
console.log(`key:      ${secret} (sandbox)`);
console.log(`try:      curl -H "Authorization: Bearer ${secret}" http://127.0.0.1:${apiPort}/v1/collateral`);
console.log("Ctrl-C stops everything.");

const stop = async () => {
  api.kill("SIGTERM");
  await indexer.stop();
  await node.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
