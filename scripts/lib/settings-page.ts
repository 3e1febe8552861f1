// The settings page (docs/reference/configuration.md), made from the schemas that validate the
// settings: the API's (api/src/config/config.ts) and the indexer's (indexer/config.ts) give each variable,
// its default and, through `.meta()`, its words, so that a variable added there is documented by
// running `npm run codegen:docs`. What other processes read (the dev stack, deploy, the tests and
// benchmarks, the SDKs) is validated by no schema and listed below instead; test/readme.test.ts
// finds every variable the code reads and fails when this page misses one.
import { z } from "zod";
import { configSchema } from "../../api/src/config/config.ts";
import { indexerConfigSchema } from "../../indexer/config.ts";
import { generatedHeader, markdownTable } from "./docs-pages.ts";

/**
 * What a schema's field says of itself on the page (its `.meta()`): `description` always;
 * `default` when the schema's own default is not what a reader should see (a path made absolute
 * at load, a default chosen at start-up); `readBy` when more than its process reads it.
 */
export interface SettingMeta {
  description: string;
  default?: string;
  readBy?: string;
}

/** A variable no schema validates: who reads it, its default and what it does. */
interface OtherSetting {
  names: string[];
  readBy: string;
  default: string;
  description: string;
}

const START_AND_DEPLOY: OtherSetting[] = [
  { names: ["CHAIN_PORT"], readBy: "`npm start`", default: "`8545`", description: "the Hardhat node's port" },
  { names: ["INDEXER_PORT"], readBy: "`npm start`", default: "`42069`", description: "the indexer's port" },
  { names: ["API_PORT"], readBy: "`npm start`", default: "`3000`", description: "the API's port" },
  {
    names: ["INDEXER_STALL_MS"],
    readBy: "`npm start` (watchdog)",
    default: "`30000`",
    description: "restart an indexer that has not advanced this long while the chain did",
  },
  {
    names: [
      "ZCASHD_SIM_WALLETS",
      "ZCASHD_SIM_FUNDING_WALLET",
      "ZCASHD_SIM_BLOCK_MS",
      "ZCASHD_SIM_FEE_ZAT",
      "ZCASHD_SIM_NETWORK",
    ],
    readBy: "simulated zcashd",
    default: "set by `npm start`",
    description:
      "its wallets (`user:password,…`), the one that may receive ZEC from outside (the sandbox's deposits), its " +
      "block time, the fee it charges, its network",
  },
  {
    names: ["DEPLOYER_PRIVATE_KEY"],
    readBy: "deploy",
    default: "Hardhat account on a local chain; required elsewhere",
    description: "the deploying account (keeps no role)",
  },
  {
    names: [
      "CUSTODY_ACCOUNT_ADDRESS",
      "ORACLE_UPDATER_ADDRESS",
      "SECONDARY_ORACLE_UPDATER_ADDRESS",
      "PAUSER_ADDRESS",
      "GUARDIAN_ADDRESS",
      "GOVERNANCE_HOLDER_ADDRESS",
    ],
    readBy: "deploy",
    default: "Hardhat accounts on a local chain; required elsewhere",
    description: "holders of the roles and of the governance-token supply",
  },
  {
    names: ["ATTESTOR_ADDRESSES", "ATTESTOR_THRESHOLD"],
    readBy: "deploy",
    default: "Hardhat accounts #16–18, 2 on a local chain; required elsewhere",
    description: "the attestor set (comma-separated) and how many of it sign each deposit batch",
  },
  {
    names: ["SEAL_KEY_ID", "SEAL_PUBLIC_KEY"],
    readBy: "deploy",
    default: "the public development key (key id 1) on a local chain; required elsewhere",
    description: "custody's seal key registered on Redemptions: its id and X25519 public key (0x, 32 bytes)",
  },
  {
    names: ["HARDHAT_NETWORK"],
    readBy: "deploy and scripts under `hardhat run` (set by `hardhat.config.cts`)",
    default: "set by Hardhat",
    description: "the network's name",
  },
  {
    names: ["HARDHAT_DISABLE_TELEMETRY_PROMPT"],
    readBy: "Hardhat",
    default: "set to `true` by `hardhat.config.cts` and the node helper",
    description: "no telemetry prompt",
  },
  {
    names: ["PONDER_TELEMETRY_DISABLED"],
    readBy: "Ponder (indexer)",
    default: "set to `true` by the npm scripts and `scripts/lib/indexer-process.ts`",
    description: "no telemetry",
  },
  {
    names: ["HARDHAT_NODE_LOG"],
    readBy: "node helper (`scripts/lib/hardhat-node.ts`: `npm start`, tests, benches)",
    default: "unset: the node logs nothing (its logging is turned off)",
    description: "file to write the Hardhat node's output to",
  },
  {
    names: ["HARDHAT_WALL_CLOCK"],
    readBy: "Hardhat network (`hardhat.config.cts`); set by the node helper",
    default: "`true` under `npm start`, else `false`",
    description:
      "`true`: blocks mined within one second share its timestamp, so block times follow the wall clock (governance " +
      "counts time in blocks)",
  },
  {
    names: ["HARDHAT_CHAIN_ID"],
    readBy: "Hardhat network (`hardhat.config.cts`); set by the node helper",
    default: "`31337`, a local chain",
    description:
      "the chain id the node answers: another makes it stand in for a public network (the deploy guide's test)",
  },
];

const TESTS_AND_BENCHMARKS: OtherSetting[] = [
  {
    names: ["CHROMIUM_PATH"],
    readBy: "the browser tests (`test/dashboard/`, `test/docs/`)",
    default: "`/usr/bin/chromium` (Debian's `chromium`)",
    description: "the Chromium that playwright-core drives; missing, the tests fail under CI and skip elsewhere",
  },
  {
    names: ["TEST_POSTGRES_URL"],
    readBy: "tests, benches (`testkit/src/postgres.ts`)",
    default: "`postgresql://postgres@127.0.0.1:5432/postgres`",
    description: "PostgreSQL where test databases are made",
  },
  {
    names: ["TEST_REDIS_URL"],
    readBy: "tests (`test/api/http/redis.test.ts`)",
    default: "`redis://127.0.0.1:6379`",
    description: "Redis for the shared rate-limit test",
  },
  {
    names: ["CRASH_KILLS"],
    readBy: "tests (`test/api/resilience/relay-crash.test.ts`)",
    default: "`20`",
    description: "how many times the crash test SIGKILLs the API during mixed traffic",
  },
  {
    names: ["TEST_WORKERS"],
    readBy: "tests (`test/helpers/workers.ts`)",
    default: "`2`",
    description: "test files run at once, each worker on a Hardhat node of its own",
  },
  {
    names: ["VITEST_POOL_ID"],
    readBy: "tests (`test/helpers/node-url.ts`); set by vitest",
    default: "—",
    description: "which worker a test file runs in: picks its Hardhat node",
  },
  {
    names: ["FUZZ_RUNS"],
    readBy: "`test/contracts/invariants.test.ts` (`npm run fuzz:contracts -- --runs N`)",
    default: "`14`",
    description: "random sequences the invariant suite runs",
  },
  {
    names: ["FUZZ_STEPS"],
    readBy: "`test/contracts/invariants.test.ts` (`--steps S`)",
    default: "`40`",
    description: "most steps in one sequence",
  },
  {
    names: ["FUZZ_SEED"],
    readBy: "`test/contracts/invariants.test.ts` (`--seed X`)",
    default: "fixed in `npm test`; random in `fuzz:contracts`",
    description: "fast-check's seed: a failure prints it with its path",
  },
  {
    names: ["FUZZ_PATH"],
    readBy: "`test/contracts/invariants.test.ts` (`--path P`)",
    default: "unset",
    description: "replays a failure's shrunk path",
  },
  {
    names: ["FUZZ_REPLAY"],
    readBy: "`test/contracts/invariants.test.ts` (`--replay R`)",
    default: "unset",
    description: "replays a failure's commands (fast-check's replayPath)",
  },
  {
    names: ["ANALYZE_QUERY_RLIMIT"],
    readBy: "`scripts/analyze-contracts.ts`",
    default: "`2000000`",
    description:
      "z3's resource limit for each SMTChecker query (deterministic, unlike a wall-clock timeout); set, it also " +
      "applies to the files whose plan gives their own",
  },
  {
    names: ["ANALYZE_CONTRACT_BUDGET_MS"],
    readBy: "`scripts/analyze-contracts.ts`",
    default: "`120000`",
    description: "time for one contract file; past it the file is reported as not analyzed",
  },
  {
    names: ["ANALYZE_ENGINE"],
    readBy: "`scripts/analyze-contracts.ts`",
    default: "each file's own plan",
    description:
      "`chc` or `bmc`: run every named file with that SMTChecker engine instead of its plan (the plans pick BMC " +
      "where CHC does not finish)",
  },
  {
    names: ["ANALYZE_PARTS"],
    readBy: "`scripts/analyze-contracts.ts`",
    default: "each file's own plan",
    description:
      "groups of targets (`assert,divByZero;overflow`): run every named file once per group, not as its plan says " +
      "(BMC runs out of memory on a large file with every target)",
  },
  {
    names: ["BENCH_DURATION_S"],
    readBy: "`bench/api.ts`",
    default: "`10`",
    description: "seconds per load run",
  },
  {
    names: ["BENCH_LOG_LEVEL"],
    readBy: "`bench/api.ts`",
    default: "`info`",
    description: "the benched API's log level",
  },
  {
    names: ["BENCH_CPU_PROF"],
    readBy: "`bench/api.ts`",
    default: "unset: none",
    description:
      "a directory: the benched API and bare Express write V8 CPU profiles there, to see what a request costs",
  },
  {
    names: ["WEBHOOK_BENCH_BACKLOG"],
    readBy: "`bench/webhooks.ts`",
    default: "`1000`",
    description: "events queued while the webhook worker is stopped, then drained",
  },
  {
    names: ["WEBHOOK_BENCH_LIVE"],
    readBy: "`bench/webhooks.ts`",
    default: "`1000`",
    description: "events made at a steady rate, each timed from its change to the receiver's 2xx",
  },
  {
    names: ["WEBHOOK_BENCH_RATE"],
    readBy: "`bench/webhooks.ts`",
    default: "`50`",
    description: "events per second of the live phase",
  },
  {
    names: ["LAG_TRANSACTIONS"],
    readBy: "`bench/indexer.ts`",
    default: "`60`",
    description: "transactions timed for lag",
  },
  {
    names: ["BACKFILL_EVENTS"],
    readBy: "`bench/indexer.ts`",
    default: "`12000`",
    description: "events backfilled",
  },
  {
    names: ["RELAY_MINTS"],
    readBy: "`bench/relay.ts`",
    default: "`48`",
    description: "mints queued in each round (one a transaction, then in batches of up to 16)",
  },
];

const SDKS: OtherSetting[] = [
  {
    names: ["ZSD_API_KEY"],
    readBy: "`zsd`; the examples",
    default: "unset",
    description:
      "the API key: `sk_test_…` calls the sandbox (this machine's unless `ZSD_BASE_URL` says), `sk_live_…` production",
  },
  {
    names: ["ZSD_BASE_URL"],
    readBy: "`zsd` (`--base-url` wins); the examples",
    default: "`http://127.0.0.1:3000` for a `sk_test_` key",
    description: "the API's address",
  },
  {
    names: ["ZSD_PRIVATE_KEY"],
    readBy: "`zsd`; the examples",
    default: "unset",
    description: "the 0x… private key that signs (a redemption, a position action, a vote)",
  },
  {
    names: ["ZSD_NOTE"],
    readBy: "`zsd` (`--note` wins)",
    default: "unset",
    description: "the note a command spends, out of the shell's history",
  },
  {
    names: ["ZSD_PROGRESS"],
    readBy: "`zsd`",
    default: "unset",
    description: "`1`: progress lines on stderr even with `--json` (as the Python SDK asks)",
  },
  {
    names: ["ZSD_RPC_URL"],
    readBy: "`zsd governance` (`--rpc-url` wins)",
    default: "unset",
    description: "a JSON-RPC node, for the governance calls the relay does not send",
  },
  {
    names: ["ZSD_MIN_ANONYMITY"],
    readBy: "the SDKs and `zsd` (JS `minAnonymity`, Python `min_anonymity` win)",
    default: "`20`",
    description:
      "a mint warns (its `onWarning`) when fewer deposits than this could back its floor " +
      "([What the chain shows](../concepts/chain.md))",
  },
  {
    names: ["ZSD_WALLET_INDEX"],
    readBy: "`examples/python/mint_and_redeem.py`",
    default: "`5`",
    description: "which Hardhat development account is the example's wallet (the mint's recipient, who redeems)",
  },
  {
    names: ["ZSD_NODE", "ZSD_CLI"],
    readBy: "the Python SDK",
    default: "`node`; `sdk/js/bin/zsd.js`",
    description: "the Node.js and the CLI it proves with",
  },
];

type Shape = Record<string, z.ZodType>;

/** A field's words, or an error naming it: a setting without a description fails the generation. */
function metaOf(schema: z.ZodType, name: string, where: string): SettingMeta {
  const meta = z.globalRegistry.get(schema) as Partial<SettingMeta> | undefined;
  if (!meta?.description) throw new Error(`${name} in ${where} has no .meta({ description })`);
  return meta as SettingMeta;
}

/** The default a schema gives an unset variable, as the page shows it. */
function defaultOf(schema: z.ZodType): string {
  const parsed = schema.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return "unset";
  return `\`${String(parsed.data)}\``;
}

interface Row {
  names: string[];
  readBy: string;
  default: string;
  description: string;
}

function schemaRows(): Row[] {
  const api = configSchema.shape as Shape;
  const indexer = indexerConfigSchema.shape as Shape;
  const rows: Row[] = [];
  for (const [name, schema] of Object.entries(api)) {
    const meta = metaOf(schema, name, "api/src/config/config.ts");
    const fallback = meta.default ?? defaultOf(schema);
    // A variable both read: one row, in the API's words, with each default when they differ.
    const other = indexer[name];
    const otherDefault = other ? (metaOf(other, name, "indexer/config.ts").default ?? defaultOf(other)) : fallback;
    rows.push({
      names: [name],
      readBy: meta.readBy ?? (other ? "API; indexer" : "API"),
      default: otherDefault === fallback ? fallback : `API ${fallback}; indexer ${otherDefault}`,
      description: meta.description,
    });
  }
  for (const [name, schema] of Object.entries(indexer)) {
    if (name in api) continue;
    const meta = metaOf(schema, name, "indexer/config.ts");
    rows.push({
      names: [name],
      readBy: meta.readBy ?? "indexer",
      default: meta.default ?? defaultOf(schema),
      description: meta.description,
    });
  }
  return rows;
}

const table = (rows: Row[]) =>
  markdownTable(
    ["variable", "read by", "default", "what"],
    rows.map((r) => [r.names.map((n) => `\`${n}\``).join(", "), r.readBy, r.default, r.description]),
  );

/** The page's Markdown, before Prettier lays out its tables. */
export function settingsPage(): string {
  return [
    generatedHeader(
      "scripts/codegen-docs.ts",
      "api/src/config/config.ts, indexer/config.ts and scripts/lib/settings-page.ts",
    ),
    "# Settings",
    "",
    "Every environment variable any process of this repository reads. An empty value means unset (so a copied " +
      "`.env.example` loads); the API (`api/src/config/config.ts`) and the indexer (`indexer/config.ts`) validate theirs " +
      "at start and name every bad variable. `api/.env.example` explains the API's in detail, `.env.example` the " +
      "deploy script's. This page is made from those two schemas by `npm run codegen:docs`, and " +
      "`test/readme.test.ts` fails when a variable the code reads is missing here or the page is not the one the " +
      "schemas make.",
    "",
    "## The relay API and the indexer",
    "",
    table(schemaRows()),
    "",
    "## The dev stack, deploy and Hardhat",
    "",
    table(START_AND_DEPLOY),
    "",
    "## Tests and benchmarks",
    "",
    table(TESTS_AND_BENCHMARKS),
    "",
    "## The SDKs and the CLI",
    "",
    table(SDKS),
    "",
  ].join("\n");
}
