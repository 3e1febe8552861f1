import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Abi, Hex } from "viem";
import type { ContractName } from "@zsd/sdk/deployment";
import { ARTIFACTS_DIR } from "./paths.ts";

/** The contracts that make up a deployment, with their source folders. */
export const CONTRACTS = {
  StableToken: "contracts/StableToken.sol",
  CollateralRegistry: "contracts/CollateralRegistry.sol",
  PositionManager: "contracts/PositionManager.sol",
  StableMinter: "contracts/StableMinter.sol",
  Redemptions: "contracts/Redemptions.sol",
  ZecUsdOracle: "contracts/ZecUsdOracle.sol",
  SecondaryZecUsdOracle: "contracts/ZecUsdOracle.sol",
  PriceFeed: "contracts/PriceFeed.sol",
  Groth16Verifier: "contracts/verifiers/Groth16Verifier.sol",
  Groth16BatchVerifier: "contracts/verifiers/Groth16BatchVerifier.sol",
  GovernanceToken: "contracts/governance/GovernanceToken.sol",
  StableGovernor: "contracts/governance/StableGovernor.sol",
  StableTimelock: "contracts/governance/StableTimelock.sol",
  PoseidonT3: "poseidon-solidity/PoseidonT3.sol",
  RatioBuckets: "contracts/libraries/RatioBuckets.sol",
} as const satisfies Record<ContractName, string>;

/** Deployment names that are another instance of a contract: their artifact's name. */
export const INSTANCE_OF: Partial<Record<ContractName, string>> = { SecondaryZecUsdOracle: "ZecUsdOracle" };

export interface Artifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
}

export function readArtifact(name: ContractName): Artifact {
  const source = CONTRACTS[name];
  const path = join(ARTIFACTS_DIR, source, `${INSTANCE_OF[name] ?? name}.json`);
  return JSON.parse(readFileSync(path, "utf8")) as Artifact;
}

/** Fills library placeholders in creation bytecode (solc's link references). */
export function linkBytecode(artifact: Artifact, libraries: Record<string, `0x${string}`>): Hex {
  let code = artifact.bytecode.slice(2);
  for (const [, libs] of Object.entries(artifact.linkReferences)) {
    for (const [libName, refs] of Object.entries(libs)) {
      const address = libraries[libName];
      if (!address) throw new Error(`${artifact.contractName} needs library ${libName}`);
      for (const { start, length } of refs) {
        code = code.slice(0, start * 2) + address.slice(2).toLowerCase() + code.slice((start + length) * 2);
      }
    }
  }
  return `0x${code}`;
}
