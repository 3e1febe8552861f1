import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { freePort } from "./hardhat-node.ts";
import { ROOT } from "./paths.ts";

export interface IndexerOptions {
  rpcUrl: string;
  deploymentFile: string;
  /** PostgreSQL when set, else embedded PGlite in `pgliteDirectory`. */
  databaseUrl?: string;
  pgliteDirectory?: string;
  /** Ponder's database schema for this instance's tables. */
  schema: string;
  port?: number;
  /** Appends Ponder's output (JSON lines) here too, so that a stall can be read afterwards. */
  logFile?: string;
  /** More environment for ponder.config.ts (RPC_WS_URL, say). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningIndexer {
  url: string;
  process: ChildProcess;
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Deletes what the indexer derived, so that it syncs again from the start
 * blocks: its PostgreSQL schema, or the PGlite directory.
 */
export async function wipeIndexerData(options: Pick<IndexerOptions, "databaseUrl" | "pgliteDirectory" | "schema">) {
  if (!options.databaseUrl) {
    if (options.pgliteDirectory) rmSync(options.pgliteDirectory, { recursive: true, force: true });
    return;
  }
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${options.schema.replaceAll('"', '""')}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Starts the Ponder app (`ponder start`) and resolves once /ready answers 200. */
export async function startIndexer(options: IndexerOptions): Promise<RunningIndexer> {
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PONDER_TELEMETRY_DISABLED: "true",
    DEPLOYMENT_FILE: options.deploymentFile,
    RPC_URL: options.rpcUrl,
    ...options.env,
  };
  delete env.DATABASE_URL;
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  if (options.pgliteDirectory) env.PGLITE_DIRECTORY = options.pgliteDirectory;

  const child = spawn(
    join(ROOT, "node_modules", ".bin", "ponder"),
    ["--log-format", "json", "start", "--schema", options.schema, "--port", String(port), "--hostname", "127.0.0.1"],
    { cwd: join(ROOT, "indexer"), env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  if (options.logFile) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    const file = createWriteStream(options.logFile, { flags: "a" });
    child.stdout?.pipe(file, { end: false });
    child.stderr?.pipe(file, { end: false });
    child.once("close", () => file.end());
  }

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ponder exited (${child.exitCode}):\n${output.slice(-4000)}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`ponder not ready within 120 s:\n${output.slice(-4000)}`);
    }
    try {
      if ((await fetch(`${url}/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    process: child,
    logs: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

/** The newest block the indexer has processed. */
export async function indexedBlock(url: string): Promise<bigint> {
  const status = (await (await fetch(`${url}/status`)).json()) as Record<string, { block: { number: number } }>;
  const chain = Object.values(status)[0];
  return BigInt(chain?.block.number ?? 0);
}

/**
 * Waits until the indexer has processed `block`; resolves with the time it
 * took, in ms. `nudge` (mine a block, say) is called after each second without
 * progress, for an indexer that follows new heads over a WebSocket (RPC_WS_URL):
 * on an idle chain its newest block can wait for the next one. `url` may be a
 * function, read at each try, for an indexer a watchdog may replace meanwhile.
 */
export async function waitForBlock(
  url: string | (() => string),
  block: bigint,
  options: { timeoutMs?: number; nudge?: () => Promise<unknown> } = {},
): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = performance.now();
  let lastProgress = started;
  let seen = -1n;
  for (;;) {
    let current: bigint;
    try {
      current = await indexedBlock(typeof url === "string" ? url : url());
    } catch (error) {
      // Not answering for a moment (restarted by a watchdog, or a dropped connection on a loaded
      // machine): no progress, and the timeout still holds.
      if (performance.now() - started > timeoutMs) throw error;
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    if (current >= block) return performance.now() - started;
    const now = performance.now();
    if (current !== seen) {
      seen = current;
      lastProgress = now;
    } else if (options.nudge && now - lastProgress > 1_000) {
      await options.nudge();
      lastProgress = now;
    }
    if (now - started > timeoutMs)
      throw new Error(`indexer did not reach block ${block} in ${timeoutMs} ms (at ${current})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
