// Positions with real proofs on the local chain: change leaves, top-ups, note
// withdrawals, repay / withdraw / close (to a note or a Zcash address),
// liquidation, redemptions out of positions only, and a price path in which
// ZEC falls 60%. The accounting invariants are checked after every step.
import { type Address, type Hex, keccak256, maxUint256, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collateralRegistryAbi, positionManagerAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk/abis";
import {
  type Note,
  changeNote,
  createNote,
  depositLeaf,
  noteCommitment,
  noteSpend,
  positionOwner,
  positionOwnerKey,
  releaseProver,
  repayTypedData,
  closeTypedData,
  redirectTypedData,
  withdrawCollateralTypedData,
  type Destination,
} from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { checkBooks } from "../helpers/books.ts";

const { alice, bob, relayer, custody, carol, pauser } = accounts;
const SAPLING = "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
const OTHER = "ztestsapling1pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp";
const STATUS = { None: 0, Open: 1, Liquidated: 2, Closed: 3 };
const noAddress = (noteCommitment: bigint): Destination => ({ sealedAddress: "0x", noteCommitment });
/** A liquidation's bounds where a test is about something else: any debt, any ZEC. */
const UNBOUNDED = { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n };

describe("positions", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  const price = (usd: bigint) => s.setPrice(usd * 100_000_000n);
  const position = (id: bigint) => s.read.positions.read.getPosition([id]);
  const domain = () => ({ chainId: s.chainId, verifyingContract: s.read.minter.address });
  const deadline = async () => (await s.publicClient.getBlock()).timestamp + 3600n;

  /** Opens a position from `note` (deposited first unless `deposited`): floor and amount as given, ZSD to alice. */
  async function open(args: { note?: Note; amountZat: bigint; floorZat?: bigint; mint: bigint; deposited?: boolean }) {
    const note = args.note ?? createNote();
    if (!args.deposited) await s.deposit(note, args.amountZat);
    const proved = await s.prove({
      note,
      amountZat: args.amountZat,
      collateralFloorZat: args.floorZat ?? args.amountZat,
      mintAmount: args.mint,
      recipient: alice.address,
    });
    const receipt = await s.receipt(await s.as(relayer).minter.write.mint([proved.proof, proved.request]));
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    return { note, id: opened!.args.positionId, receipt, proved };
  }

  const invariants = () => checkBooks(s);
  /** A payout of `owner` to `address`, sealed to custody's key (one envelope per pair, so signatures match). */
  const toAddress = (address: string, owner: Address): Destination => ({
    sealedAddress: s.sealed(address, owner),
    noteCommitment: 0n,
  });

  const ownerOf = (note: Note) => privateKeyToAccount(positionOwnerKey(note));

  /** The owner's signed close, bounded by default at the position as read now (its debt, all its collateral). */
  async function signedClose(note: Note, id: bigint, to: Destination, bounds?: { maxDebt: bigint; minZatOut: bigint }) {
    const owner = ownerOf(note);
    const now = await position(id);
    const { maxDebt, minZatOut } = bounds ?? { maxDebt: now.debt, minZatOut: now.collateralZat };
    const typed = closeTypedData(domain(), {
      positionId: id,
      maxDebt,
      minZatOut,
      ...to,
      nonce: await s.read.minter.read.nonces([owner.address]),
      deadline: await deadline(),
    });
    return { maxDebt, minZatOut, deadline: typed.message.deadline, signature: await owner.signTypedData(typed) };
  }

  async function signedRedirect(
    owner: ReturnType<typeof ownerOf>,
    id: bigint,
    sealedAddress: Hex,
    noteCommitment: bigint,
  ): Promise<[bigint, `0x${string}`]> {
    const nonce = await s.read.redemptions.read.nonces([owner.address]);
    const until = await deadline();
    const signature = await owner.signTypedData(
      redirectTypedData(
        { chainId: s.chainId, verifyingContract: s.read.redemptions.address },
        { id, sealedAddress, noteCommitment, nonce, deadline: until },
      ),
    );
    return [until, signature];
  }

  it("opens a position for the owner the proof binds, and the note's rest mints again as change", async () => {
    const first = await open({ amountZat: 5n * ZEC, floorZat: 3n * ZEC, mint: 100n * ZSD });
    expect(await position(first.id)).toEqual({
      owner: positionOwner(first.note),
      status: STATUS.Open,
      collateralZat: 3n * ZEC,
      debt: 100n * ZSD,
    });
    const [change] = parseEventLogs({
      abi: collateralRegistryAbi,
      logs: first.receipt.logs,
      eventName: "LeafQueued",
    });
    // The change leaf is queued, its amount private; spendable once someone inserts it.
    expect(change!.args.leaf).toBe(first.proved.raw.publicSignals.changeLeaf);
    expect(await s.read.registry.read.unmintedZat()).toBe(2n * ZEC);
    await invariants();
    await expect(
      s.prove({ note: changeNote(first.note), amountZat: 2n * ZEC, mintAmount: 60n * ZSD, recipient: alice.address }),
    ).rejects.toThrow("not in the deposit tree");
    await s.insertPending();

    // The change note (derived from the first) is spent whole: no change leaf this time.
    const second = await open({ note: changeNote(first.note), amountZat: 2n * ZEC, mint: 60n * ZSD, deposited: true });
    expect(second.proved.raw.publicSignals.changeLeaf).toBe(0n);
    expect(parseEventLogs({ abi: collateralRegistryAbi, logs: second.receipt.logs, eventName: "LeafQueued" })).toEqual(
      [],
    );
    expect((await position(second.id)).owner).toBe(positionOwner(changeNote(first.note)));
    expect(await s.read.registry.read.unmintedZat()).toBe(0n);
    await invariants();
  });

  it("binds each proof to its action: a mint proof neither tops up, withdraws nor mints for another owner", async () => {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const minter = s.as(relayer).minter.write;
    await expectRevert(minter.mint([proved.proof, { ...proved.request, owner: bob.address }]), "InvalidProof");
    await expectRevert(minter.mint([proved.proof, { ...proved.request, changeLeaf: 1n }]), "InvalidProof");
    const spend = noteSpend(proved.raw.publicSignals);
    const existing = await open({ amountZat: 3n * ZEC, mint: 50n * ZSD });
    await expectRevert(minter.topUp([proved.proof, spend, existing.id, 0n]), "InvalidProof");
    const sapling = s.sealed(SAPLING, positionOwner(note));
    await expectRevert(minter.withdrawNote([proved.proof, spend, sapling, positionOwner(note)]), "InvalidProof");

    // A top-up proof names its position; a withdrawal proof its address.
    const binding = { chainId: BigInt(s.chainId), minter: s.read.minter.address };
    const topUp = await s.proveSpend({
      note,
      amountZat: 4n * ZEC,
      collateralFloorZat: ZEC,
      binding: { ...binding, positionId: existing.id },
    });
    // Sent to any other id, existing or not, the proof fails before any position is looked at.
    await expectRevert(minter.topUp([topUp.proof, topUp.spend, existing.id + 1n, 0n]), "InvalidProof");
    const other = await open({ amountZat: 3n * ZEC, mint: 50n * ZSD });
    await expectRevert(minter.topUp([topUp.proof, topUp.spend, other.id, 0n]), "InvalidProof");
    // A proof made for a position that is not open passes, and PositionManager refuses the top-up.
    const nowhere = await s.proveSpend({
      note,
      amountZat: 4n * ZEC,
      collateralFloorZat: ZEC,
      binding: { ...binding, positionId: other.id + 1n },
    });
    await expectRevert(minter.topUp([nowhere.proof, nowhere.spend, other.id + 1n, 0n]), "PositionNotOpen", [
      other.id + 1n,
      STATUS.None,
    ]);
    await expectRevert(minter.withdrawNote([topUp.proof, topUp.spend, sapling, positionOwner(note)]), "InvalidProof");
    const out = await s.proveWithdraw({
      note,
      amountZat: 4n * ZEC,
      collateralFloorZat: ZEC,
      sealedAddress: sapling,
      owner: positionOwner(note),
    });
    // The proof binds the envelope: another sealing of another address, or of the same one, is refused.
    const elsewhere = s.sealed(OTHER, positionOwner(note));
    await expectRevert(minter.withdrawNote([out.proof, out.spend, elsewhere, positionOwner(note)]), "InvalidProof");
    const resealed = s.seal(SAPLING, positionOwner(note));
    await expectRevert(minter.withdrawNote([out.proof, out.spend, resealed, positionOwner(note)]), "InvalidProof");
    // The payout's owner is bound too: a relayer cannot make itself the one who redirects it.
    await expectRevert(minter.withdrawNote([out.proof, out.spend, sapling, relayer.address]), "InvalidProof");
    // The right use works once.
    await s.receipt(await minter.topUp([topUp.proof, topUp.spend, existing.id, 0n]));
    expect((await position(existing.id)).collateralZat).toBe(4n * ZEC);
    await expectRevert(minter.topUp([topUp.proof, topUp.spend, existing.id, 0n]), "NullifierAlreadySpent");
    await invariants();
  });

  it("withdraws an unminted note to a Zcash address through the payout path, keeping the change", async () => {
    const note = createNote();
    await s.deposit(note, 2n * ZEC);
    const owner = positionOwner(note);
    const [sapling, other] = [s.sealed(SAPLING, owner), s.sealed(OTHER, owner)];
    const out = await s.proveWithdraw({
      note,
      amountZat: 2n * ZEC,
      collateralFloorZat: 15n * (ZEC / 10n),
      sealedAddress: sapling,
      owner,
    });
    const receipt = await s.receipt(await s.as(bob).minter.write.withdrawNote([out.proof, out.spend, sapling, owner]));
    const [payout] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    expect(payout!.args).toMatchObject({
      owner,
      amount: 0n,
      zatDue: 15n * (ZEC / 10n),
      sealedAddress: sapling,
      sealedAddressHash: keccak256(sapling),
    });
    expect(s.open(payout!.args.sealedAddress!, owner)).toBe(SAPLING);
    expect(await s.read.registry.read.unmintedZat()).toBe(ZEC / 2n);
    await invariants();
    // Custody cannot pay it: the ZEC is held for the note's owner, who sends it elsewhere.
    await s.receipt(await s.as(custody).redemptions.write.failPayout([payout!.args.id!, "unpayable_address"]));
    await invariants();
    await expectRevert(s.as(bob).redemptions.write.redirect([payout!.args.id!, other, 0n]), "NotPayoutOwner");
    const redirected = await s.receipt(
      await s
        .as(relayer)
        .redemptions.write.redirectWithSig([
          payout!.args.id!,
          other,
          0n,
          ...(await signedRedirect(ownerOf(note), payout!.args.id!, other, 0n)),
        ]),
    );
    const [again] = parseEventLogs({ abi: redemptionsAbi, logs: redirected.logs, eventName: "PayoutRequested" });
    expect(again!.args).toMatchObject({ owner, amount: 0n, zatDue: 15n * (ZEC / 10n), sealedAddress: other });
    await invariants();
    await s.receipt(await s.as(custody).redemptions.write.completePayout([again!.args.id!, `0x${"ab".repeat(32)}`]));
    expect(await s.read.registry.read.totalCollateralZat()).toBe(ZEC / 2n);
    await invariants();
    // The change note is the rest of the deposit, and can leave the same way once inserted.
    await s.insertPending();
    const rest = await s.proveWithdraw({
      note: changeNote(note),
      amountZat: ZEC / 2n,
      collateralFloorZat: ZEC / 2n,
      sealedAddress: sapling,
      owner,
    });
    await s.receipt(await s.as(bob).minter.write.withdrawNote([rest.proof, rest.spend, sapling, owner]));
    expect(await s.read.registry.read.unmintedZat()).toBe(0n);
    await invariants();
  });

  it("repays from any payer, withdraws above the minimum ratio, and closes to a Zcash address that custody pays", async () => {
    const { note, id } = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const owner = ownerOf(note);
    const withdraw = async (amountZat: bigint, to: Destination) => {
      const typed = withdrawCollateralTypedData(domain(), {
        positionId: id,
        amountZat,
        ...to,
        nonce: await s.read.minter.read.nonces([owner.address]),
        deadline: await deadline(),
      });
      const signature = await owner.signTypedData(typed);
      return s
        .as(relayer)
        .minter.write.withdrawCollateralWithSig([id, amountZat, to, typed.message.deadline, signature, 0n]);
    };
    // 150% of $100 at $50/ZEC is 3 ZEC: 2.5 ZEC out would leave 2.5.
    const sapling = toAddress(SAPLING, owner.address);
    await expectRevert(withdraw(5n * (ZEC / 2n), sapling), "PositionUndercollateralized");
    // Only the owner withdraws.
    await expectRevert(s.as(alice).minter.write.withdrawCollateral([id, ZEC, sapling, 0n]), "NotPositionOwner");
    await s.receipt(await withdraw(ZEC, sapling));
    expect((await position(id)).collateralZat).toBe(4n * ZEC);
    await invariants();

    // Alice (holding the ZSD) repays 40 by signature, through the relay.
    const typed = repayTypedData(domain(), {
      positionId: id,
      maxAmount: 40n * ZSD,
      payer: alice.address,
      nonce: await s.read.minter.read.nonces([alice.address]),
      deadline: await deadline(),
    });
    const signature = await alice.signTypedData(typed);
    await s.receipt(
      await s
        .as(relayer)
        .minter.write.repayWithSig([id, 40n * ZSD, alice.address, typed.message.deadline, signature, 0n]),
    );
    // The same signature cannot be replayed (the nonce moved on).
    await expectRevert(
      s.as(relayer).minter.write.repayWithSig([id, 40n * ZSD, alice.address, typed.message.deadline, signature, 0n]),
      "InvalidSignature",
    );
    expect((await position(id)).debt).toBe(60n * ZSD);
    await invariants();

    // Close burns the rest from the owner: it needs the 60 ZSD.
    const close = await signedClose(note, id, sapling);
    await expectRevert(
      s
        .as(relayer)
        .minter.write.closeWithSig([id, close.maxDebt, close.minZatOut, sapling, close.deadline, close.signature]),
      "ERC20InsufficientBalance",
    );
    await s.receipt(await s.as(alice).token.write.transfer([owner.address, 60n * ZSD]));
    // A relay cannot send the ZEC elsewhere: the signature covers the sealed address's hash,
    // so neither another address nor another sealing of the same one passes.
    for (const swapped of [
      toAddress(OTHER, owner.address),
      { ...sapling, sealedAddress: s.seal(SAPLING, owner.address) },
    ]) {
      await expectRevert(
        s
          .as(relayer)
          .minter.write.closeWithSig([id, close.maxDebt, close.minZatOut, swapped, close.deadline, close.signature]),
        "InvalidSignature",
      );
    }
    const receipt = await s.receipt(
      await s
        .as(relayer)
        .minter.write.closeWithSig([id, close.maxDebt, close.minZatOut, sapling, close.deadline, close.signature]),
    );
    const [payout] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    expect(payout!.args).toMatchObject({ owner: owner.address, amount: 0n, zatDue: 4n * ZEC });
    expect(await position(id)).toMatchObject({ status: STATUS.Closed, collateralZat: 0n, debt: 0n });
    expect(await s.read.token.read.totalSupply()).toBe(0n);
    await invariants();
    await s.receipt(await s.as(custody).redemptions.write.completePayout([payout!.args.id!, `0x${"cd".repeat(32)}`]));
    // Both payouts left custody: nothing is held for anyone.
    expect(await s.read.registry.read.totalCollateralZat()).toBe(ZEC);
    await invariants();
  });

  it("closes into a new note that mints again", async () => {
    const { note, id } = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    await s.receipt(await s.as(alice).minter.write.repay([id, 100n * ZSD, 0n]));
    const next = createNote();
    const close = await signedClose(note, id, noAddress(noteCommitment(next)));
    const receipt = await s.receipt(
      await s
        .as(relayer)
        .minter.write.closeWithSig([
          id,
          close.maxDebt,
          close.minZatOut,
          noAddress(noteCommitment(next)),
          close.deadline,
          close.signature,
        ]),
    );
    const [queued] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "LeafQueued" });
    const [released] = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "CollateralReleased" });
    expect(queued!.args).toEqual({
      sequence: released!.args.noteSequence,
      leaf: depositLeaf(5n * ZEC, noteCommitment(next)),
      amountZat: 5n * ZEC,
    });
    expect(released!.args.payoutId).toBe(0n);
    expect(await s.read.registry.read.unmintedZat()).toBe(5n * ZEC);
    await invariants();
    // Queued, the note is not in the tree yet: anyone's insertion puts it there.
    await s.insertPending();
    const again = await open({ note: next, amountZat: 5n * ZEC, mint: 120n * ZSD, deposited: true });
    expect(await position(again.id)).toMatchObject({ status: STATUS.Open, collateralZat: 5n * ZEC, debt: 120n * ZSD });
    await invariants();
  });

  it("liquidates under the liquidation ratio only, and the owner claims the surplus", async () => {
    const risky = await open({ amountZat: 5n * ZEC, mint: 150n * ZSD });
    const safe = await open({ amountZat: 10n * ZEC, mint: 100n * ZSD });
    await expectRevert(
      s.as(alice).minter.write.liquidate([risky.id, UNBOUNDED, toAddress(SAPLING, alice.address)]),
      "PositionNotLiquidatable",
    );
    // At $35, 5 ZEC is $175 for $150 of debt: 116.7%, under 120%.
    await price(35n);
    await expectRevert(
      s.as(alice).minter.write.liquidate([safe.id, UNBOUNDED, toAddress(SAPLING, alice.address)]),
      "PositionNotLiquidatable",
    );
    // Bounded at what the liquidator reads: $150 of debt, 4.5 ZEC (below) taken.
    const receipt = await s.receipt(
      await s
        .as(alice)
        .minter.write.liquidate([
          risky.id,
          { maxDebt: 150n * ZSD, minSeizedZat: 45n * (ZEC / 10n), minSeizedValue: 150n * ZSD },
          toAddress(SAPLING, alice.address),
        ]),
    );
    const [event] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionLiquidated" });
    // $150 + 5% = $157.50 at $35 = 4.5 ZEC; 0.5 ZEC stays the owner's.
    expect(event!.args).toMatchObject({ debt: 150n * ZSD, seizedZat: 45n * (ZEC / 10n), surplusZat: ZEC / 2n });
    expect(await position(risky.id)).toMatchObject({ status: STATUS.Liquidated, collateralZat: ZEC / 2n, debt: 0n });
    await invariants();
    const surplusTo = toAddress(SAPLING, ownerOf(risky.note).address);
    const close = await signedClose(risky.note, risky.id, surplusTo);
    await s.receipt(
      await s
        .as(relayer)
        .minter.write.closeWithSig([
          risky.id,
          close.maxDebt,
          close.minZatOut,
          surplusTo,
          close.deadline,
          close.signature,
        ]),
    );
    expect(await position(risky.id)).toMatchObject({ status: STATUS.Closed, collateralZat: 0n });
    await invariants();
  });

  it("while the minter is paused, nobody liquidates or redistributes: the owner, who cannot top up, can still repay and close", async () => {
    const risky = await open({ amountZat: 5n * ZEC, mint: 150n * ZSD });
    await open({ amountZat: 10n * ZEC, mint: 100n * ZSD });
    await price(35n);
    await s.receipt(await s.as(pauser).minter.write.pause());
    const to = toAddress(SAPLING, alice.address);
    await expectRevert(s.as(alice).minter.write.liquidate([risky.id, UNBOUNDED, to]), "EnforcedPause");
    await expectRevert(s.as(alice).minter.write.redistribute([risky.id, to]), "EnforcedPause");
    // The owner pays down: 5 ZEC at $35 for $100 is 175%, out of reach once the pause ends.
    await s.receipt(await s.as(alice).minter.write.repay([risky.id, 50n * ZSD, 0n]));
    await s.receipt(await s.as(pauser).minter.write.unpause());
    await expectRevert(s.as(alice).minter.write.liquidate([risky.id, UNBOUNDED, to]), "PositionNotLiquidatable");
    expect(await position(risky.id)).toMatchObject({ status: STATUS.Open, debt: 100n * ZSD });
    await invariants();
  });

  it("recovery mode: under the system floor, only mints at or above the floor", async () => {
    await open({ amountZat: 4n * ZEC, mint: 130n * ZSD }); // 153.8% at $50
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    await s.receipt(
      await s.as(carol).wallet.writeContract({
        account: timelock,
        address: s.read.positions.address,
        abi: positionManagerAbi,
        functionName: "setSystemFloorRatio",
        args: [20_000n],
      }),
    );
    // 160% would leave the system under 200%, and the mint itself is under it.
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 125n * ZSD, recipient: alice.address });
    await expectRevert(s.as(relayer).minter.write.mint([proved.proof, proved.request]), "SystemRatioTooLow");
    // A mint at 250% raises the system ratio: allowed.
    await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    await invariants();
  });

  it("redeems out of positions in proportion to their debt, never out of unminted notes", async () => {
    const a = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const b = await open({ amountZat: 10n * ZEC, mint: 100n * ZSD });
    await s.deposit(createNote(), 7n * ZEC);
    await s.receipt(await s.as(alice).redemptions.write.redeem([100n * ZSD, s.sealed(SAPLING, alice.address)]));
    // $100 at $50 = 2 ZEC less 0.5%: 1.99 ZEC, half from each (they owe the same).
    expect(await position(a.id)).toMatchObject({ debt: 50n * ZSD, collateralZat: 5n * ZEC - 99_500_000n });
    expect(await position(b.id)).toMatchObject({ debt: 50n * ZSD, collateralZat: 10n * ZEC - 99_500_000n });
    expect(await s.read.registry.read.unmintedZat()).toBe(7n * ZEC);
    await invariants();
  });

  it("carries each position through the redemptions since its own last change, and frees all once every ZSD is redeemed", async () => {
    const redeem = (zsd: bigint) =>
      s
        .as(alice)
        .redemptions.write.redeem([zsd * ZSD, s.sealed(SAPLING, alice.address)])
        .then(s.receipt);
    const zat = (zec: string) => BigInt(Math.round(Number(zec) * 1e8));
    const a = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const b = await open({ amountZat: 10n * ZEC, mint: 100n * ZSD });
    // $50 at $50 less 0.5%: 0.995 ZEC, half from each; both owe 75.
    await redeem(50n);
    // b changes between redemptions, so it and a apply different parts of the map.
    await s.receipt(await s.as(alice).minter.write.repay([b.id, 25n * ZSD, 0n]));
    expect(await position(b.id)).toMatchObject({ debt: 50n * ZSD, collateralZat: zat("9.5025") });
    await invariants();
    // $25 less the fee is 0.4975 ZEC over 125 of debt: a (75) gives 0.2985, b (50) 0.199; debts fall by a fifth.
    await redeem(25n);
    expect(await position(a.id)).toMatchObject({ debt: 60n * ZSD, collateralZat: zat("4.204") });
    expect(await position(b.id)).toMatchObject({ debt: 40n * ZSD, collateralZat: zat("9.3035") });
    await invariants();

    // The last 100 ZSD: 1.99 ZEC, 60% from a and 40% from b. No debt is left, so nothing backs any:
    // the rest is the owners' (free collateral), and redemptions start afresh.
    await redeem(100n);
    expect(await position(a.id)).toMatchObject({ status: STATUS.Open, debt: 0n, collateralZat: zat("3.01") });
    expect(await position(b.id)).toMatchObject({ status: STATUS.Open, debt: 0n, collateralZat: zat("8.5075") });
    expect(await s.read.positions.read.backingCollateralZat()).toBe(0n);
    expect(await s.read.positions.read.freeCollateralZat()).toBe(zat("11.5175"));
    await invariants();

    // A position opened now carries all of the next redemption; the freed ones keep theirs.
    const c = await open({ amountZat: 4n * ZEC, mint: 100n * ZSD });
    await redeem(50n);
    expect(await position(c.id)).toMatchObject({ debt: 50n * ZSD, collateralZat: zat("3.005") });
    expect(await position(a.id)).toMatchObject({ debt: 0n, collateralZat: zat("3.01") });
    await invariants();
    const next = createNote();
    const close = await signedClose(a.note, a.id, noAddress(noteCommitment(next)));
    const receipt = await s.receipt(
      await s
        .as(relayer)
        .minter.write.closeWithSig([
          a.id,
          close.maxDebt,
          close.minZatOut,
          noAddress(noteCommitment(next)),
          close.deadline,
          close.signature,
        ]),
    );
    const [queued] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "LeafQueued" });
    expect(queued!.args.amountZat).toBe(zat("3.01"));
    await invariants();
  });

  it("ZEC falls 60% in steps: liquidations in order, par then pro-rata redemptions, unminted ZEC untouched", async () => {
    // Ratios at $50: 153.8%, 166.7%, 234.4%, 234.4%; the last two are 121.9% at $26 and 93.75% at $20.
    const opened = [];
    for (const [zec, zsd] of [
      [4n, 130n],
      [5n, 150n],
      [6n, 128n],
      [3n, 64n],
    ] as const) {
      opened.push(await open({ amountZat: zec * ZEC, mint: zsd * ZSD }));
    }
    const unminted = createNote();
    await s.deposit(unminted, 8n * ZEC);
    const liquidated: bigint[] = [];
    const rates: { usd: bigint; solvent: boolean; zatPerZsd: bigint }[] = [];
    const redeemed = ZSD;

    for (const usd of [50n, 42n, 34n, 26n, 20n]) {
      await price(usd);
      const liquidationRatio = await s.read.positions.read.liquidationRatioBps();
      // The keeper: positions under the liquidation ratio, riskiest first, while taking them pays.
      const open_ = [];
      for (const { id } of opened) {
        const p = await position(id);
        if (p.status !== STATUS.Open) continue;
        const value = p.collateralZat * usd * 100_000_000n * 100n;
        open_.push({ id, value, debt: p.debt, ratio: (value * 10_000n) / p.debt });
      }
      open_.sort((x, y) => (x.ratio < y.ratio ? -1 : 1));
      for (const p of open_) {
        if (p.ratio >= liquidationRatio || p.value < p.debt) continue;
        await s.receipt(await s.as(alice).minter.write.liquidate([p.id, UNBOUNDED, toAddress(SAPLING, alice.address)]));
        liquidated.push(p.id);
        await invariants();
      }

      const [backing, debt] = [
        await s.read.positions.read.backingCollateralZat(),
        await s.read.positions.read.totalDebt(),
      ];
      const solvent = backing * usd * 100_000_000n * 100n >= debt;
      for (let i = 0; i < 2; i++) {
        const r = await s.receipt(
          await s.as(alice).redemptions.write.redeem([redeemed, s.sealed(SAPLING, alice.address)]),
        );
        const [event] = parseEventLogs({ abi: redemptionsAbi, logs: r.logs, eventName: "PayoutRequested" });
        const gross = event!.args.zatDue! + event!.args.feeZat!;
        rates.push({ usd, solvent, zatPerZsd: gross });
        await invariants();
      }
      // ZEC nobody minted against is never a redeemer's.
      expect(await s.read.registry.read.unmintedZat()).toBe(8n * ZEC);
    }

    // The two riskiest went, riskiest first, once ZEC reached $34; the others, under water at $20, stayed open.
    expect(liquidated).toEqual([opened[0]!.id, opened[1]!.id]);
    for (const { usd, solvent, zatPerZsd } of rates) {
      if (solvent) {
        // Par: $1 at the oracle price.
        expect(zatPerZsd).toBe(redeemed / (usd * 100_000_000n * 100n));
      } else {
        // Pro rata: less than par, and the same for each redeemer at that price.
        expect(zatPerZsd).toBeLessThan(redeemed / (usd * 100_000_000n * 100n));
      }
    }
    const last = rates.filter((r) => r.usd === 20n);
    expect(last.every((r) => !r.solvent)).toBe(true);
    expect(rates.filter((r) => r.usd > 20n).every((r) => r.solvent)).toBe(true);
    // Per ZSD, both pro-rata redeemers got the same share: no fee is kept while insolvent, so an
    // earlier redemption leaves the later ones neither more nor less (rounding: one zatoshi).
    const [x, y] = [last[0]!.zatPerZsd, last[1]!.zatPerZsd];
    expect(y - x <= 1n && x - y <= 1n).toBe(true);

    // The unminted depositor takes all 8 ZEC out.
    const owner = positionOwner(unminted);
    const sealedAddress = s.sealed(SAPLING, owner);
    const out = await s.proveWithdraw({
      note: unminted,
      amountZat: 8n * ZEC,
      collateralFloorZat: 8n * ZEC,
      sealedAddress,
      owner,
    });
    await s.receipt(await s.as(bob).minter.write.withdrawNote([out.proof, out.spend, sealedAddress, owner]));
    expect(await s.read.registry.read.unmintedZat()).toBe(0n);
    await invariants();
  });

  it("changes positions only for the minter, and redeems from them only for Redemptions", async () => {
    const { note, id } = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const owner = ownerOf(note).address;
    const before = await position(id);
    const [minter, redemptions] = [s.read.minter.address, s.read.redemptions.address];
    const pm = { address: s.read.positions.address, abi: positionManagerAbi } as const;
    const sim = s.publicClient.simulateContract;
    const changes = [
      (account: Address) =>
        sim({ ...pm, account, functionName: "open", args: [alice.address, 5n * ZEC, 100n * ZSD, 0n] }),
      (account: Address) => sim({ ...pm, account, functionName: "topUp", args: [id, ZEC, 1n, 0n] }),
      (account: Address) => sim({ ...pm, account, functionName: "repay", args: [id, ZSD, alice.address, 0n] }),
      (account: Address) => sim({ ...pm, account, functionName: "withdraw", args: [id, ZEC, owner, 0n] }),
      (account: Address) => sim({ ...pm, account, functionName: "close", args: [id, owner] }),
      (account: Address) => sim({ ...pm, account, functionName: "liquidate", args: [id, alice.address] }),
      (account: Address) => sim({ ...pm, account, functionName: "redistribute", args: [id, alice.address] }),
    ];
    // Each door has one caller: not a holder, nor the owner, nor the other contract.
    for (const change of changes) {
      for (const caller of [alice.address, owner, redemptions]) {
        await expectRevert(change(caller), "CallerNotOperator", [caller, minter]);
      }
    }
    for (const caller of [alice.address, minter]) {
      await expectRevert(
        sim({ ...pm, account: caller, functionName: "redeem", args: [ZSD, 0n] }),
        "CallerNotOperator",
        [caller, redemptions],
      );
    }
    // Sent, not only simulated: a position out of nothing, and a redemption that burns no ZSD.
    await expectRevert(s.as(alice).positions.write.open([alice.address, 0n, 100n * ZSD, 0n]), "CallerNotOperator", [
      alice.address,
      minter,
    ]);
    await expectRevert(s.as(alice).positions.write.redeem([50n * ZSD, 0n]), "CallerNotOperator", [
      alice.address,
      redemptions,
    ]);
    expect(await s.read.positions.read.positionCount()).toBe(id);
    expect(await position(id)).toEqual(before);
    await invariants();
  });

  it("refuses an expired or another signer's repayWithSig with the signed calls' errors", async () => {
    const { id } = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const sign = async (signer: typeof alice | typeof bob, until: bigint) =>
      signer.signTypedData(
        repayTypedData(domain(), {
          positionId: id,
          maxAmount: 10n * ZSD,
          payer: alice.address,
          nonce: await s.read.minter.read.nonces([alice.address]),
          deadline: until,
        }),
      );
    const repay = (until: bigint, signature: Hex) =>
      s.as(relayer).minter.write.repayWithSig([id, 10n * ZSD, alice.address, until, signature, 0n]);
    const past = (await s.publicClient.getBlock()).timestamp - 1n;
    await expectRevert(repay(past, await sign(alice, past)), "SignatureExpired", [past]);
    const until = await deadline();
    await expectRevert(repay(until, await sign(bob, until)), "InvalidSignature", [alice.address]);
    // Neither used the payer's nonce nor moved the debt: the payer's own signature still goes through.
    expect(await s.read.minter.read.nonces([alice.address])).toBe(0n);
    expect((await position(id)).debt).toBe(100n * ZSD);
    await s.receipt(await repay(until, await sign(alice, until)));
    expect((await position(id)).debt).toBe(90n * ZSD);
    await invariants();
  });

  it("only the redemptions contract draws on positions, and signatures expire", async () => {
    await expectRevert(s.as(alice).positions.write.redeem([1n, 0n]), "CallerNotOperator", [
      alice.address,
      s.read.redemptions.address,
    ]);
    const { note, id } = await open({ amountZat: 5n * ZEC, mint: 100n * ZSD });
    const owner = ownerOf(note);
    const past = (await s.publicClient.getBlock()).timestamp - 1n;
    const to = toAddress(SAPLING, owner.address);
    const bounds = { maxDebt: 100n * ZSD, minZatOut: 5n * ZEC };
    const typed = closeTypedData(domain(), { positionId: id, ...bounds, ...to, nonce: 0n, deadline: past });
    await expectRevert(
      s.as(relayer).minter.write.closeWithSig([id, 100n * ZSD, 5n * ZEC, to, past, await owner.signTypedData(typed)]),
      "SignatureExpired",
      [past],
    );
    // A failed redemption goes back to no position: its ZEC is held for the redeemer.
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, s.sealed(SAPLING, alice.address)]));
    await invariants();
    const after = await position(id);
    await s.receipt(await s.as(custody).redemptions.write.failPayout([1n, "address refused"]));
    expect(await position(id)).toEqual(after);
    expect(after.debt).toBe(50n * ZSD);
    await invariants();
  });
});
