// The governance contracts this API reads and relays to: the governor, its
// voting token and the timelock, from the same deployment manifest as the
// relayed contracts. Every other contract of the manifest is named here too,
// so that a proposal's calls can be said in words.
import {
  type Abi,
  type Address,
  type Hex,
  decodeFunctionData,
  formatEther,
  getAddress,
  keccak256,
  toHex,
  zeroHash,
} from "viem";
import {
  collateralRegistryAbi,
  governanceTokenAbi,
  positionManagerAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTimelockAbi,
  stableTokenAbi,
  priceFeedAbi,
  zecUsdOracleAbi,
} from "@zsd/sdk";
import { type ContractName, loadDeployment } from "@zsd/sdk/deployment";
import type { Chain } from "./chain.ts";

const GOVERNANCE = ["StableGovernor", "GovernanceToken", "StableTimelock"] as const;

const ABIS: Partial<Record<ContractName, Abi>> = {
  StableToken: stableTokenAbi,
  CollateralRegistry: collateralRegistryAbi,
  PositionManager: positionManagerAbi,
  StableMinter: stableMinterAbi,
  Redemptions: redemptionsAbi,
  ZecUsdOracle: zecUsdOracleAbi,
  SecondaryZecUsdOracle: zecUsdOracleAbi,
  PriceFeed: priceFeedAbi,
  GovernanceToken: governanceTokenAbi,
  StableGovernor: stableGovernorAbi,
  StableTimelock: stableTimelockAbi,
};

/**
 * Role ids as AccessControl stores them, for summaries that say which role a call grants: every
 * `*_ROLE` constant the contracts' ABIs expose (each is keccak256 of its name, as OpenZeppelin's
 * are), so a role added to a contract is named here without a list to keep.
 */
const ROLES = new Map<string, string>([
  [zeroHash, "DEFAULT_ADMIN_ROLE"],
  ...Object.values(ABIS)
    .flatMap((abi) => abi ?? [])
    .flatMap((item) =>
      item.type === "function" && item.name.endsWith("_ROLE") && item.name !== "DEFAULT_ADMIN_ROLE" ? [item.name] : [],
    )
    .map((name) => [keccak256(toHex(name)), name] as [string, string]),
]);

/** One argument of a decoded call, as a person reads it. */
function argument(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") {
    if (ROLES.has(value.toLowerCase())) return ROLES.get(value.toLowerCase())!;
    if (/^0x[0-9a-fA-F]{40}$/.test(value)) return getAddress(value);
    return value.startsWith("0x") ? value : JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(argument).join(", ")}]`;
  return String(value);
}

export interface DecodedCall {
  /** The contract of this deployment at the target, if it is one. */
  contract: string | null;
  /** The function called, e.g. setMinCollateralRatio(uint256), when the calldata decodes. */
  signature: string | null;
  /** e.g. PositionManager.setMinCollateralRatio(17000); null when the target is not one of our contracts. */
  summary: string | null;
}

export class GovernanceChain {
  readonly governor: Address;
  readonly token: Address;
  readonly timelock: Address;
  /** Where the governor's events start. */
  readonly startBlock: bigint;
  /** Where the governance token's events (delegations) start. */
  readonly tokenStartBlock: bigint;
  readonly #names = new Map<string, ContractName>();

  constructor(
    readonly chain: Chain,
    contracts: Partial<Record<ContractName, { address: Address; startBlock: number }>>,
  ) {
    this.governor = getAddress(contracts.StableGovernor!.address);
    this.token = getAddress(contracts.GovernanceToken!.address);
    this.timelock = getAddress(contracts.StableTimelock!.address);
    this.startBlock = BigInt(contracts.StableGovernor!.startBlock);
    this.tokenStartBlock = BigInt(contracts.GovernanceToken!.startBlock);
    for (const [name, record] of Object.entries(contracts)) {
      if (record?.address) this.#names.set(record.address.toLowerCase(), name as ContractName);
    }
  }

  /** The governance contracts of the manifest `file`; undefined when it has none (an older manifest). */
  static load(file: string, chain: Chain): GovernanceChain | undefined {
    try {
      const deployment = loadDeployment(file, GOVERNANCE);
      return new GovernanceChain(chain, deployment.contracts);
    } catch {
      return undefined;
    }
  }

  get client() {
    return this.chain.client;
  }

  /** Reads through the chain adapter: an unreachable node is `unavailable`. */
  read<T>(call: () => Promise<T>): Promise<T> {
    return this.chain.read(call);
  }

  /** A proposal's call in words, where the target is one of our contracts. */
  decode(target: string, value: bigint, calldata: Hex): DecodedCall {
    const contract = this.#names.get(target.toLowerCase()) ?? null;
    const abi = contract ? ABIS[contract] : undefined;
    if (calldata === "0x" || calldata.length < 10) {
      return {
        contract,
        signature: null,
        summary: contract ? `${contract}: send ${formatEther(value)} ETH` : null,
      };
    }
    if (!abi) return { contract, signature: null, summary: null };
    try {
      const decoded = decodeFunctionData({ abi, data: calldata });
      const item = abi.find((i) => i.type === "function" && i.name === decoded.functionName) as
        { inputs: { type: string }[] } | undefined;
      const signature = `${decoded.functionName}(${(item?.inputs ?? []).map((i) => i.type).join(",")})`;
      const args = (decoded.args ?? []).map(argument).join(", ");
      const payment = value > 0n ? ` with ${formatEther(value)} ETH` : "";
      return { contract, signature, summary: `${contract}.${decoded.functionName}(${args})${payment}` };
    } catch {
      return { contract, signature: null, summary: null };
    }
  }
}
