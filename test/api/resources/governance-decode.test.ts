// A proposal's calls in words: a role granted or revoked is named by the role, for every role a
// deployed contract has (read from the chain, not from a list kept beside the decoder).
import { type Abi, type Address, type Hex, encodeFunctionData } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import * as abis from "@zsd/sdk/abis";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { GovernanceChain } from "../../../api/src/adapters/governance.ts";
import { INSTANCE_OF } from "../../../scripts/lib/artifacts.ts";
import { type System, accounts, deploySystem } from "../../helpers/fixtures.ts";

const abiOf = (contract: string): Abi | undefined => {
  const name = INSTANCE_OF[contract as keyof typeof INSTANCE_OF] ?? contract;
  return (abis as Record<string, unknown>)[`${name[0]!.toLowerCase()}${name.slice(1)}Abi`] as Abi | undefined;
};

describe("proposal calls in words", () => {
  let s: System;
  let governance: GovernanceChain;
  beforeAll(async () => {
    s = await deploySystem();
    governance = new GovernanceChain(new Chain(s.deployment, s.rpcUrl, 5_000), s.deployment.contracts);
  });

  it("names every role of every deployed contract in a grant or a revocation", async () => {
    const seen: string[] = [];
    const contracts = s.deployment.contracts as Record<string, { address: Address }>;
    for (const [contract, { address }] of Object.entries(contracts)) {
      const abi = abiOf(contract);
      if (!abi?.some((item) => item.type === "function" && item.name === "grantRole")) continue;
      const roleGetters = abi.flatMap((item) =>
        item.type === "function" && item.name.endsWith("_ROLE") && item.inputs.length === 0 ? [item.name] : [],
      );
      for (const role of roleGetters) {
        const id = (await s.publicClient.readContract({ address, abi, functionName: role })) as Hex;
        for (const functionName of ["grantRole", "revokeRole"] as const) {
          const data = encodeFunctionData({ abi, functionName, args: [id, accounts.carol.address] });
          expect(governance.decode(address, 0n, data).summary).toBe(
            `${contract}.${functionName}(${role}, ${accounts.carol.address})`,
          );
        }
        seen.push(`${contract}.${role}`);
      }
    }
    // The roles this system hands out beyond the admin's and the timelock's, each named.
    for (const role of [
      "StableMinter.GUARDIAN_ROLE",
      "StableMinter.PAUSER_ROLE",
      "Redemptions.CUSTODY_ROLE",
      "CollateralRegistry.NOTE_ROLE",
      "CollateralRegistry.PAYOUT_ROLE",
      "StableToken.MINTER_ROLE",
      "StableToken.REDEEMER_ROLE",
      "ZecUsdOracle.ORACLE_UPDATER_ROLE",
      "StableTimelock.PROPOSER_ROLE",
    ]) {
      expect(seen).toContain(role);
    }
  });
});
