import { fileURLToPath } from "node:url";
import { z } from "zod";

const positiveInt = z.coerce.number().int().positive();

/** Every setting of the indexer (read by ponder.config.ts), from environment variables. */
export const indexerConfigSchema = z.object({
  /** The deploy script's manifest (addresses, start blocks, chain id); default deployments/<DEPLOYMENT_NETWORK>.json. */
  DEPLOYMENT_FILE: z.string().optional(),
  DEPLOYMENT_NETWORK: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "a network name such as localhost")
    .default("localhost"),
  RPC_URL: z.url({ protocol: /^https?$/ }).default("http://127.0.0.1:8545"),
  /** Follow new heads over this WebSocket instead of polling RPC_URL (not for Hardhat 2: it drops subscriptions). */
  RPC_WS_URL: z.url({ protocol: /^wss?$/ }).optional(),
  /** URL paths of RPC_URL the backfill spreads over; default 8 on a local chain (chain id 31337), else 1. */
  RPC_BACKENDS: z.coerce.number().int().min(1).max(64).optional(),
  POLLING_INTERVAL_MS: positiveInt.default(100),
  /**
   * At rest (no new head for 3 s), ask the node for its head only this often and answer the polls
   * between with the last one (indexer/resting-transport.ts); unset: every poll asks the node.
   */
  RPC_IDLE_POLL_MS: positiveInt.max(60_000).optional(),
  RPC_MAX_REQUESTS_PER_SECOND: positiveInt.default(1000),
  /** PostgreSQL when set; embedded PGlite in PGLITE_DIRECTORY otherwise. */
  DATABASE_URL: z.string().startsWith("postgres").optional(),
  PGLITE_DIRECTORY: z.string().default(fileURLToPath(new URL("./.ponder/pglite", import.meta.url))),
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
