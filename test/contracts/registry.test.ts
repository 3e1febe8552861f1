import { type Hex, encodeAbiParameters, keccak256, numberToHex, parseEventLogs } from "viem";
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
  /** A batch signed by the attestors' quorum (valid signatures, so the registry's other checks speak), sent by custody. */
  const record = async (leaves: bigint[], totalZat: bigint) =>
    s.as(accounts.custody).registry.write.recordDeposits([leaves, totalZat, await s.attest(leaves, totalZat)]);
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

  it("records deposits sent at once from custody's one key (the test kit sends them in turn, again on a stale nonce)", async () => {
    // In API tests a started relay pays payouts with this key while the test records deposits: a nonce read a
    // moment before another sender's transaction is refused as used. Four at once read the same pending count.
    const notes = [1n, 2n, 3n, 4n].map(() => createNote());
    const before = await s.read.registry.read.size();
    await Promise.all(notes.map((note) => s.deposit(note, ZEC)));
    expect(await s.read.registry.read.size()).toBe(before + 4n);
  });

  it("refuses to record the same deposit twice", async () => {
    const note = createNote();
    await s.deposit(note, 3n * ZEC);
    const leaf = depositLeaf(3n * ZEC, noteCommitment(note));
    await expectRevert(s.deposit(note, 3n * ZEC), "DepositAlreadyRecorded", [leaf]);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(3n * ZEC);
  });

  it("queues a released note: refused at zero or beyond 64 bits, or with a commitment outside the field; unminted at once, spendable once inserted", async () => {
    await grant(await s.read.registry.read.NOTE_ROLE(), accounts.carol.address);
    const registry = s.as(accounts.carol).registry;
    await expectRevert(registry.write.queueNote([1n, 0n]), "InvalidDepositAmount", [0n]);
    await expectRevert(registry.write.queueNote([1n, 2n ** 64n]), "InvalidDepositAmount", [2n ** 64n]);
    await expectRevert(registry.write.queueNote([0n, ZEC]), "InvalidNoteCommitment", [0n]);
    await expectRevert(registry.write.queueNote([SNARK_SCALAR_FIELD, ZEC]), "InvalidNoteCommitment");
    const commitment = noteCommitment(createNote());
    const leaf = depositLeaf(ZEC, commitment);
    const receipt = await s.receipt(await registry.write.queueNote([commitment, ZEC]));
    const [queued] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "LeafQueued" });
    expect(queued?.args).toEqual({ sequence: 0n, leaf, amountZat: ZEC });
    // Counted as unminted from the release on, though no proof can spend it before its insertion.
    expect(await s.read.registry.read.unmintedZat()).toBe(ZEC);
    expect([await s.read.registry.read.size(), await s.read.registry.read.pendingCount()]).toEqual([0n, 1n]);
    // The same note released twice would be one note counted twice: refused while queued (its commitment
    // and amount are public, so a copied release queued first would make the owner's own one the
    // duplicate), by a deposit too, and once in the tree.
    await expectRevert(registry.write.queueNote([commitment, ZEC]), "DepositAlreadyRecorded", [leaf]);
    await expectRevert(registry.write.queueLeaf([leaf]), "DepositAlreadyRecorded", [leaf]);
    await expectRevert(record([leaf], ZEC), "DepositAlreadyRecorded", [leaf]);
    await s.insertPending();
    expect(await s.read.registry.read.root()).toBe(new DepositTree([leaf]).root);
    expect(await s.read.registry.read.unmintedZat()).toBe(ZEC);
    await expectRevert(registry.write.queueNote([commitment, ZEC]), "DepositAlreadyRecorded", [leaf]);
  });

  it("records deposits in batches with the roots of one-by-one insertion and one root in the history", async () => {
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
      const receipt = await s.receipt(await record(batch.leaves, batch.total));
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
    const note = createNote();
    const { leaf: recorded } = await s.deposit(note, 3n * ZEC);
    const root = await s.read.registry.read.root();
    const [a, b] = depositBatch(2).leaves as [bigint, bigint];
    await expectRevert(record([], 0n), "EmptyLeafBatch", [0n]);
    await expectRevert(record([], 1n), "EmptyLeafBatch", [0n]);
    // A repeated leaf would be a second claim on the same ZEC, in the tree or in the batch.
    await expectRevert(record([a, recorded], 2n * ZEC), "DepositAlreadyRecorded", [recorded]);
    await expectRevert(record([a, b, a], 3n * ZEC), "DepositAlreadyRecorded", [a]);
    await expectRevert(record([a, 0n], 2n * ZEC), "InvalidLeaf", [0n]);
    await expectRevert(record([SNARK_SCALAR_FIELD, a], 2n * ZEC), "InvalidLeaf", [SNARK_SCALAR_FIELD]);
    // Each deposit is 1 to 2^64 - 1 zatoshi.
    await expectRevert(record([a, b], 1n), "InvalidDepositTotal", [1n, 2n]);
    await expectRevert(record([a, b], 2n * U64_MAX + 1n), "InvalidDepositTotal", [2n * U64_MAX + 1n, 2n]);
    // Unsigned, or signed by one attestor only: refused whoever sends it.
    await expectRevert(
      s.as(accounts.carol).registry.write.recordDeposits([[a, b], 2n * ZEC, []]),
      "AttestorQuorumNotMet",
      [0n, 2n],
    );
    // Nothing moved: the refused leaves can still be recorded.
    expect(await s.read.registry.read.root()).toBe(root);
    expect(await s.read.registry.read.size()).toBe(1n);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(3n * ZEC);
    await s.receipt(await record([a, b], 2n * U64_MAX));
    expect(await s.read.registry.read.size()).toBe(3n);
  });

  const LOW_192 = (1n << 192n) - 1n;
  /** The registry's chain over `leaves`, from `start` (the empty queue's word, 1, by default). */
  const queueChain = (leaves: readonly bigint[], start: Hex = word(1n)): Hex =>
    leaves.reduce<Hex>(
      (h, leaf) =>
        word(BigInt(keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [h, leaf]))) & LOW_192),
      start,
    );

  async function noteRoleForCarol() {
    await grant(await s.read.registry.read.NOTE_ROLE(), accounts.carol.address);
    return s.as(accounts.carol).registry;
  }

  const treeFromEvents = async () =>
    new DepositTree(
      registryLeaves(
        await s.publicClient.getContractEvents({
          address: s.read.registry.address,
          abi: collateralRegistryAbi,
          fromBlock: 0n,
        }),
      ),
    );

  /** The queue's counters: [queued, inserted, pending]. */
  const counters = async () => [
    await s.read.registry.read.queuedCount(),
    await s.read.registry.read.insertedCount(),
    await s.read.registry.read.pendingCount(),
  ];

  it("queues change for the note role only, in order, outside the tree and the totals", async () => {
    const carol = await noteRoleForCarol();
    expect(await s.read.registry.read.chainAt([0n])).toBe(await s.read.registry.read.EMPTY_QUEUE());
    const deposited = (await s.deposit(createNote(), ZEC)).leaf;
    const [root, unminted] = [await s.read.registry.read.root(), await s.read.registry.read.unmintedZat()];
    const change = depositBatch(5).leaves;
    const one = await s.receipt(await carol.write.queueLeaf([change[0]!]));
    const many = await s.receipt(await carol.write.queueLeaves([change.slice(1)]));
    const queued = parseEventLogs({ abi: collateralRegistryAbi, logs: [...one.logs, ...many.logs] });
    expect(queued.map((e) => [e.eventName, e.args])).toEqual(
      change.map((leaf, i) => ["LeafQueued", { sequence: BigInt(i), leaf, amountZat: 0n }]),
    );
    expect(await counters()).toEqual([5n, 0n, 5n]);
    // A checkpoint after every leaf: any stretch of the queue can be vouched for.
    for (let i = 0; i <= 5; i++) {
      expect(await s.read.registry.read.chainAt([BigInt(i)])).toBe(queueChain(change.slice(0, i)));
    }
    await expectRevert(s.read.registry.read.chainAt([6n]), "InvalidPendingRange", [6n, 0n, 0n, 5n]);
    // Not in the tree yet, and already counted in the unminted ZEC (a spend takes only its floor).
    expect(await s.read.registry.read.root()).toBe(root);
    expect(await s.read.registry.read.size()).toBe(1n);
    expect(await s.read.registry.read.unmintedZat()).toBe(unminted);

    await expectRevert(carol.write.queueLeaf([deposited]), "DepositAlreadyRecorded", [deposited]);
    await expectRevert(carol.write.queueLeaves([[change[0]!, deposited]]), "DepositAlreadyRecorded", [deposited]);
    await expectRevert(carol.write.queueLeaf([0n]), "InvalidLeaf", [0n]);
    await expectRevert(carol.write.queueLeaf([SNARK_SCALAR_FIELD]), "InvalidLeaf", [SNARK_SCALAR_FIELD]);
    await expectRevert(carol.write.queueLeaves([[]]), "EmptyLeafBatch", [0n]);
    await expectRevert(s.as(accounts.custody).registry.write.queueLeaf([1n]), "AccessControlUnauthorizedAccount");
    await expectRevert(s.as(accounts.custody).registry.write.queueLeaves([[1n]]), "AccessControlUnauthorizedAccount");
    expect(await counters()).toEqual([5n, 0n, 5n]);
  });

  it("holds at most MAX_PENDING leaves, and keeps the checkpoints of the last MAX_PENDING", async () => {
    const carol = await noteRoleForCarol();
    const max = await s.read.registry.read.MAX_PENDING();
    expect(max).toBe(1024n);
    // 1,022 queued in a few calls (the ring's slots are written once each, as on a live chain).
    for (let done = 0; done < 1022; done += 200) {
      await s.receipt(await carol.write.queueLeaves([depositBatch(Math.min(200, 1022 - done)).leaves]));
    }
    expect(await counters()).toEqual([1022n, 0n, 1022n]);
    await expectRevert(carol.write.queueLeaves([depositBatch(3).leaves]), "PendingQueueFull", [max]);
    await s.receipt(await carol.write.queueLeaves([depositBatch(2).leaves]));
    await expectRevert(carol.write.queueLeaf([depositBatch(1).leaves[0]!]), "PendingQueueFull", [max]);
    // Inserting makes room again, and the oldest checkpoint kept is the head's.
    await s.insertPending(10);
    expect(await counters()).toEqual([1024n, 10n, 1014n]);
    await s.receipt(await carol.write.queueLeaf([depositBatch(1).leaves[0]!]));
    await expectRevert(s.read.registry.read.chainAt([0n]), "InvalidPendingRange", [0n, 0n, 10n, 1025n]);
    expect(await s.read.registry.read.chainAt([1n])).toMatch(/^0x0{16}/);
  });

  it("lets anyone insert a stretch of the queue with one walk, as one-by-one insertion would; what went in meanwhile is skipped", async () => {
    const carol = await noteRoleForCarol();
    const tree = new DepositTree();
    tree.insert((await s.deposit(createNote(), ZEC)).leaf);
    const unminted = await s.read.registry.read.unmintedZat();
    const change = depositBatch(7).leaves;
    await s.receipt(await carol.write.queueLeaves([change]));
    const anyone = s.as(accounts.bob).registry;

    // Not the queued leaves: one changed, two swapped, a stretch given from the wrong sequence.
    const changed = [...change.slice(0, 6), change[6]! + 1n];
    const swapped = [change[1]!, change[0]!, ...change.slice(2)];
    await expectRevert(anyone.write.insertPendingLeaves([0n, changed]), "PendingLeavesMismatch", [0n, 7n]);
    await expectRevert(anyone.write.insertPendingLeaves([0n, swapped.slice(0, 2)]), "PendingLeavesMismatch", [0n, 2n]);
    await expectRevert(anyone.write.insertPendingLeaves([0n, change.slice(1, 3)]), "PendingLeavesMismatch", [0n, 2n]);
    // Not reaching past the head, past the queue, or empty; nor leaving a gap after the head.
    await expectRevert(anyone.write.insertPendingLeaves([0n, []]), "InvalidPendingRange", [0n, 0n, 0n, 7n]);
    await expectRevert(anyone.write.insertPendingLeaves([0n, [...change, 5n]]), "InvalidPendingRange", [
      0n,
      8n,
      0n,
      7n,
    ]);
    await expectRevert(anyone.write.insertPendingLeaves([1n, change.slice(1, 3)]), "InvalidPendingRange", [
      1n,
      2n,
      0n,
      7n,
    ]);

    // Three now: leaves 1..3, one root; four stay queued.
    for (const leaf of change.slice(0, 3)) tree.insert(leaf);
    const first = await s.receipt(await anyone.write.insertPendingLeaves([0n, change.slice(0, 3)]));
    const [inserted] = parseEventLogs({ abi: collateralRegistryAbi, logs: first.logs });
    expect([inserted!.eventName, inserted!.args]).toEqual([
      "PendingLeavesInserted",
      { firstIndex: 1n, leaves: change.slice(0, 3), consumed: 3n, root: tree.root },
    ]);
    expect(await s.read.registry.read.root()).toBe(tree.root);
    expect(await counters()).toEqual([7n, 3n, 4n]);
    expect(await s.read.registry.read.rootSupersededAt([tree.root])).toBe(CURRENT);
    // An inserter that read the queue before that insertion, and before two more leaves were
    // queued, still goes through: the three are skipped, its other four go in, the new two wait.
    const late = depositBatch(2).leaves;
    await s.receipt(await carol.write.queueLeaves([late]));
    for (const leaf of change.slice(3)) tree.insert(leaf);
    const second = await s.receipt(await anyone.write.insertPendingLeaves([0n, change]));
    const [again] = parseEventLogs({ abi: collateralRegistryAbi, logs: second.logs });
    expect(again!.args).toEqual({ firstIndex: 4n, leaves: change.slice(3), consumed: 4n, root: tree.root });
    expect(await counters()).toEqual([9n, 7n, 2n]);
    // Wholly inserted already: refused, nothing moves.
    await expectRevert(anyone.write.insertPendingLeaves([0n, change]), "InvalidPendingRange", [0n, 7n, 7n, 9n]);
    for (const leaf of late) tree.insert(leaf);
    await s.receipt(await anyone.write.insertPendingLeaves([7n, late]));
    expect(await s.read.registry.read.root()).toBe(tree.root);
    expect(await s.read.registry.read.size()).toBe(10n);
    expect(await counters()).toEqual([9n, 9n, 0n]);
    // Change is already counted in the unminted ZEC: inserting it adds nothing.
    expect(await s.read.registry.read.unmintedZat()).toBe(unminted);
    expect((await treeFromEvents()).root).toBe(tree.root);
    // An inserted leaf cannot be queued again.
    await expectRevert(carol.write.queueLeaf([change[4]!]), "DepositAlreadyRecorded", [change[4]!]);
  });

  it("drops, not refuses, a queued leaf the tree already holds, so one owner's duplicate holds up no one", async () => {
    const carol = await noteRoleForCarol();
    const tree = new DepositTree();
    const [a, b, c] = depositBatch(3).leaves as [bigint, bigint, bigint];
    // b queued twice (it is checked against the tree only), and a recorded as a deposit while queued.
    await s.receipt(await carol.write.queueLeaves([[a, b, c, b]]));
    await s.receipt(await record([a], ZEC));
    tree.insert(a);
    const receipt = await s.receipt(await s.as(accounts.bob).registry.write.insertPendingLeaves([0n, [a, b, c, b]]));
    tree.insert(b);
    tree.insert(c);
    const events = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
    expect(events.map((e) => [e.eventName, e.args])).toEqual([
      ["PendingLeafDropped", { leaf: a }],
      ["PendingLeafDropped", { leaf: b }],
      ["PendingLeavesInserted", { firstIndex: 1n, leaves: [b, c], consumed: 4n, root: tree.root }],
    ]);
    expect(await s.read.registry.read.root()).toBe(tree.root);
    expect(await s.read.registry.read.size()).toBe(3n);
    expect((await treeFromEvents()).root).toBe(tree.root);

    // Every leaf dropped: the queue moves on and the root stays.
    const [d, e] = depositBatch(2).leaves as [bigint, bigint];
    await s.receipt(await carol.write.queueLeaves([[d, e]]));
    await s.receipt(await record([d, e], 2n * ZEC));
    const root = await s.read.registry.read.root();
    const all = await s.receipt(await s.as(accounts.bob).registry.write.insertPendingLeaves([4n, [d, e]]));
    const [, , last] = parseEventLogs({ abi: collateralRegistryAbi, logs: all.logs });
    expect(last!.args).toEqual({ firstIndex: 5n, leaves: [], consumed: 2n, root });
    expect(await s.read.registry.read.root()).toBe(root);
    expect(await counters()).toEqual([6n, 6n, 0n]);
  });

  it("fills the tree to its capacity in a batch and refuses one leaf more", async () => {
    // The tree's size and depth are storage slots 3 and 4 (after AccessControl's roles and EIP712's two names):
    // checked against size() and depth() before they are set near capacity.
    await s.deposit(createNote(), ZEC);
    const registry = s.read.registry.address;
    const slot = async (n: bigint) =>
      BigInt((await s.publicClient.getStorageAt({ address: registry, slot: word(n) }))!);
    expect([await slot(3n), await slot(4n)]).toEqual([1n, 0n]);
    await s.testClient.setStorageAt({ address: registry, index: word(3n), value: word(CAPACITY - 3n) });
    await s.testClient.setStorageAt({ address: registry, index: word(4n), value: word(20n) });
    expect(await s.read.registry.read.size()).toBe(CAPACITY - 3n);
    expect(await s.read.registry.read.depth()).toBe(20n);
    const four = depositBatch(4);
    await expectRevert(record(four.leaves, four.total), "TreeFull", [CAPACITY]);
    const three = depositBatch(3);
    await s.receipt(await record(three.leaves, three.total));
    expect(await s.read.registry.read.size()).toBe(CAPACITY);
    expect(await s.read.registry.read.depth()).toBe(20n);
    await expectRevert(record(depositBatch(1).leaves, ZEC), "TreeFull", [CAPACITY]);
    await expectRevert(s.deposit(createNote(), ZEC), "TreeFull", [CAPACITY]);
  });

  it("keeps room in the tree for every queued leaf: queueing and direct insertions stop short of it", async () => {
    const carol = await noteRoleForCarol();
    await s.deposit(createNote(), ZEC);
    const registry = s.read.registry.address;
    await s.testClient.setStorageAt({ address: registry, index: word(3n), value: word(CAPACITY - 4n) });
    await s.testClient.setStorageAt({ address: registry, index: word(4n), value: word(20n) });
    const [a, b] = depositBatch(2).leaves as [bigint, bigint];
    await s.receipt(await carol.write.queueLeaves([[a, b]]));
    // Four places left, two of them the queue's: a batch of three deposits, or two change leaves
    // and a deposit, would leave a queued leaf none (its spend done, its change stranded).
    const three = depositBatch(3);
    await expectRevert(record(three.leaves, three.total), "TreeFull", [CAPACITY]);
    await expectRevert(carol.write.queueLeaves([depositBatch(3).leaves]), "TreeFull", [CAPACITY]);
    await s.receipt(await carol.write.queueLeaf([depositBatch(1).leaves[0]!]));
    // One place left, not the queue's: a deposit takes it; then nothing but the queue goes in.
    await s.deposit(createNote(), ZEC);
    await expectRevert(carol.write.queueNote([noteCommitment(createNote()), ZEC]), "TreeFull", [CAPACITY]);
    await expectRevert(s.deposit(createNote(), ZEC), "TreeFull", [CAPACITY]);
    await expectRevert(carol.write.queueLeaf([depositBatch(1).leaves[0]!]), "TreeFull", [CAPACITY]);
    // Every queued leaf still goes in, filling the tree.
    await s.insertPending();
    expect(await s.read.registry.read.size()).toBe(CAPACITY);
    expect(await s.read.registry.read.pendingCount()).toBe(0n);
  });

  const word = (n: bigint): Hex => numberToHex(n, { size: 32 });

  const grant = (role: Hex, to: Hex) => s.grantRegistryRole(role, to);

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
