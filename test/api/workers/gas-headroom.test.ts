// A gas limit taken from eth_estimateGas must hold when other transactions
// land first: leaves inserted meanwhile make a LeanIMT insertion carry through
// more levels. The attestor's recordDeposits of one deposit, estimated when its insertion is
// cheap, is sent after the tree filled up to a 7-level carry.
import { describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk";
import { createNote, depositLeaf, noteCommitment } from "@zsd/sdk/notes";
import { type Hex, numberToHex } from "viem";
import { INSERTION_HEADROOM, TX_GAS_CAP, gasLimit } from "../../../api/src/adapters/gas.ts";
import { insertionGas } from "../../../api/src/workers/upkeep/leaf-inserter.ts";
import { ZEC, accounts, deploySystem } from "../../helpers/fixtures.ts";

describe("gas headroom for tree insertions", () => {
  it("sends a one-leaf recordDeposits estimated before 63 other leaves landed: the old estimate × 1.2 runs out of gas, estimate + headroom does not", async () => {
    const s = await deploySystem();
    for (let i = 0; i < 64; i++) await s.deposit(createNote(), ZEC);
    const call = {
      address: s.deployment.contracts.CollateralRegistry!.address as `0x${string}`,
      abi: collateralRegistryAbi,
      functionName: "recordDeposits",
      account: accounts.custody.address,
    } as const;
    const late = depositLeaf(ZEC, noteCommitment(createNote()));
    // Leaf 65: no carry, the cheapest insertion.
    const estimate = await s.publicClient.estimateContractGas({
      ...call,
      args: [[late], ZEC, await s.attest([late], ZEC)],
    });
    // Leaves 65…127 land first: leaf 128 carries through 7 levels.
    for (let i = 0; i < 63; i++) await s.deposit(createNote(), ZEC);
    const send = async (gas: bigint) => {
      const hash = await s.sendDeposits([late], ZEC, { gas });
      return (await s.receipt(hash)).status;
    };
    // What the sender did (estimate × 1.2): out of gas (Hardhat refuses it, or it is mined reverted).
    await expect(send((estimate * 12n) / 10n).catch((e: Error) => e.message)).resolves.toMatch(/out of gas|reverted/i);
    expect(gasLimit(estimate)).toBeLessThanOrEqual(TX_GAS_CAP);
    expect(gasLimit(estimate) - estimate).toBeGreaterThanOrEqual(INSERTION_HEADROOM);
    expect(await send(gasLimit(estimate))).toBe("success");
  });

  it("inserts the relay's largest stretches of queued change within insertionGas in a tree of 20 levels, where every level carries", async () => {
    const s = await deploySystem();
    const registry = s.read.registry.address;
    const word = (n: bigint): Hex => numberToHex(n, { size: 32 });
    await s.grantRegistryRole(await s.read.registry.read.NOTE_ROLE(), accounts.carol.address);
    const carol = s.as(accounts.carol).registry;
    // The tree's size and depth are storage slots 3 and 4 (registry.test checks the layout): a full
    // 20-level tree but for the stretch, starting at an odd index so that its first node pairs with
    // an old one at every level, and every side node still empty (a fresh slot's write, the dearest).
    const CAPACITY = 2n ** 20n;
    for (const count of [64, 256]) {
      await s.testClient.setStorageAt({
        address: registry,
        index: word(3n),
        value: word(CAPACITY - 1n - BigInt(count)),
      });
      await s.testClient.setStorageAt({ address: registry, index: word(4n), value: word(20n) });
      const leaves = Array.from({ length: count }, () => noteCommitment(createNote()));
      await s.receipt(await carol.write.queueLeaves([leaves], { gas: 15_000_000n }));
      const from = await s.read.registry.read.insertedCount();
      const limit = insertionGas(count);
      const receipt = await s.receipt(
        await s.as(accounts.bob).registry.write.insertPendingLeaves([from, leaves], { gas: limit }),
      );
      expect(receipt.status).toBe("success");
      expect(await s.read.registry.read.size()).toBe(CAPACITY - 1n);
      console.log(`insertPendingLeaves of ${count} at depth 20: ${receipt.gasUsed} gas used, limit ${limit}`);
      expect(receipt.gasUsed).toBeLessThan(limit);
      expect(limit).toBeLessThanOrEqual(TX_GAS_CAP);
    }
  });
});
