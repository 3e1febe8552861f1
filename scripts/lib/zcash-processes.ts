// The sandbox's Zcash side as separate processes, as production lays it out: the simulated node,
// then each attestor with its own key and its own wallet on that node (custody's viewing key
// imported), each its own process. Custody's wallet gets its address and a float for payout fees.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import type { Hex } from "viem";
import { ZcashdClient } from "../../api/src/adapters/custody/zcashd.ts";
import { SANDBOX_REFUSED_ADDRESS } from "../../api/src/sandbox/refused-address.ts";
import { CUSTODY_FEE_FLOAT_ZAT } from "../../api/src/sandbox/zcash-side.ts";
import { ROOT } from "./paths.ts";

export interface ZcashProcesses {
  /** The API's settings for this Zcash side. */
  env: Record<string, string>;
  custodyAddress: string;
  attestorUrls: string[];
  stop(): Promise<void>;
}

/** Spawns `script` with tsx and resolves with the first URL it prints on stdout. */
function spawnListening(
  script: string,
  env: Record<string, string>,
  name: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 60 s`)), 60_000);
    lines.on("line", (line) => {
      const url = /https?:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
      if (!url) return;
      clearTimeout(timer);
      resolve({ child, url });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it listened`));
    });
  });
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
}

export async function startZcashProcesses(options: {
  deploymentFile: string;
  rpcUrl: string;
  attestorKeys: readonly Hex[];
  blockMs?: number;
  minConfirmations?: number;
}): Promise<ZcashProcesses> {
  const minConfirmations = options.minConfirmations ?? 1;
  const wallets = ["custody", ...options.attestorKeys.map((_, i) => `attestor${i + 1}`)].map((user) => ({
    user,
    password: randomBytes(12).toString("hex"),
  }));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
  };
  try {
    const node = await spawnListening(
      "api/src/sandbox/zcashd-sim/main.ts",
      {
        PORT: "0",
        ZCASHD_SIM_WALLETS: wallets.map((w) => `${w.user}:${w.password}`).join(","),
        ZCASHD_SIM_FUNDING_WALLET: "custody",
        ZCASHD_SIM_BLOCK_MS: String(options.blockMs ?? 500),
      },
      "the simulated zcashd",
    );
    children.push(node.child);
    const [custody, ...attestorWallets] = wallets as [(typeof wallets)[0], ...typeof wallets];
    const custodyRpc = new ZcashdClient(node.url, custody);
    const custodyAddress = await custodyRpc.call<string>("z_getnewaddress", ["sapling"]);
    const viewingKey = await custodyRpc.call<string>("z_exportviewingkey", [custodyAddress]);
    await custodyRpc.call("zsd_receive", [custodyAddress, CUSTODY_FEE_FLOAT_ZAT.toString(), null]);
    const attestors = await Promise.all(
      options.attestorKeys.map(async (key, i) => {
        const wallet = attestorWallets[i]!;
        const started = await spawnListening(
          "api/src/attestor/main.ts",
          {
            ATTESTOR_PRIVATE_KEY: key,
            ZCASHD_RPC_URL: node.url,
            ZCASHD_RPC_USER: wallet.user,
            ZCASHD_RPC_PASSWORD: wallet.password,
            CUSTODY_ADDRESS: custodyAddress,
            CUSTODY_VIEWING_KEY: viewingKey,
            MIN_CONFIRMATIONS: String(minConfirmations),
            RPC_URL: options.rpcUrl,
            DEPLOYMENT_FILE: options.deploymentFile,
            PORT: "0",
          },
          `attestor ${i + 1}`,
        );
        children.push(started.child);
        return started.url;
      }),
    );
    return {
      custodyAddress,
      attestorUrls: attestors,
      env: {
        ZCASHD_RPC_URL: node.url,
        ZCASHD_RPC_USER: custody.user,
        ZCASHD_RPC_PASSWORD: custody.password,
        CUSTODY_ADDRESS: custodyAddress,
        ZCASHD_MIN_CONFIRMATIONS: String(minConfirmations),
        ATTESTOR_URLS: attestors.join(","),
        // The node started here refuses every payment to it: the dashboard names it.
        SANDBOX_FAILING_PAYOUT_ADDRESS: SANDBOX_REFUSED_ADDRESS,
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
