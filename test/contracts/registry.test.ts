import { parseEventLogs } from "viem";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import { DepositTree, SNARK_SCALAR_FIELD, createNote, depositLeaf, noteCommitment } from "@zsd/sdk/notes";
import { type System, ZEC, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const CURRENT = 2n ** 256n - 1n;

describe("CollateralRegistry", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));

  it("keeps the same root as the off-chain tree, and emits what the indexer needs", async () => {
    const tree = new DepositTree();
    let total = 0n;
    for (let i = 0; i < 9; i++) {
      const note = createNote();
      const amount = BigInt(i + 1) * ZEC + BigInt(i);
      const { leaf, receipt } = await s.deposit(note, amount);
      tree.insert(leaf);
      total += amount;
      const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositRecorded" });
      expect(event!.args).toEqual({
        index: BigInt(i),
        leaf,
        noteCommitment: noteCommitment(note),
        amountZat: amount,
        root: tree.root,
        totalCollateralZat: total,
      });
      expect(await s.read.registry.read.root()).toBe(tree.root);
    }
    expect(await s.read.registry.read.size()).toBe(9n);
    expect(await s.read.registry.read.depth()).toBe(4n);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(total);
    expect(await s.read.registry.read.totalDepositedZat()).toBe(total);
    expect((await s.depositTree()).root).toBe(tree.root);
  });

  it("remembers when each root was replaced", async () => {
    await s.deposit(createNote(), ZEC);
    const first = await s.read.registry.read.root();
    expect(await s.read.registry.read.rootSupersededAt([first])).toBe(CURRENT);
    const { receipt } = await s.deposit(createNote(), ZEC);
    const block = await s.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(await s.read.registry.read.rootSupersededAt([first])).toBe(block.timestamp);
    expect(await s.read.registry.read.isValidRoot([first, 60n])).toBe(true);
    await s.increaseTime(61);
    expect(await s.read.registry.read.isValidRoot([first, 60n])).toBe(false);
    expect(await s.read.registry.read.isValidRoot([await s.read.registry.read.root(), 0n])).toBe(true);
    expect(await s.read.registry.read.isValidRoot([123n, 10n ** 9n])).toBe(false);
  });

  it("refuses to record the same deposit twice", async () => {
    const note = createNote();
    await s.deposit(note, 3n * ZEC);
    const leaf = depositLeaf(3n * ZEC, noteCommitment(note));
    await expectRevert(s.deposit(note, 3n * ZEC), "DepositAlreadyRecorded", [leaf]);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(3n * ZEC);
  });

  it("refuses amounts of zero or beyond 64 bits, and commitments outside the field", async () => {
    const registry = s.as(accounts.attestor).registry;
    await expectRevert(registry.write.recordDeposit([1n, 0n]), "InvalidDepositAmount", [0n]);
    await expectRevert(registry.write.recordDeposit([1n, 2n ** 64n]), "InvalidDepositAmount", [2n ** 64n]);
    await expectRevert(registry.write.recordDeposit([0n, ZEC]), "InvalidNoteCommitment", [0n]);
    await expectRevert(registry.write.recordDeposit([SNARK_SCALAR_FIELD, ZEC]), "InvalidNoteCommitment");
  });

  it("lowers collateral only through the payout role, never below zero", async () => {
    await s.deposit(createNote(), ZEC);
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    const payoutRole = await s.read.registry.read.PAYOUT_ROLE();
    await s.receipt(
      await s.as(accounts.deployer).wallet.writeContract({
        account: timelock,
        address: s.read.registry.address,
        abi: collateralRegistryAbi,
        functionName: "grantRole",
        args: [payoutRole, accounts.carol.address],
      }),
    );
    await expectRevert(s.as(accounts.carol).registry.write.recordPayout([ZEC + 1n]), "PayoutExceedsCollateral");
    await s.receipt(await s.as(accounts.carol).registry.write.recordPayout([ZEC]));
    expect(await s.read.registry.read.totalCollateralZat()).toBe(0n);
  });
});
