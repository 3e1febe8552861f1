// The simulated zcashd as a process of its own, as a real node would be: the
// sandbox's custody and each attestor reach it over HTTP with their own RPC
// credentials. It prints one line with its URL once it listens (a parent
// process waits for that line), and keeps its ledger in memory only.
//
//   PORT                       default 18232 (zcashd's testnet RPC port); 0 picks a free one
//   ZCASHD_SIM_WALLETS         user:password,user:password,… (one wallet per RPC user)
//   ZCASHD_SIM_FUNDING_WALLET  the user that may call zsd_receive (ZEC arriving from outside)
//   ZCASHD_SIM_BLOCK_MS        a block every this many ms (default 2000; 0: only on generate)
//   ZCASHD_SIM_FEE_ZAT         z_sendmany's fee (default 10000, ZIP 317's for a plain payment)
//   ZCASHD_SIM_NETWORK         testnet (default) or mainnet: which addresses it makes and pays
import { startSimulatedZcashd, type WalletConfig } from "./server.ts";

function fail(message: string): never {
  process.stderr.write(`zcashd-sim: ${message}\n`);
  process.exit(2);
}

function integer(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) fail(`${name} must be a non-negative integer, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

const walletsEnv = process.env.ZCASHD_SIM_WALLETS ?? "";
if (!walletsEnv) fail("set ZCASHD_SIM_WALLETS=user:password[,user:password…]");
const funding = process.env.ZCASHD_SIM_FUNDING_WALLET;
const wallets: WalletConfig[] = walletsEnv.split(",").map((entry) => {
  const colon = entry.indexOf(":");
  if (colon <= 0 || colon === entry.length - 1) fail(`a wallet is user:password, not ${JSON.stringify(entry)}`);
  const user = entry.slice(0, colon);
  return { user, password: entry.slice(colon + 1), funding: user === funding };
});
if (funding && !wallets.some((w) => w.funding)) fail(`ZCASHD_SIM_FUNDING_WALLET names no wallet: ${funding}`);
const network = process.env.ZCASHD_SIM_NETWORK ?? "testnet";
if (network !== "testnet" && network !== "mainnet") fail("ZCASHD_SIM_NETWORK is testnet or mainnet");

const blockIntervalMs = integer("ZCASHD_SIM_BLOCK_MS", 2000);
const sim = await startSimulatedZcashd({
  wallets,
  network,
  blockIntervalMs,
  feeZat: BigInt(integer("ZCASHD_SIM_FEE_ZAT", 10_000)),
  port: integer("PORT", 18232),
  host: "127.0.0.1",
}).catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));

process.stdout.write(
  `zcashd-sim listening on ${sim.url} (${network}; wallets ${wallets.map((w) => w.user).join(", ")}; ` +
    `${blockIntervalMs > 0 ? `a block every ${blockIntervalMs} ms` : "blocks on generate only"})\n`,
);

for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
