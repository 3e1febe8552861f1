// The tests' breakable Chainlink-shaped feed (contracts/mocks/MockAggregator.sol): deployed beside a
// system, never by the deploy script, so its ABI is written here rather than in the SDK.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Address, type Hex, getAddress, getContract, parseAbi } from "viem";
import { ARTIFACTS_DIR } from "../../scripts/lib/paths.ts";
import type { System } from "@zsd/testkit";

export const mockAggregatorAbi = parseAbi([
  "function pushRound(int256 answer, uint256 updatedAt) returns (uint80)",
  "function setLatest(int256 answer, uint256 updatedAt)",
  "function setMode(uint8 mode)",
  "function setDecimals(uint8 decimals)",
  "function decimals() view returns (uint8)",
  "function latestRoundData() view returns (uint80, int256, uint256, uint256, uint80)",
  "function getRoundData(uint80 roundId) view returns (uint80, int256, uint256, uint256, uint80)",
]);

/** MockAggregator.Mode */
export const MODE = { Normal: 0, Reverting: 1, Short: 2 } as const;

/** Deploys a MockAggregator from `s`'s deployer account. */
export async function deployMockAggregator(s: System) {
  const artifact = JSON.parse(
    readFileSync(join(ARTIFACTS_DIR, "contracts", "mocks", "MockAggregator.sol", "MockAggregator.json"), "utf8"),
  ) as { bytecode: Hex };
  const wallet = s.read.wallet;
  const hash = await wallet.deployContract({
    account: wallet.account!,
    chain: wallet.chain,
    abi: mockAggregatorAbi,
    bytecode: artifact.bytecode,
  });
  const address: Address = getAddress((await s.receipt(hash)).contractAddress!);
  return getContract({ address, abi: mockAggregatorAbi, client: { public: s.publicClient, wallet } });
}

export type MockAggregator = Awaited<ReturnType<typeof deployMockAggregator>>;
