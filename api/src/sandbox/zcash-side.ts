// The sandbox's Zcash side in one process: the simulated node, custody's wallet on it (its address
// funded with a float for payout fees) and the attestors, each with its own wallet holding
// custody's viewing key and its own signing key, each served over HTTP as a real one is. Tests
// start it beside an API; `npm start` runs the same parts as separate processes (scripts/dev.ts).
import { type Address, type Hex, createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import { ZcashdClient } from "../adapters/custody/zcashd.ts";
import { DepositAttestor } from "../attestor/attest.ts";
import { serveAttestor } from "../attestor/server.ts";
import { type SimulatedZcashd, startSimulatedZcashd } from "./zcashd-sim/server.ts";

/** What custody keeps on its address for payout fees: ZEC of the operator's own, outside the books. */
export const CUSTODY_FEE_FLOAT_ZAT = 100_000_000n;

export interface SandboxZcashOptions {
  chainId: number;
  registry: Address;
  /** The chain node each attestor reads the registry's batch turn from. */
  rpcUrl: string;
  attestorKeys: readonly Hex[];
  /** A simulated block every this many ms. */
  blockIntervalMs?: number;
  minConfirmations?: number;
  /** Custody's own ZEC at start (default CUSTODY_FEE_FLOAT_ZAT; 0: none). */
  floatZat?: bigint;
}

export interface SandboxZcash {
  simulator: SimulatedZcashd;
  custodyAddress: string;
  custodyViewingKey: string;
  attestors: ServedAttestor[];
  /** The API's settings for this Zcash side. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export interface ServedAttestor {
  url: string;
  signer: Address;
  /** Its wallet (RPC user) on the simulated node. */
  wallet: string;
  close: () => Promise<void>;
}

/**
 * Serves one attestor per key, each reading the simulated node through its own wallet (`wallets[i]`,
 * configured on the simulator), into which custody's viewing key is imported first.
 */
export async function serveAttestors(options: {
  simulator: SimulatedZcashd;
  wallets: readonly string[];
  attestorKeys: readonly Hex[];
  custodyAddress: string;
  custodyViewingKey: string;
  chainId: number;
  registry: Address;
  rpcUrl: string;
  minConfirmations: number;
}): Promise<ServedAttestor[]> {
  const chain = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 1 }) });
  const batchCount = () =>
    chain.readContract({ address: options.registry, abi: collateralRegistryAbi, functionName: "depositBatchCount" });
  const served: ServedAttestor[] = [];
  try {
    for (const [i, key] of options.attestorKeys.entries()) {
      const wallet = options.simulator.wallet(options.wallets[i]!);
      const node = new ZcashdClient(options.simulator.url, { user: wallet.user, password: wallet.password });
      await node.call("z_importviewingkey", [options.custodyViewingKey, "whenkeyisnew", 0]);
      const attestor = new DepositAttestor({
        account: privateKeyToAccount(key),
        zcashd: node,
        custodyAddress: options.custodyAddress,
        minConfirmations: options.minConfirmations,
        chainId: options.chainId,
        registry: options.registry,
        batchCount,
      });
      const server = await serveAttestor(attestor, { info: { chainId: options.chainId, registry: options.registry } });
      served.push({ url: server.url, signer: attestor.signer, wallet: wallet.user, close: server.close });
    }
    return served;
  } catch (error) {
    await Promise.all(served.map((a) => a.close()));
    throw error;
  }
}

export async function startSandboxZcash(options: SandboxZcashOptions): Promise<SandboxZcash> {
  const minConfirmations = options.minConfirmations ?? 1;
  const attestorWallets = options.attestorKeys.map((_, i) => `attestor${i + 1}`);
  const simulator = await startSimulatedZcashd({
    wallets: [{ user: "custody", funding: true }, ...attestorWallets.map((user) => ({ user }))],
    blockIntervalMs: options.blockIntervalMs ?? 100,
  });
  try {
    const custodyWallet = simulator.wallet("custody");
    const custody = new ZcashdClient(simulator.url, { user: custodyWallet.user, password: custodyWallet.password });
    const custodyAddress = await custody.call<string>("z_getnewaddress", ["sapling"]);
    const custodyViewingKey = await custody.call<string>("z_exportviewingkey", [custodyAddress]);
    const floatZat = options.floatZat ?? CUSTODY_FEE_FLOAT_ZAT;
    if (floatZat > 0n) await custody.call("zsd_receive", [custodyAddress, floatZat.toString(), null]);
    const attestors = await serveAttestors({
      simulator,
      wallets: attestorWallets,
      attestorKeys: options.attestorKeys,
      custodyAddress,
      custodyViewingKey,
      chainId: options.chainId,
      registry: options.registry,
      rpcUrl: options.rpcUrl,
      minConfirmations,
    });
    return {
      simulator,
      custodyAddress,
      custodyViewingKey,
      attestors,
      env: {
        ZCASHD_RPC_URL: simulator.url,
        ZCASHD_RPC_USER: custodyWallet.user,
        ZCASHD_RPC_PASSWORD: custodyWallet.password,
        CUSTODY_ADDRESS: custodyAddress,
        ZCASHD_MIN_CONFIRMATIONS: String(minConfirmations),
        ATTESTOR_URLS: attestors.map((a) => a.url).join(","),
        SANDBOX_FAILING_PAYOUT_ADDRESS: simulator.failingPayoutAddress,
      },
      close: async () => {
        await Promise.all(attestors.map((a) => a.close()));
        await simulator.close();
      },
    };
  } catch (error) {
    await simulator.close();
    throw error;
  }
}
