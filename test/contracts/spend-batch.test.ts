// spendBatch: top-ups and note withdrawals checked with one
// pairing product. Four spend proofs made once in beforeAll serve every test:
// each starts from the same snapshot, so no nullifier is spent twice across tests.
// The batch proof check itself (coefficients, forged pairs, random batches
// against single checks) is batch.test's; this file holds spendBatch to what N
// single topUp / withdrawNote calls do.
import { type Address, type Hex, parseEventLogs, zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, positionManagerAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { type Note, createNote, noteCommitment, positionOwner, positionOwnerKey, releaseProver } from "@zsd/sdk/notes";
import { closeTypedData } from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { checkBooks } from "../helpers/books.ts";

const { alice, relayer } = accounts;
const SAPLING =
  "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqxqz3d2";

type Spent = Awaited<ReturnType<System["proveSpend"]>>;
interface Item {
  proved: Spent;
  positionId: bigint;
  sealedAddress: Hex;
  owner: Address;
}

describe("spendBatch: top-ups and note withdrawals with one pairing product", () => {
  let s: System;
  let positions: bigint[] = [];
  /** The note of the second position: its owner's key closes it. */
  let closable: Note | undefined;
  const items: Item[] = [];

  const asCall = (i: Item) => ({
    spend: i.proved.spend,
    positionId: i.positionId,
    sealedAddress: i.sealedAddress,
    owner: i.owner,
    hint: 0n,
  });
  const send = (batch: Item[], proofs = batch.map((i) => i.proved.proof)) =>
    s.as(relayer).minter.write.spendBatch([proofs, batch.map(asCall)]);
  /** The same item as the single call a wallet would send. */
  const single = (i: Item) =>
    i.positionId !== 0n
      ? s.as(relayer).minter.write.topUp([i.proved.proof, i.proved.spend, i.positionId, 0n])
      : s.as(relayer).minter.write.withdrawNote([i.proved.proof, i.proved.spend, i.sealedAddress, i.owner]);

  /** What the books say after a run: every position, the payouts, the queue and the totals. */
  async function state() {
    const count = await s.read.positions.read.positionCount();
    const book = [];
    for (let id = 1n; id <= count; id++) book.push(await s.read.positions.read.getPosition([id]));
    const payouts = [];
    for (let id = 1n; id <= (await s.read.redemptions.read.payoutCount()); id++) {
      const r = await s.read.redemptions.read.getPayout([id]);
      payouts.push([r.owner, r.zatDue]);
    }
    return {
      book,
      payouts,
      pending: await s.pendingLeaves(),
      unminted: await s.read.registry.read.unmintedZat(),
      held: await s.read.registry.read.totalCollateralZat(),
      spent: await Promise.all(items.map((i) => s.read.minter.read.isSpent([i.proved.spend.nullifierHash]))),
    };
  }

  beforeAll(async () => {
    s = await deploySystem();
    for (const [zec, zsd] of [
      [4n, 100n],
      [5n, 120n],
    ] as const) {
      const m = await s.depositAndMint({ amountZat: zec * ZEC, mintAmount: zsd * ZSD, recipient: alice.address });
      const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: m.receipt.logs, eventName: "PositionOpened" });
      positions.push(opened!.args.positionId);
      closable = m.note;
    }
    const binding = { chainId: BigInt(s.chainId), minter: s.read.minter.address };
    // Two top-ups (one leaving change), two withdrawals (one leaving change), in a mixed order.
    const plans = [
      { amountZat: 3n * ZEC, floorZat: 2n * ZEC, positionId: positions[0]! },
      { amountZat: 2n * ZEC, floorZat: 2n * ZEC, positionId: 0n },
      { amountZat: 4n * ZEC + 9n, floorZat: ZEC, positionId: 0n },
      { amountZat: ZEC, floorZat: ZEC, positionId: positions[1]! },
    ];
    const notes: Note[] = plans.map(() => createNote());
    for (const [i, plan] of plans.entries()) await s.deposit(notes[i]!, plan.amountZat);
    for (const [i, plan] of plans.entries()) {
      const note = notes[i]!;
      const owner = positionOwner(note);
      const sealedAddress = plan.positionId === 0n ? s.sealed(SAPLING, owner) : "0x";
      const proved =
        plan.positionId === 0n
          ? await s.proveWithdraw({
              note,
              amountZat: plan.amountZat,
              collateralFloorZat: plan.floorZat,
              sealedAddress,
              owner,
            })
          : await s.proveSpend({
              note,
              amountZat: plan.amountZat,
              collateralFloorZat: plan.floorZat,
              binding: { ...binding, positionId: plan.positionId },
            });
      items.push({
        proved,
        positionId: plan.positionId,
        sealedAddress,
        owner: plan.positionId === 0n ? owner : zeroAddress,
      });
    }
  }, 120_000);
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  it("leaves the books exactly as the same spends sent one by one", async () => {
    const start = await s.snapshot();
    for (const item of items) await s.receipt(await single(item));
    const oneByOne = await state();
    await s.revert(start);

    // The return value names each item's payout, 0 for a top-up.
    const { result } = await s.publicClient.simulateContract({
      account: relayer.address,
      address: s.read.minter.address,
      abi: stableMinterAbi,
      functionName: "spendBatch",
      args: [items.map((i) => i.proved.proof), items.map(asCall)],
    });
    const next = (await s.read.redemptions.read.payoutCount()) + 1n;
    expect(result).toEqual([0n, next, next + 1n, 0n]);
    const receipt = await s.receipt(await send(items));
    expect(await state()).toEqual(oneByOne);
    // Each item's own events, in item order; the change of items 0 and 2 queued together after the last.
    // Across the minter and PositionManager, which logs each top-up.
    const ours = [s.read.minter.address, s.read.positions.address].map((a) => a.toLowerCase());
    const minter = parseEventLogs({
      abi: [...stableMinterAbi, ...positionManagerAbi],
      logs: receipt.logs.filter((log) => ours.includes(log.address.toLowerCase())),
    });
    expect(minter.map((e) => e.eventName)).toEqual([
      "PositionToppedUp",
      "NoteWithdrawn",
      "NoteWithdrawn",
      "PositionToppedUp",
    ]);
    const registry = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
    expect(registry.map((e) => e.eventName)).toEqual([
      "NoteSpent",
      "NoteSpent",
      "NoteSpent",
      "NoteSpent",
      "LeafQueued",
      "LeafQueued",
    ]);
    expect(await s.pendingLeaves()).toEqual([items[0]!.proved.spend.changeLeaf, items[2]!.proved.spend.changeLeaf]);
    const requested = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    expect(requested.map((e) => [e.args.owner, e.args.zatDue])).toEqual([
      [items[1]!.owner, 2n * ZEC],
      [items[2]!.owner, ZEC],
    ]);
    await checkBooks(s);
  });

  it("refuses a batch with one invalid proof wherever it stands, or an item changed after proving", async () => {
    const before = await state();
    for (let bad = 0; bad < items.length; bad++) {
      const proofs = items.map((item, i) =>
        i === bad ? items[(i + 1) % items.length]!.proved.proof : item.proved.proof,
      );
      await expectRevert(send(items, proofs), "InvalidProof");
    }
    // A top-up's proof names its position, a withdrawal's its address and owner: none moves.
    const other = (id: bigint) => (id === positions[0] ? positions[1]! : positions[0]!);
    const changed: Item[][] = [
      items.map((i, k) => (k === 0 ? { ...i, positionId: other(i.positionId) } : i)),
      items.map((i, k) => (k === 1 ? { ...i, owner: alice.address } : i)),
      items.map((i, k) => (k === 2 ? { ...i, sealedAddress: items[1]!.sealedAddress } : i)),
      // A withdrawal's proof sent as a top-up of a position.
      items.map((i, k) => (k === 1 ? { ...i, positionId: positions[0]!, sealedAddress: "0x" as Hex } : i)),
    ];
    for (const batch of changed) await expectRevert(send(batch), "InvalidProof");
    expect(await state()).toEqual(before);
  });

  it("refuses a replayed or reordered item, a top-up sent to another id, a zero owner and batches of the wrong size", async () => {
    await expectRevert(send([items[0]!, items[0]!]), "NullifierAlreadySpent", [items[0]!.proved.spend.nullifierHash]);
    await expectRevert(send(items.slice(0, 2), [items[1]!.proved.proof, items[0]!.proved.proof]), "InvalidProof");
    await expectRevert(send([{ ...items[1]!, owner: zeroAddress }]), "InvalidOwner", [zeroAddress]);
    // A top-up sent to another id fails its proof before any position is looked at.
    await expectRevert(send([items[0]!, { ...items[3]!, positionId: 99n }]), "InvalidProof");
    await expectRevert(send([]), "InvalidBatchSize", [0n, 32n]);
    const many = Array.from({ length: 33 }, () => items[0]!);
    await expectRevert(send(many), "InvalidBatchSize", [33n, 32n]);
    await expectRevert(send(items.slice(0, 2), [items[0]!.proved.proof]), "BatchLengthMismatch", [1n, 2n]);
    // A batch that went through, sent again; and one of its items sent alone, as a wallet might.
    await s.receipt(await send(items.slice(0, 2)));
    await expectRevert(send(items.slice(0, 2)), "NullifierAlreadySpent", [items[0]!.proved.spend.nullifierHash]);
    await expectRevert(single(items[1]!), "NullifierAlreadySpent", [items[1]!.proved.spend.nullifierHash]);
    await checkBooks(s);
  });

  it("refuses a batch that tops up a closed position, its proof valid", async () => {
    // Item 3 tops up the second position: repaid and closed by its owner's signature, into a note.
    const id = positions[1]!;
    await s.receipt(await s.as(alice).minter.write.repay([id, 120n * ZSD, 0n]));
    const owner = privateKeyToAccount(positionOwnerKey(closable!));
    const to = { sealedAddress: "0x" as Hex, noteCommitment: noteCommitment(createNote()) };
    const typed = closeTypedData(
      { chainId: s.chainId, verifyingContract: s.read.minter.address },
      {
        positionId: id,
        maxDebt: 0n,
        minZatOut: 0n,
        ...to,
        nonce: await s.read.minter.read.nonces([owner.address]),
        deadline: (await s.publicClient.getBlock()).timestamp + 3600n,
      },
    );
    const signature = await owner.signTypedData(typed);
    await s.receipt(await s.as(relayer).minter.write.closeWithSig([id, 0n, 0n, to, typed.message.deadline, signature]));
    const before = await state();
    await expectRevert(send([items[0]!, items[3]!]), "PositionNotOpen", [id, 3]);
    await expectRevert(single(items[3]!), "PositionNotOpen", [id, 3]);
    expect(await state()).toEqual(before);
    await checkBooks(s);
  });
});
