// The deployment manifest (deployments/<network>.json, written by the deploy
// script) and the chain it names: the one definition the deploy script, the
// API, the indexer, the tests and the benchmarks read.
import { readFileSync } from "node:fs";
import { type Address, type Chain, defineChain, isAddress } from "viem";

/** Hardhat's chain id: a local development chain. */
export const LOCAL_CHAIN_ID = 31337;

/** The contracts of a deployment. */
export type ContractName =
  | "StableToken"
  | "CollateralRegistry"
  | "PositionManager"
  | "StableMinter"
  | "Redemptions"
  | "ZecUsdOracle"
  | "SecondaryZecUsdOracle"
  | "PriceFeed"
  | "Groth16Verifier"
  | "Groth16BatchVerifier"
  | "GovernanceToken"
  | "StableGovernor"
  | "StableTimelock"
  | "PoseidonT3"
  | "RatioBuckets";

export interface ContractRecord {
  address: Address;
  /** The block that created it: where event readers start. */
  startBlock: number;
}

export interface DeploymentRoles {
  /** Custody's on-chain account: settles payouts (Redemptions' CUSTODY_ROLE) and submits attested deposit batches. */
  custody: Address;
  /** The attestor set: `attestorThreshold` of them sign each deposit batch (CollateralRegistry). */
  attestors: Address[];
  attestorThreshold: number;
  oracleUpdater: Address;
  /** Posts to the second, independent feed: another key, so one leak moves one feed. */
  secondaryOracleUpdater: Address;
  pauser: Address;
  /** Stops and resumes new mints (StableMinter's GUARDIAN_ROLE) when custody's reserves fall short. */
  guardian: Address;
  governanceHolder: Address;
}

/** What the deploy script writes. */
export interface Deployment {
  network: string;
  chainId: number;
  deployer: Address;
  roles: DeploymentRoles;
  /** The deploy parameters, bigints as decimal strings. */
  parameters: Record<string, string | number>;
  contracts: Record<ContractName, ContractRecord>;
}

/** The part of a manifest that a reader of the contracts `C` relies on. */
export interface DeploymentOf<C extends ContractName> {
  chainId: number;
  contracts: Record<C, ContractRecord>;
}

/**
 * Reads a manifest and checks what the caller needs: a chain id and, for each
 * of `required`, an address and a start block. Throws an error naming the file
 * and what is wrong with it.
 */
export function loadDeployment<C extends ContractName>(file: string, required: readonly C[]): DeploymentOf<C> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(
      `cannot read the deployment manifest ${file}: run the deploy script first (${(error as Error).message})`,
    );
  }
  let manifest: { chainId?: unknown; contracts?: Record<string, Partial<ContractRecord> | undefined> };
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not a deployment manifest (not JSON)`);
  }
  if (!Number.isSafeInteger(manifest?.chainId) || (manifest.chainId as number) <= 0) {
    throw new Error(`${file} is not a deployment manifest (no chainId)`);
  }
  const missing = required.filter((name) => {
    const record = manifest.contracts?.[name];
    return !record || !isAddress(record.address ?? "") || !Number.isSafeInteger(record.startBlock);
  });
  if (missing.length > 0) {
    throw new Error(`${file} is not a deployment manifest (no address and start block for ${missing.join(", ")})`);
  }
  return manifest as DeploymentOf<C>;
}

/** The viem chain of a deployment (its chain id, reached at `rpcUrl`). */
export function zsdChain(deployment: { chainId: number; network?: string }, rpcUrl: string): Chain {
  return defineChain({
    id: deployment.chainId,
    name: deployment.network ?? "zsd",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}
