// Hardhat 2 loads its config through CommonJS ts-node, hence `.cts` in this
// ESM package. Hardhat only compiles and serves the local chain here; tests,
// deploy and benchmarks talk to a node over JSON-RPC like every other client.
import { spawn } from "node:child_process";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { subtask, task } from "hardhat/config";
import {
  TASK_COMPILE,
  TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD,
  TASK_RUN,
  TASK_TEST,
} from "hardhat/builtin-tasks/task-names";
import type { HardhatUserConfig } from "hardhat/types";

// Asked before any task runs; a prompt would hang every non-interactive caller.
process.env.HARDHAT_DISABLE_TELEMETRY_PROMPT ??= "true";

const SOLC_VERSION = "0.8.30";

// No compiler download is possible on these machines: use the solc npm
// package's soljson.js, pinned in package.json to the pragma's version.
subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require("solc");
  return {
    compilerPath: require.resolve("solc/soljson.js"),
    isSolcJs: true,
    version: SOLC_VERSION,
    longVersion: solc.version(),
  };
});

/** Runs Node on `args` with this terminal; resolves to the exit code. */
function runNode(args: string[], cwd?: string): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { stdio: "inherit", cwd });
    child.once("error", fail);
    child.once("close", (code) => done(code ?? 1));
  });
}

// Hardhat loads scripts and mocha tests through ts-node's CommonJS hook, which
// cannot load this ESM package's TypeScript (ERR_REQUIRE_ESM). tsx can, as the
// npm scripts use it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const TSX = pathToFileURL(require.resolve("tsx")).href;

// The suite is vitest's (one Hardhat node started by test/helpers/global-setup.ts),
// so `hardhat test [files]` runs it instead of mocha, after `npm run compile`'s steps.
task(TASK_TEST).setAction(
  async (args: { testFiles: string[]; noCompile: boolean; bail: boolean; grep?: string }, hre) => {
    const root = hre.config.paths.root;
    if (!args.noCompile) {
      await hre.run(TASK_COMPILE, { quiet: true });
      const codegen = await runNode(["--import", TSX, join(root, "scripts", "codegen-abis.ts")], root);
      if (codegen !== 0) {
        process.exitCode = codegen;
        return;
      }
    }
    // --parallel is accepted and ignored: the files share one node and run in turn.
    process.exitCode = await runNode(
      [
        join(root, "node_modules", ".bin", "vitest"),
        "run",
        ...args.testFiles.map((file) => relative(root, resolve(file))),
        ...(args.bail ? ["--bail=1"] : []),
        ...(args.grep ? ["--testNamePattern", args.grep] : []),
      ],
      root,
    );
  },
);

// A TypeScript script runs under tsx, told the network as Hardhat tells its
// scripts (HARDHAT_NETWORK) and, for a JSON-RPC network, its URL (RPC_URL,
// which scripts/deploy.ts reads).
task(TASK_RUN).setAction(async (args: { script: string; noCompile: boolean }, hre, runSuper) => {
  if (!args.script.endsWith(".ts")) return runSuper(args);
  if (!args.noCompile) await hre.run(TASK_COMPILE, { quiet: true });
  process.env.HARDHAT_NETWORK = hre.network.name;
  if ("url" in hre.network.config) process.env.RPC_URL = hre.network.config.url;
  process.exitCode = await runNode(["--import", TSX, resolve(args.script)]);
});

const config: HardhatUserConfig = {
  solidity: {
    compilers: [
      { version: SOLC_VERSION, settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 10_000 } } },
    ],
    // The minter is optimised for size rather than for many runs, to stay well under the
    // 24,576-byte limit; the position manager, whose books every operation runs, for runs
    // (RatioBuckets is linked to keep it under the limit).
    overrides: {
      "contracts/StableMinter.sol": {
        version: SOLC_VERSION,
        settings: { evmVersion: "cancun", optimizer: { enabled: true, runs: 50 } },
      },
    },
  },
  paths: {
    sources: "./contracts",
    artifacts: "./build/artifacts",
    cache: "./build/cache",
  },
  networks: {
    hardhat: {
      // Another id makes a local node stand in for a public network (the deploy guide's test does).
      chainId: Number(process.env.HARDHAT_CHAIN_ID || 31337),
      // Set by the dev stack's node (scripts/lib/hardhat-node.ts, wallClock): blocks mined within one
      // second share its timestamp. Otherwise each block takes at least its parent's + 1 s, and a chain
      // that mines faster than a block a second (one per transaction besides the interval's) runs ahead
      // of wall time for good: 67 s after 30 minutes of `npm start`.
      allowBlocksWithSameTimestamp: process.env.HARDHAT_WALL_CLOCK === "true",
    },
    localhost: { url: "http://127.0.0.1:8545" },
  },
};

export default config;
