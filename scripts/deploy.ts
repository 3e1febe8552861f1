// The one deploy path: tests, the dev stack and real networks all go through
// `deploy()`, which writes deployments/<network>.json.
//
//   npm run deploy -- --network localhost                 # Hardhat node at 127.0.0.1:8545
//   npm run deploy -- --network sepolia --rpc-url <url>   # with DEPLOYER_PRIVATE_KEY etc. in .env or set
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  type Abi,
  type Account,
  type Address,
  type Hex,
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  keccak256,
  toHex,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  type ContractName,
  type Deployment,
  type DeploymentRoles,
  LOCAL_CHAIN_ID,
  zsdChain,
} from "@zsd/sdk/deployment";
import { DEV_SEAL_KEY, type SealKey } from "@zsd/sdk/seal";
import { linkBytecode, readArtifact } from "./lib/artifacts.ts";
import { LOCAL_ATTESTORS, LOCAL_ROLES, hardhatAccount } from "./lib/accounts.ts";
import { DEPLOYMENTS_DIR, ROOT } from "./lib/paths.ts";

export interface DeployParameters {
  tokenName: string;
  tokenSymbol: string;
  /** ZEC/USD with 8 decimals, written to the local feed at deploy. */
  initialZecUsdPrice: bigint;
  minCollateralRatioBps: bigint;
  maxPriceAge: bigint;
  /** How far a lone feed (the other broken) may move the price from the reference, in basis points. */
  maxPriceJumpBps: bigint;
  /** How far apart the two feeds may be and agree, in basis points. */
  maxPriceDeviationBps: bigint;
  /** How long, in seconds, a last good price waits before it becomes the reference a lone feed is held to. */
  priceReferenceWindow: bigint;
  maxRootAge: bigint;
  redemptionFeeBps: bigint;
  governanceSupply: bigint;
  votingDelayBlocks: number;
  votingPeriodBlocks: number;
  proposalThreshold: bigint;
  quorumPercent: bigint;
  timelockDelaySeconds: bigint;
}

export const DEFAULT_PARAMETERS: DeployParameters = {
  tokenName: "Shielded Dollar",
  tokenSymbol: "ZSD",
  initialZecUsdPrice: 50_00000000n,
  minCollateralRatioBps: 15_000n,
  maxPriceAge: 3_600n,
  maxPriceJumpBps: 5_000n,
  maxPriceDeviationBps: 500n,
  priceReferenceWindow: 3_600n,
  maxRootAge: 86_400n,
  redemptionFeeBps: 50n,
  governanceSupply: 1_000_000n * 10n ** 18n,
  votingDelayBlocks: 1,
  votingPeriodBlocks: 20,
  proposalThreshold: 0n,
  quorumPercent: 4n,
  timelockDelaySeconds: 60n,
};

export interface DeployOptions {
  network: string;
  rpcUrl: string;
  deployer: Account;
  roles: DeploymentRoles;
  parameters?: Partial<DeployParameters>;
  /**
   * Custody's first seal key (X25519), to which withdraw addresses are sealed.
   * Defaults to the public development key on a local chain; required elsewhere.
   */
  sealKey?: SealKey;
  /** Write deployments/<network>.json (default true). */
  write?: boolean;
}

/** The manifest with the seal key custody started with (the chain has the current one). */
export type DeployedSystem = Deployment & { sealKey: SealKey };

/** The settings file `npm run deploy` reads, at the repository's root. */
const ENV_FILE = join(ROOT, ".env");

const role = (name: string): Hex => keccak256(toHex(name));
const DEFAULT_ADMIN_ROLE: Hex = `0x${"00".repeat(32)}`;

export async function deploy(options: DeployOptions): Promise<DeployedSystem> {
  const p = { ...DEFAULT_PARAMETERS, ...options.parameters };
  const transport = http(options.rpcUrl);
  const publicClient = createPublicClient({ transport });
  const chainId = await publicClient.getChainId();
  const sealKey = resolveSealKey(options.sealKey, chainId === LOCAL_CHAIN_ID);
  const chain = zsdChain({ chainId, network: options.network }, options.rpcUrl);
  const wallet = createWalletClient({ account: options.deployer, chain, transport });
  const deployer = options.deployer.address;
  const contracts = {} as Deployment["contracts"];

  async function confirm(hash: Hex) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
    return receipt;
  }

  async function create(name: ContractName, args: unknown[], libraries: Record<string, Address> = {}) {
    const artifact = readArtifact(name);
    const hash = await wallet.deployContract({
      abi: artifact.abi,
      bytecode: linkBytecode(artifact, libraries),
      args,
    });
    const receipt = await confirm(hash);
    const address = getAddress(receipt.contractAddress!);
    contracts[name] = { address, startBlock: Number(receipt.blockNumber) };
    return address;
  }

  async function call(name: ContractName, functionName: string, args: unknown[]) {
    const { abi } = readArtifact(name);
    const address = contracts[name].address;
    await confirm(await wallet.writeContract({ address, abi: abi as Abi, functionName, args }));
  }

  const { custody, attestors, attestorThreshold, oracleUpdater, pauser, guardian, governanceHolder } = options.roles;
  const poseidon = await create("PoseidonT3", []);
  // Two feeds with their own updaters (local chains; production passes market feeds to PriceFeed).
  const oracle = await create("ZecUsdOracle", [deployer, oracleUpdater, p.initialZecUsdPrice]);
  const secondaryOracle = await create("SecondaryZecUsdOracle", [
    deployer,
    options.roles.secondaryOracleUpdater,
    p.initialZecUsdPrice,
  ]);
  const priceFeed = await create("PriceFeed", [
    deployer,
    oracle,
    secondaryOracle,
    p.maxPriceAge,
    p.maxPriceJumpBps,
    p.maxPriceDeviationBps,
    p.priceReferenceWindow,
  ]);
  const token = await create("StableToken", [p.tokenName, p.tokenSymbol, deployer]);
  const registry = await create("CollateralRegistry", [deployer, attestors, attestorThreshold], {
    PoseidonT3: poseidon,
  });
  const verifier = await create("Groth16Verifier", []);
  const batchVerifier = await create("Groth16BatchVerifier", []);
  const ratioBuckets = await create("RatioBuckets", []);
  const positionManager = await create("PositionManager", [deployer, priceFeed, p.minCollateralRatioBps], {
    RatioBuckets: ratioBuckets,
  });
  const minter = await create("StableMinter", [
    deployer,
    pauser,
    guardian,
    token,
    registry,
    verifier,
    batchVerifier,
    positionManager,
    p.maxRootAge,
  ]);
  const redemptions = await create("Redemptions", [
    deployer,
    custody,
    pauser,
    token,
    registry,
    minter,
    positionManager,
    p.redemptionFeeBps,
    sealKey.keyId,
    sealKey.publicKey,
  ]);
  const governanceToken = await create("GovernanceToken", [governanceHolder, p.governanceSupply]);
  // Anyone may execute a passed, queued proposal; only the governor proposes.
  const timelock = await create("StableTimelock", [p.timelockDelaySeconds, [], [zeroAddress], deployer]);
  const governor = await create("StableGovernor", [
    governanceToken,
    timelock,
    p.votingDelayBlocks,
    p.votingPeriodBlocks,
    p.proposalThreshold,
    p.quorumPercent,
  ]);

  await call("StableToken", "grantRole", [role("MINTER_ROLE"), minter]);
  await call("StableToken", "grantRole", [role("REDEEMER_ROLE"), redemptions]);
  // Repayments, closes and liquidations burn the debt.
  await call("StableToken", "grantRole", [role("REDEEMER_ROLE"), minter]);
  await call("CollateralRegistry", "grantRole", [role("PAYOUT_ROLE"), redemptions]);
  // Spends take from the unminted notes and insert change and released notes.
  await call("CollateralRegistry", "grantRole", [role("NOTE_ROLE"), minter]);
  // A payout custody could not make can be redirected into a note.
  await call("CollateralRegistry", "grantRole", [role("NOTE_ROLE"), redemptions]);
  await call("StableMinter", "setRedemptions", [redemptions]);
  // Only this minter and its redemptions contract may change positions.
  await call("PositionManager", "setMinter", [minter]);
  await call("StableTimelock", "grantRole", [role("PROPOSER_ROLE"), governor]);
  await call("StableTimelock", "grantRole", [role("CANCELLER_ROLE"), governor]);

  // Hand every admin role to the timelock; the deployer keeps nothing.
  const governed = [
    "ZecUsdOracle",
    "SecondaryZecUsdOracle",
    "PriceFeed",
    "StableToken",
    "CollateralRegistry",
    "PositionManager",
    "StableMinter",
    "Redemptions",
  ] as const;
  for (const name of governed) {
    await call(name, "grantRole", [DEFAULT_ADMIN_ROLE, timelock]);
    await call(name, "renounceRole", [DEFAULT_ADMIN_ROLE, deployer]);
  }
  await call("StableTimelock", "renounceRole", [DEFAULT_ADMIN_ROLE, deployer]);

  const deployment: DeployedSystem = {
    network: options.network,
    chainId,
    deployer,
    roles: options.roles,
    sealKey,
    parameters: Object.fromEntries(
      Object.entries(p).map(([k, v]) => [k, typeof v === "bigint" ? v.toString() : v]),
    ) as Deployment["parameters"],
    contracts,
  };
  if (options.write !== false) {
    mkdirSync(DEPLOYMENTS_DIR, { recursive: true });
    writeFileSync(join(DEPLOYMENTS_DIR, `${options.network}.json`), JSON.stringify(deployment, null, 2) + "\n");
  }
  return deployment;
}

/**
 * The seal key to deploy with: the one given, else the development key on a
 * local chain only (its secret is public, like Hardhat's mnemonic).
 */
export function resolveSealKey(given: SealKey | undefined, local: boolean): SealKey {
  if (given) {
    if (!Number.isInteger(given.keyId) || given.keyId < 1 || given.keyId > 0xffffffff) {
      throw new Error(`seal key id ${given.keyId} is not a uint32 above 0`);
    }
    if (!/^0x[0-9a-fA-F]{64}$/.test(given.publicKey) || /^0x0{64}$/.test(given.publicKey)) {
      throw new Error(`seal public key ${given.publicKey} is not a non-zero 32-byte hex value`);
    }
    return { keyId: given.keyId, publicKey: given.publicKey };
  }
  if (!local) throw new Error("a seal key (SEAL_KEY_ID and SEAL_PUBLIC_KEY) is required outside a local chain");
  return { keyId: DEV_SEAL_KEY.keyId, publicKey: DEV_SEAL_KEY.publicKey };
}

/** Roles and deployer from the environment, or Hardhat's accounts on a local chain. */
export function resolveAccounts(env: NodeJS.ProcessEnv, local: boolean) {
  const key = env.DEPLOYER_PRIVATE_KEY as Hex | undefined;
  if (!key && !local) throw new Error("DEPLOYER_PRIVATE_KEY is required outside a local chain");
  const deployer = key ? privateKeyToAccount(key) : hardhatAccount(LOCAL_ROLES.deployer);
  const pick = (name: string, index: number): Address => {
    const value = env[name];
    if (value) return getAddress(value);
    if (!local) throw new Error(`${name} is required outside a local chain`);
    return hardhatAccount(index).address;
  };
  const attestors = env.ATTESTOR_ADDRESSES
    ? env.ATTESTOR_ADDRESSES.split(",").map((a) => getAddress(a.trim()))
    : local
      ? LOCAL_ATTESTORS.accounts.map((i) => hardhatAccount(i).address)
      : undefined;
  if (!attestors) throw new Error("ATTESTOR_ADDRESSES is required outside a local chain");
  const threshold = env.ATTESTOR_THRESHOLD ? Number(env.ATTESTOR_THRESHOLD) : local ? LOCAL_ATTESTORS.threshold : NaN;
  if (!Number.isInteger(threshold))
    throw new Error("ATTESTOR_THRESHOLD (an integer) is required outside a local chain");
  return {
    deployer,
    roles: {
      custody: pick("CUSTODY_ACCOUNT_ADDRESS", LOCAL_ROLES.custody),
      attestors,
      attestorThreshold: threshold,
      oracleUpdater: pick("ORACLE_UPDATER_ADDRESS", LOCAL_ROLES.oracleUpdater),
      secondaryOracleUpdater: pick("SECONDARY_ORACLE_UPDATER_ADDRESS", LOCAL_ROLES.secondaryOracleUpdater),
      pauser: pick("PAUSER_ADDRESS", LOCAL_ROLES.pauser),
      guardian: pick("GUARDIAN_ADDRESS", LOCAL_ROLES.guardian),
      governanceHolder: pick("GOVERNANCE_HOLDER_ADDRESS", LOCAL_ROLES.deployer),
    },
  };
}

async function main() {
  // The deployer's key and the role addresses, from the .env copied from .env.example; the environment's own
  // variables win over it.
  if (existsSync(ENV_FILE)) process.loadEnvFile(ENV_FILE);
  const { values } = parseArgs({
    options: { network: { type: "string", default: "localhost" }, "rpc-url": { type: "string" } },
  });
  const network = values.network!;
  const rpcUrl = values["rpc-url"] ?? process.env.RPC_URL ?? "http://127.0.0.1:8545";
  const chainId = await createPublicClient({ transport: http(rpcUrl) }).getChainId();
  const { deployer, roles } = resolveAccounts(process.env, chainId === LOCAL_CHAIN_ID);
  const { SEAL_KEY_ID, SEAL_PUBLIC_KEY } = process.env;
  const sealKey =
    SEAL_KEY_ID || SEAL_PUBLIC_KEY
      ? { keyId: Number(SEAL_KEY_ID), publicKey: (SEAL_PUBLIC_KEY ?? "") as Hex }
      : undefined;
  const deployment = await deploy({ network, rpcUrl, deployer, roles, sealKey });
  console.log(`deployed to ${network} (chain ${chainId}): deployments/${network}.json`);
  console.log(`  seal key ${deployment.sealKey.keyId}: ${deployment.sealKey.publicKey}`);
  for (const [name, record] of Object.entries(deployment.contracts))
    console.log(`  ${name.padEnd(20)} ${record.address}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
}
