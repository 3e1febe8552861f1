// A whole sandbox stack for tests in other languages (the Python SDK's):
// a Hardhat chain, the contracts, the indexer and the relay API with its
// worker, payouts, price feeder and webhooks, each on a free port. Prints one
// JSON line {baseUrl, apiKey, rpcUrl, indexerUrl, deploymentFile} once the API
// answers, then runs until SIGTERM / SIGINT or until stdin closes (so that a
// test runner that dies takes the stack with it).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_ATTESTORS, LOCAL_KEEPER_PAYOUT_ADDRESS, LOCAL_ROLES, hardhatPrivateKey } from "./lib/accounts.ts";
import { type ZcashProcesses, startZcashProcesses } from "./lib/zcash-processes.ts";
import { freePort, startHardhatNode } from "./lib/hardhat-node.ts";
import { type RunningIndexer, startIndexer } from "./lib/indexer-process.ts";
import { ROOT } from "./lib/paths.ts";
import { deploy, resolveAccounts } from "./deploy.ts";
import { KeyService, openDatabase } from "@zsd/api";

const dir = mkdtempSync(join(tmpdir(), "zsd-test-stack-"));
const node = await startHardhatNode();
let indexer: RunningIndexer | undefined;
let api: ChildProcess | undefined;
let zcash: ZcashProcesses | undefined;
let stopping = false;

/** A settled start's value, or its error thrown. */
function settled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  // The API drains and closes its database before the directory holding it goes.
  if (api && api.exitCode === null) {
    const exited = new Promise((resolve) => api!.once("exit", resolve));
    api.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  await zcash?.stop();
  await indexer?.stop();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.resume();

try {
  const { deployer, roles } = resolveAccounts({}, true);
  const deployment = await deploy({ network: "localhost", rpcUrl: node.rpcUrl, deployer, roles, write: false });
  const deploymentFile = join(dir, "deployment.json");
  writeFileSync(deploymentFile, JSON.stringify(deployment));
  // Blocks keep coming as on a real chain: confirmations and the indexer's head move on their own.
  await fetch(node.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_setIntervalMining", params: [500] }),
  });
  // The indexer, the API's key and the Zcash side need only the deployment: started together, the
  // stack is ready in the time of the slowest (Ponder's start), not of the three one after another.
  const apiData = join(dir, "api");
  const [indexerStarted, keyMade, zcashStarted] = await Promise.allSettled([
    startIndexer({
      rpcUrl: node.rpcUrl,
      deploymentFile,
      pgliteDirectory: join(dir, "indexer"),
      schema: "zsd_test_stack",
    }).then((running) => (indexer = running)),
    (async () => {
      const db = await openDatabase({ directory: apiData });
      try {
        const keys = new KeyService(db);
        return (await keys.create((await keys.createAccount("test stack")).id, "sandbox", "test stack")).secret;
      } finally {
        await db.close();
      }
    })(),
    startZcashProcesses({
      deploymentFile,
      rpcUrl: node.rpcUrl,
      attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
      blockMs: 200,
    }).then((running) => (zcash = running)),
  ]);
  // Each one started is stopped by stop() (it reads indexer and zcash) when another failed.
  const running = {
    indexer: settled(indexerStarted),
    secret: settled(keyMade),
    zcash: settled(zcashStarted),
  };
  const port = await freePort();
  api = spawn(process.execPath, ["--import", "tsx", "api/src/index.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      PGLITE_DIRECTORY: apiData,
      INDEXER_URL: running.indexer.url,
      INDEXER_CACHE_MS: "0",
      RPC_URL: node.rpcUrl,
      DEPLOYMENT_FILE: deploymentFile,
      ...running.zcash.env,
      CUSTODY_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.custody),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.relayer),
      GUARDIAN_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.guardian),
      ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.oracleUpdater),
      SECONDARY_ORACLE_UPDATER_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ROLES.secondaryOracleUpdater),
      KEEPER_PAYOUT_ADDRESS: LOCAL_KEEPER_PAYOUT_ADDRESS,
      RELAY_WORKER_ID: "test-stack",
      RELAY_POLL_MS: "100",
      // Tests make work on the chain too (a price, a proposal), which wakes no idle worker: keep it polling.
      RELAY_IDLE_POLL_MS: "100",
      PAYOUT_POLL_MS: "200",
      PAYOUT_CONFIRMATIONS: "1",
      WEBHOOK_POLL_MS: "100",
      // Tests poll: the sandbox's budget of 100 requests a minute is not what they test.
      RATE_LIMIT_SANDBOX: "100000",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  api.once("exit", (code) => {
    if (stopping) return;
    console.error(`test stack: the API exited (${code})`);
    void stop(1);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${baseUrl}/v1/health`)).ok) break;
    } catch {
      if (i > 300) throw new Error("the API did not answer within 60 s");
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  console.log(
    JSON.stringify({
      baseUrl,
      apiKey: running.secret,
      rpcUrl: node.rpcUrl,
      indexerUrl: running.indexer.url,
      deploymentFile,
    }),
  );
} catch (error) {
  console.error(error);
  await stop(1);
}
