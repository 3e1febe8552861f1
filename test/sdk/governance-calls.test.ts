// A proposal's calls as the CLI and zsd.propose take them, in words:
// Contract.function(args) becomes the deployment's address and the calldata
// viem encodes, or an error that says what is wrong, before anything is sent.
import { encodeFunctionData } from "viem";
import { describe, expect, it } from "vitest";
import { positionManagerAbi, stableTimelockAbi } from "@zsd/sdk/abis";
import { parseCall } from "@zsd/sdk/client";

const MINTER = "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0";
const POSITIONS = "0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9";
const TIMELOCK = "0x0165878A594ca255338adfa4d48449f69242Eb8F";
const contracts = {
  StableMinter: { address: MINTER },
  PositionManager: { address: POSITIONS },
  StableTimelock: { address: TIMELOCK },
};

describe("parseCall", () => {
  it("encodes a call of a deployed contract, numbers as uint256 and the address checksummed", () => {
    expect(parseCall("PositionManager.setMinCollateralRatio(17000)", contracts)).toEqual({
      target: "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9",
      calldata: encodeFunctionData({ abi: positionManagerAbi, functionName: "setMinCollateralRatio", args: [17_000n] }),
    });
    const role = `0x${"ab".repeat(32)}` as const;
    expect(parseCall(` StableTimelock.grantRole(${role}, ${MINTER}) `, contracts).calldata).toBe(
      encodeFunctionData({ abi: stableTimelockAbi, functionName: "grantRole", args: [role, MINTER] }),
    );
  });

  it("says what is wrong with a call it cannot encode", () => {
    const refused: [string, RegExp][] = [
      ["setMinCollateralRatio(17000)", /a call is Contract.function\(arguments\)/],
      ["Vault.drain()", /Vault is not one of StableToken, /],
      ["Redemptions.pause()", /Redemptions is not one of/], // not in this deployment
      ["PositionManager.setMinCollateralRatio(17000, 1)", /takes 1 arguments \(got 2\)/],
      ["PositionManager.setMinCollateralRatio(1.5)", /1.5 is not a whole number for uint256/],
      ["PositionManager.minCollateralRatioBps()", /has no function minCollateralRatioBps that changes state/],
      ["StableTimelock.grantRole(0x01, bob)", /bob is not an address/],
    ];
    for (const [call, message] of refused) expect(() => parseCall(call, contracts), call).toThrow(message);
  });
});
