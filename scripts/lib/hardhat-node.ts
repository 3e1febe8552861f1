import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { ROOT } from "./paths.ts";

export interface RunningNode {
  rpcUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

async function rpcAnswers(rpcUrl: string): Promise<boolean> {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    });
    return response.ok;
  } catch {
    return false;
  }
}

export interface NodeOptions {
  /**
   * Block timestamps follow wall time: blocks mined within one second share it
   * (hardhat.config.cts, HARDHAT_WALL_CLOCK). The dev stack's; tests keep
   * Hardhat's default of a new second per block, which some rely on.
   */
  wallClock?: boolean;
  /** The chain id it answers (default 31337, a local chain): another stands in for a public network. */
  chainId?: number;
}

/** Starts `hardhat node` on 127.0.0.1 and resolves once it answers JSON-RPC. */
export async function startHardhatNode(port?: number, options: NodeOptions = {}): Promise<RunningNode> {
  const chosen = port ?? (await freePort());
  const rpcUrl = `http://127.0.0.1:${chosen}`;
  const child = spawn(
    join(ROOT, "node_modules", ".bin", "hardhat"),
    ["node", "--hostname", "127.0.0.1", "--port", String(chosen)],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
        HARDHAT_WALL_CLOCK: options.wallClock ? "true" : "false",
        HARDHAT_CHAIN_ID: String(options.chainId ?? 31337),
      },
      stdio: ["ignore", process.env.HARDHAT_NODE_LOG ? "pipe" : "ignore", "pipe"],
    },
  );
  if (process.env.HARDHAT_NODE_LOG) {
    const { createWriteStream } = await import("node:fs");
    child.stdout?.pipe(createWriteStream(process.env.HARDHAT_NODE_LOG));
  }
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!(await rpcAnswers(rpcUrl))) {
    if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}): ${stderr}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`hardhat node did not answer on ${rpcUrl} within 60 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // The node formats a line for every request and a block of them for every transaction even when
  // its output goes nowhere: a third of its CPU under the suite's mix of calls, logs and transactions.
  if (!process.env.HARDHAT_NODE_LOG) {
    await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hardhat_setLoggingEnabled", params: [false] }),
    });
  }
  return {
    rpcUrl,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
