import { createConfig } from "ponder";
import { LOCAL_CHAIN_ID, loadDeployment } from "@zsd/sdk/deployment";
import {
  collateralRegistryAbi,
  positionManagerAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTokenAbi,
  zecUsdOracleAbi,
} from "@zsd/sdk/abis";
import { loadIndexerConfig } from "./config";
import { restingTransport } from "./resting-transport";

// Every setting from the environment, validated (indexer/config.ts).
const config = loadIndexerConfig();

// Addresses and start blocks come from the deploy script's manifest:
// DEPLOYMENT_FILE, or deployments/<DEPLOYMENT_NETWORK | localhost>.json.
const deployment = loadDeployment(config.DEPLOYMENT_FILE, [
  "StableToken",
  "CollateralRegistry",
  "PositionManager",
  "StableMinter",
  "Redemptions",
  "ZecUsdOracle",
  "StableGovernor",
]);
const at = (name: keyof typeof deployment.contracts) => {
  const { address, startBlock } = deployment.contracts[name];
  return { chain: "zsd" as const, address, startBlock };
};

// Ponder paces each RPC URL with an adaptive limiter that starts at 20
// requests/s, made for hosted providers. A local node has no such limit, so
// the backfill spreads over several URL paths of the same node (Hardhat
// answers on any path). One URL elsewhere, unless RPC_BACKENDS says otherwise.
const backends = config.RPC_BACKENDS ?? (deployment.chainId === LOCAL_CHAIN_ID ? 8 : 1);
// The resting transport is one URL: the backfill then goes through one rate-limited bucket.
const rpc = config.RPC_IDLE_POLL_MS
  ? restingTransport({ url: config.RPC_URL, idlePollMs: config.RPC_IDLE_POLL_MS })
  : backends <= 1
    ? config.RPC_URL
    : Array.from({ length: backends }, (_, i) => {
        const url = new URL(config.RPC_URL);
        url.pathname = `${url.pathname.replace(/\/$/, "")}/ponder-${i}`;
        return url.toString();
      });

export default createConfig({
  database: config.DATABASE_URL
    ? { kind: "postgres", connectionString: config.DATABASE_URL }
    : { kind: "pglite", directory: config.PGLITE_DIRECTORY },
  chains: {
    zsd: {
      id: deployment.chainId,
      rpc,
      // New heads by polling over HTTP unless RPC_WS_URL names a WebSocket.
      // Hardhat 2 drops a newHeads subscription after five minutes (it is a
      // filter nobody polls; Hardhat issue 2053) and Ponder never notices a
      // silent subscription: the dev stack's indexer stopped at block 341.
      ws: config.RPC_WS_URL,
      pollingInterval: config.POLLING_INTERVAL_MS,
      // A local node answers as fast as we ask.
      maxRequestsPerSecond: config.RPC_MAX_REQUESTS_PER_SECOND,
      // A restarted Hardhat chain reuses chain id and block numbers: never
      // serve its blocks from the RPC cache of a previous run.
      disableCache: deployment.chainId === LOCAL_CHAIN_ID,
    },
  },
  contracts: {
    StableToken: { abi: stableTokenAbi, ...at("StableToken") },
    CollateralRegistry: { abi: collateralRegistryAbi, ...at("CollateralRegistry") },
    PositionManager: { abi: positionManagerAbi, ...at("PositionManager") },
    StableMinter: { abi: stableMinterAbi, ...at("StableMinter") },
    Redemptions: { abi: redemptionsAbi, ...at("Redemptions") },
    ZecUsdOracle: { abi: zecUsdOracleAbi, ...at("ZecUsdOracle") },
    StableGovernor: { abi: stableGovernorAbi, ...at("StableGovernor") },
  },
});
