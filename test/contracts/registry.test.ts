import { type Hex, numberToHex, parseEventLogs } from "viem";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import {
  DepositTree,
  SNARK_SCALAR_FIELD,
  createNote,
  depositLeaf,
  noteCommitment,
  registryLeaves,
} from "@zsd/sdk/notes";
import { type System, ZEC, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const CURRENT = 2n ** 256n - 1n;
const U64_MAX = 2n ** 64n - 1n;
const CAPACITY = 2n ** 20n;

/** `count` fresh deposit leaves and their amounts (1 to 10 ZEC and some zatoshi, each its own). */
function depositBatch(count: number) {
  const amounts = Array.from({ length: count }, (_, i) => BigInt(1 + (i % 10)) * ZEC + BigInt(i));
  const leaves = amounts.map((amount) => depositLeaf(amount, noteCommitment(createNote())));
  return { leaves, total: amounts.reduce((a, b) => a + b, 0n) };
}

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
      // A deposit goes by its leaf, as a batch of one: no event names its commitment or its amount as such.
      const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
      expect(event!.eventName).toBe("DepositsRecorded");
      expect(event!.args).toEqual({
        firstIndex: BigInt(i),
        leaves: [leaf],
        totalZat: amount,
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

  it("refuses a released note of zero or beyond 64 bits, or with a commitment outside the field", async () => {
    await grant(await s.read.registry.read.NOTE_ROLE(), accounts.carol.address);
    const registry = s.as(accounts.carol).registry;
    await expectRevert(registry.write.insertNote([1n, 0n]), "InvalidDepositAmount", [0n]);
    await expectRevert(registry.write.insertNote([1n, 2n ** 64n]), "InvalidDepositAmount", [2n ** 64n]);
    await expectRevert(registry.write.insertNote([0n, ZEC]), "InvalidNoteCommitment", [0n]);
    await expectRevert(registry.write.insertNote([SNARK_SCALAR_FIELD, ZEC]), "InvalidNoteCommitment");
    await s.receipt(await registry.write.insertNote([noteCommitment(createNote()), ZEC]));
    expect(await s.read.registry.read.unmintedZat()).toBe(ZEC);
  });

  it("records deposits in batches with the roots of one-by-one insertion and one root in the history", async () => {
    const attestor = s.as(accounts.attestor).registry;
    const tree = new DepositTree();
    let total = 0n;
    // Batches of every shape against every alignment: into an empty tree, filling a level
    // exactly (size 4 then 8), starting at odd and even indexes, deepening the tree by several
    // levels at once, with single deposits between.
    for (const count of [1, 3, 4, 1, 8, 5, 16, 2, 7]) {
      if (count === 2) {
        const note = createNote();
        tree.insert((await s.deposit(note, 2n * ZEC)).leaf);
        total += 2n * ZEC;
      }
      const batch = depositBatch(count);
      const before = { root: tree.root, size: tree.size };
      const intermediate: bigint[] = [];
      for (const leaf of batch.leaves) {
        tree.insert(leaf);
        intermediate.push(tree.root);
      }
      total += batch.total;
      const receipt = await s.receipt(await attestor.write.recordDeposits([batch.leaves, batch.total]));
      const events = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
      expect(events.map((e) => e.eventName)).toEqual(["DepositsRecorded"]);
      expect(events[0]!.args).toEqual({
        firstIndex: BigInt(before.size),
        leaves: batch.leaves,
        totalZat: batch.total,
        root: tree.root,
        totalCollateralZat: total,
      });
      expect(await s.read.registry.read.root()).toBe(tree.root);
      expect(await s.read.registry.read.size()).toBe(BigInt(tree.size));
      expect(await s.read.registry.read.depth()).toBe(BigInt(Math.ceil(Math.log2(tree.size))));
      const block = await s.publicClient.getBlock({ blockNumber: receipt.blockNumber });
      if (before.root !== 0n) expect(await s.read.registry.read.rootSupersededAt([before.root])).toBe(block.timestamp);
      expect(await s.read.registry.read.rootSupersededAt([tree.root])).toBe(CURRENT);
      // The roots between a batch's leaves were never the registry's: no proof may use them.
      for (const root of intermediate.slice(0, -1)) {
        expect(await s.read.registry.read.rootSupersededAt([root])).toBe(0n);
      }
    }
    expect(await s.read.registry.read.totalCollateralZat()).toBe(total);
    expect(await s.read.registry.read.totalDepositedZat()).toBe(total);
    expect(await s.read.registry.read.unmintedZat()).toBe(total);
    // A wallet rebuilds the same tree from the events, single and batched alike.
    expect((await s.depositTree()).root).toBe(tree.root);
  });

  it("refuses a batch that is empty, repeats a leaf, holds a leaf outside the field or a total no deposits can have", async () => {
    const attestor = s.as(accounts.attestor).registry;
    const note = createNote();
    const { leaf: recorded } = await s.deposit(note, 3n * ZEC);
    const root = await s.read.registry.read.root();
    const [a, b] = depositBatch(2).leaves as [bigint, bigint];
    await expectRevert(attestor.write.recordDeposits([[], 0n]), "EmptyLeafBatch", [0n]);
    await expectRevert(attestor.write.recordDeposits([[], 1n]), "EmptyLeafBatch", [0n]);
    // A repeated leaf would be a second claim on the same ZEC, in the tree or in the batch.
    await expectRevert(attestor.write.recordDeposits([[a, recorded], 2n * ZEC]), "DepositAlreadyRecorded", [recorded]);
    await expectRevert(attestor.write.recordDeposits([[a, b, a], 3n * ZEC]), "DepositAlreadyRecorded", [a]);
    await expectRevert(attestor.write.recordDeposits([[a, 0n], 2n * ZEC]), "InvalidLeaf", [0n]);
    await expectRevert(attestor.write.recordDeposits([[SNARK_SCALAR_FIELD, a], 2n * ZEC]), "InvalidLeaf", [
      SNARK_SCALAR_FIELD,
    ]);
    // Each deposit is 1 to 2^64 - 1 zatoshi.
    await expectRevert(attestor.write.recordDeposits([[a, b], 1n]), "InvalidDepositTotal", [1n, 2n]);
    await expectRevert(attestor.write.recordDeposits([[a, b], 2n * U64_MAX + 1n]), "InvalidDepositTotal", [
      2n * U64_MAX + 1n,
      2n,
    ]);
    await expectRevert(
      s.as(accounts.carol).registry.write.recordDeposits([[a, b], 2n * ZEC]),
      "AccessControlUnauthorizedAccount",
    );
    // Nothing moved: the refused leaves can still be recorded.
    expect(await s.read.registry.read.root()).toBe(root);
    expect(await s.read.registry.read.size()).toBe(1n);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(3n * ZEC);
    await s.receipt(await attestor.write.recordDeposits([[a, b], 2n * U64_MAX]));
    expect(await s.read.registry.read.size()).toBe(3n);
  });

  it("inserts change leaves in batches for the note role only, as one-by-one insertion would", async () => {
    const noteRole = await s.read.registry.read.NOTE_ROLE();
    await grant(noteRole, accounts.carol.address);
    const carol = s.as(accounts.carol).registry;
    const tree = new DepositTree();
    tree.insert((await s.deposit(createNote(), ZEC)).leaf);
    const unminted = await s.read.registry.read.unmintedZat();
    const change = depositBatch(6).leaves;
    for (const leaf of change) tree.insert(leaf);
    const receipt = await s.receipt(await carol.write.insertChangeLeaves([change]));
    const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
    expect(event!.eventName).toBe("ChangeLeavesInserted");
    expect(event!.args).toEqual({ firstIndex: 1n, leaves: change, root: tree.root });
    expect(await s.read.registry.read.root()).toBe(tree.root);
    // Change is already counted in the unminted ZEC: a batch of it adds nothing.
    expect(await s.read.registry.read.unmintedZat()).toBe(unminted);
    await expectRevert(carol.write.insertChangeLeaves([[]]), "EmptyLeafBatch", [0n]);
    await expectRevert(carol.write.insertChangeLeaves([[change[2]!]]), "DepositAlreadyRecorded", [change[2]!]);
    await expectRevert(
      s.as(accounts.attestor).registry.write.insertChangeLeaves([depositBatch(1).leaves]),
      "AccessControlUnauthorizedAccount",
    );
    const events = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      fromBlock: 0n,
    });
    expect(new DepositTree(registryLeaves(events)).root).toBe(tree.root);
  });

  it("fills the tree to its capacity in a batch and refuses one leaf more", async () => {
    // The tree's size and depth are storage slots 1 and 2 (after AccessControl's roles):
    // checked against size() and depth() before they are set near capacity.
    await s.deposit(createNote(), ZEC);
    const registry = s.read.registry.address;
    const slot = async (n: bigint) =>
      BigInt((await s.publicClient.getStorageAt({ address: registry, slot: word(n) }))!);
    expect([await slot(1n), await slot(2n)]).toEqual([1n, 0n]);
    await s.testClient.setStorageAt({ address: registry, index: word(1n), value: word(CAPACITY - 3n) });
    await s.testClient.setStorageAt({ address: registry, index: word(2n), value: word(20n) });
    expect(await s.read.registry.read.size()).toBe(CAPACITY - 3n);
    expect(await s.read.registry.read.depth()).toBe(20n);
    const attestor = s.as(accounts.attestor).registry;
    const four = depositBatch(4);
    await expectRevert(attestor.write.recordDeposits([four.leaves, four.total]), "TreeFull", [CAPACITY]);
    const three = depositBatch(3);
    await s.receipt(await attestor.write.recordDeposits([three.leaves, three.total]));
    expect(await s.read.registry.read.size()).toBe(CAPACITY);
    expect(await s.read.registry.read.depth()).toBe(20n);
    await expectRevert(attestor.write.recordDeposits([depositBatch(1).leaves, ZEC]), "TreeFull", [CAPACITY]);
    await expectRevert(s.deposit(createNote(), ZEC), "TreeFull", [CAPACITY]);
  });

  const word = (n: bigint): Hex => numberToHex(n, { size: 32 });

  async function grant(role: Hex, to: Hex) {
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    await s.receipt(
      await s.as(accounts.deployer).wallet.writeContract({
        account: timelock,
        address: s.read.registry.address,
        abi: collateralRegistryAbi,
        functionName: "grantRole",
        args: [role, to],
      }),
    );
  }

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
