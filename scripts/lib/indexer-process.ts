import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
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
}

export interface RunningIndexer {
  url: string;
  process: ChildProcess;
  logs(): string;
  stop(): Promise<void>;
}

/** Starts the Ponder app (`ponder start`) and resolves once /ready answers 200. */
export async function startIndexer(options: IndexerOptions): Promise<RunningIndexer> {
  const port = options.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PONDER_TELEMETRY_DISABLED: "true",
    DEPLOYMENT_FILE: options.deploymentFile,
    RPC_URL: options.rpcUrl,
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
 * took, in ms. Ponder follows new heads over WebSocket, so on an idle local
 * chain a block can wait for the next one: `nudge` (mine a block, say) is
 * called after each second without progress.
 */
export async function waitForBlock(
  url: string,
  block: bigint,
  options: { timeoutMs?: number; nudge?: () => Promise<unknown> } = {},
): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = performance.now();
  let lastProgress = started;
  let seen = -1n;
  for (;;) {
    const current = await indexedBlock(url);
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
