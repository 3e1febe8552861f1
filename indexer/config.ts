import { fileURLToPath } from "node:url";
import { z } from "zod";

const positiveInt = z.coerce.number().int().positive();

/** Every setting of the indexer (read by ponder.config.ts), from environment variables. */
export const indexerConfigSchema = z.object({
  DEPLOYMENT_FILE: z.string().optional().meta({
    description: "the deploy script's manifest (addresses, start blocks, chain id)",
    default: "`deployments/<DEPLOYMENT_NETWORK>.json`",
  }),
  DEPLOYMENT_NETWORK: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "a network name such as localhost")
    .default("localhost")
    .meta({ description: "picks `deployments/<name>.json` when `DEPLOYMENT_FILE` is unset" }),
  RPC_URL: z
    .url({ protocol: /^https?$/ })
    .default("http://127.0.0.1:8545")
    .meta({ description: "the chain's JSON-RPC (http or https)" }),
  RPC_WS_URL: z
    .url({ protocol: /^wss?$/ })
    .optional()
    .meta({
      description: "follow new heads over this WebSocket (not with Hardhat 2, which drops subscriptions)",
      default: "unset: polls over HTTP",
    }),
  RPC_BACKENDS: z.coerce.number().int().min(1).max(64).optional().meta({
    description: "URL paths of `RPC_URL` the backfill spreads over (1–64)",
    default: "8 on a local chain (31337), else 1",
  }),
  POLLING_INTERVAL_MS: positiveInt.default(100).meta({ description: "how often it polls for new heads" }),
  /**
   * At rest (no new head for 3 s), ask the node for its head only this often and answer the polls
   * between with the last one (indexer/resting-transport.ts); unset: every poll asks the node.
   */
  RPC_IDLE_POLL_MS: positiveInt.max(60_000).optional().meta({
    description:
      "at rest (no new head for 3 s) ask the node for its head this often and answer the polls between with the last one; the first block after a quiet spell is seen up to this late",
    default: "unset (`1000` under `npm start`)",
  }),
  RPC_MAX_REQUESTS_PER_SECOND: positiveInt.default(1000).meta({ description: "Ponder's request rate limit per URL" }),
  DATABASE_URL: z.string().startsWith("postgres").optional().meta({
    description: "PostgreSQL (`postgres…`) instead of embedded PGlite",
    default: "unset: PGlite",
  }),
  PGLITE_DIRECTORY: z
    .string()
    .default(fileURLToPath(new URL("./.ponder/pglite", import.meta.url)))
    .meta({
      description: "PGlite's directory when `DATABASE_URL` is unset",
      default: "`indexer/.ponder/pglite`",
    }),
});

export type IndexerConfig = z.infer<typeof indexerConfigSchema> & { DEPLOYMENT_FILE: string };

export class IndexerConfigError extends Error {}

/** Validates the environment; an empty variable means unset, and the error names every bad variable. */
export function loadIndexerConfig(env: NodeJS.ProcessEnv = process.env): IndexerConfig {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const result = indexerConfigSchema.safeParse(set);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new IndexerConfigError(`invalid indexer configuration:\n${problems.join("\n")}`);
  }
  const deploymentFile =
    result.data.DEPLOYMENT_FILE ??
    fileURLToPath(new URL(`../deployments/${result.data.DEPLOYMENT_NETWORK}.json`, import.meta.url));
  return { ...result.data, DEPLOYMENT_FILE: deploymentFile };
}
