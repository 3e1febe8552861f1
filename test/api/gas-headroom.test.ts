// A gas limit taken from eth_estimateGas must hold when other transactions
// land first: leaves inserted meanwhile make a LeanIMT insertion carry through
// more levels. The attestor's recordDeposits of one deposit, estimated when its insertion is
// cheap, is sent after the tree filled up to a 7-level carry.
import { describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk";
import { createNote, depositLeaf, noteCommitment } from "@zsd/sdk/notes";
import { INSERTION_HEADROOM, TX_GAS_CAP, gasLimit } from "../../api/src/adapters/gas.ts";
import { ZEC, accounts, deploySystem } from "../helpers/fixtures.ts";

describe("gas headroom for tree insertions", () => {
  it("sends a one-leaf recordDeposits estimated before 63 other leaves landed: the old estimate × 1.2 runs out of gas, estimate + headroom does not", async () => {
    const s = await deploySystem();
    for (let i = 0; i < 64; i++) await s.deposit(createNote(), ZEC);
    const call = {
      address: s.deployment.contracts.CollateralRegistry!.address as `0x${string}`,
      abi: collateralRegistryAbi,
      functionName: "recordDeposits",
      account: accounts.attestor.address,
    } as const;
    const late = depositLeaf(ZEC, noteCommitment(createNote()));
    // Leaf 65: no carry, the cheapest insertion.
    const estimate = await s.publicClient.estimateContractGas({ ...call, args: [[late], ZEC] });
    // Leaves 65…127 land first: leaf 128 carries through 7 levels.
    for (let i = 0; i < 63; i++) await s.deposit(createNote(), ZEC);
    const send = async (gas: bigint) => {
      const hash = await s.as(accounts.attestor).registry.write.recordDeposits([[late], ZEC], { gas });
      return (await s.receipt(hash)).status;
    };
    // What the sender did (estimate × 1.2): out of gas (Hardhat refuses it, or it is mined reverted).
    await expect(send((estimate * 12n) / 10n).catch((e: Error) => e.message)).resolves.toMatch(/out of gas|reverted/i);
    expect(gasLimit(estimate)).toBeLessThanOrEqual(TX_GAS_CAP);
    expect(gasLimit(estimate) - estimate).toBeGreaterThanOrEqual(INSERTION_HEADROOM);
    expect(await send(gasLimit(estimate))).toBe("success");
  });
});
