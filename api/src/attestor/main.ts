// One attestor as its own process: its own key, its own Zcash node (holding custody's viewing
// key, imported at start when CUSTODY_VIEWING_KEY is set) and its own chain node.
//
//   ATTESTOR_PRIVATE_KEY=0x… ZCASHD_RPC_URL=… CUSTODY_ADDRESS=zs1… DEPLOYMENT_FILE=… npm run attestor --workspace @zsd/api
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import { loadDeployment } from "@zsd/sdk/deployment";
import { ZcashdClient } from "../adapters/custody/zcashd.ts";
import { DepositAttestor } from "./attest.ts";
import { serveAttestor } from "./server.ts";

const env = z
  .object({
    ATTESTOR_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key"),
    ZCASHD_RPC_URL: z.url(),
    ZCASHD_RPC_USER: z.string().default(""),
    ZCASHD_RPC_PASSWORD: z.string().default(""),
    CUSTODY_ADDRESS: z.string().min(1),
    /** Imported into this attestor's node at start (no rescan needed on a fresh simulated node). */
    CUSTODY_VIEWING_KEY: z.string().optional(),
    MIN_CONFIRMATIONS: z.coerce.number().int().positive().default(3),
    RPC_URL: z.url().default("http://127.0.0.1:8545"),
    DEPLOYMENT_FILE: z.string().min(1),
    HOST: z.string().default("127.0.0.1"),
    PORT: z.coerce.number().int().min(0).max(65535).default(0),
  })
  .safeParse(process.env);
if (!env.success) {
  console.error(
    `attestor: invalid settings: ${env.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
  );
  process.exit(1);
}
const config = env.data;
const deployment = loadDeployment(config.DEPLOYMENT_FILE, ["CollateralRegistry"]);
const registry = deployment.contracts.CollateralRegistry.address;
const client = createPublicClient({ transport: http(config.RPC_URL) });
// What it signs names the deployment file's chain id (the EIP-712 domain), and the registry's turn
// it reads from its own node: a node of another chain would have it sign for one chain against the
// state of another. Refuse to start instead.
const nodeChainId = await client.getChainId().catch((error: unknown) => {
  console.error(`attestor: its chain node at ${config.RPC_URL} does not answer: ${String(error)}`);
  process.exit(1);
});
if (nodeChainId !== deployment.chainId) {
  console.error(
    `attestor: its chain node at ${config.RPC_URL} is on chain ${nodeChainId}, ` +
      `but ${config.DEPLOYMENT_FILE} is for chain ${deployment.chainId}; refusing to start`,
  );
  process.exit(1);
}
const zcashd = new ZcashdClient(config.ZCASHD_RPC_URL, {
  user: config.ZCASHD_RPC_USER,
  password: config.ZCASHD_RPC_PASSWORD,
});
if (config.CUSTODY_VIEWING_KEY)
  await zcashd.call("z_importviewingkey", [config.CUSTODY_VIEWING_KEY, "whenkeyisnew", 0]);
const attestor = new DepositAttestor({
  account: privateKeyToAccount(config.ATTESTOR_PRIVATE_KEY as `0x${string}`),
  zcashd,
  custodyAddress: config.CUSTODY_ADDRESS,
  minConfirmations: config.MIN_CONFIRMATIONS,
  chainId: deployment.chainId,
  registry,
  batchCount: () =>
    client.readContract({ address: registry, abi: collateralRegistryAbi, functionName: "depositBatchCount" }),
});
const served = await serveAttestor(attestor, {
  host: config.HOST,
  port: config.PORT,
  info: { chainId: deployment.chainId, registry },
  onError: (error) => console.error("attestor: request failed:", error),
});
console.log(`attestor ${attestor.signer} listening on ${served.url}`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => void served.close().then(() => process.exit(0)));
}
