import { parseEventLogs, zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { positionManagerAbi, stableMinterAbi, stableTokenAbi } from "@zsd/sdk/abis";
import { createNote, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const { alice, bob, relayer, custody, pauser, carol, guardian } = accounts;

describe("StableMinter", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  it("mints mintAmount - fee to the recipient and fee to the relayer against a real proof", async () => {
    // 5 ZEC at $50 = $250 of collateral; at 150% it backs up to $166.66.
    const { receipt, request } = await s.depositAndMint({
      amountZat: 5n * ZEC,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(148n * ZSD);
    expect(await s.read.token.read.balanceOf([relayer.address])).toBe(2n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(150n * ZSD);
    expect(await s.read.minter.read.isSpent([request.nullifierHash])).toBe(true);

    const [minted] = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "Minted" });
    expect(minted!.args).toEqual({
      nullifierHash: request.nullifierHash,
      recipient: alice.address,
      relayer: relayer.address,
      mintAmount: 150n * ZSD,
      fee: 2n * ZSD,
      collateralFloorZat: 5n * ZEC,
      root: request.root,
    });
    // PositionManager opens the position before the minter mints and says so.
    const ours = [s.read.minter.address, s.read.positions.address].map((a) => a.toLowerCase());
    const events = parseEventLogs({
      abi: [...positionManagerAbi, ...stableMinterAbi],
      logs: receipt.logs.filter((log) => ours.includes(log.address.toLowerCase())),
    });
    expect(events.map((e) => [e.eventName, e.address.toLowerCase()])).toEqual([
      ["PositionOpened", ours[1]],
      ["Minted", ours[0]],
    ]);
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    expect(opened!.args).toEqual({
      positionId: 1n,
      owner: request.owner,
      collateralZat: 5n * ZEC,
      debt: 150n * ZSD,
    });
    const transfers = parseEventLogs({ abi: stableTokenAbi, logs: receipt.logs, eventName: "Transfer" });
    expect(transfers.map((t) => [t.args.from, t.args.to, t.args.value])).toEqual([
      [zeroAddress, alice.address, 148n * ZSD],
      [zeroAddress, relayer.address, 2n * ZSD],
    ]);
  });

  it("proves a floor below the deposit without revealing the amount, and mints without a relayer fee", async () => {
    const note = createNote();
    await s.deposit(note, 7n * ZEC + 12345n);
    const { proof, request } = await s.prove({
      note,
      amountZat: 7n * ZEC + 12345n,
      collateralFloorZat: 3n * ZEC,
      mintAmount: 100n * ZSD,
      recipient: bob.address,
    });
    await s.receipt(await s.as(bob).minter.write.mint([proof, request]));
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(100n * ZSD);
  });

  it("accepts a proof against an older root while later deposits arrive", async () => {
    const note = createNote();
    await s.deposit(note, 2n * ZEC);
    const proved = await s.prove({ note, amountZat: 2n * ZEC, mintAmount: 10n * ZSD, recipient: alice.address });
    await s.deposit(createNote(), 1n * ZEC);
    await s.deposit(createNote(), 1n * ZEC);
    await s.receipt(await s.as(alice).minter.write.mint([proved.proof, proved.request]));
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(10n * ZSD);
  });

  describe("reverts", () => {
    async function proved(overrides: { mintAmount?: bigint; floor?: bigint } = {}) {
      const note = createNote();
      await s.deposit(note, 4n * ZEC);
      return s.prove({
        note,
        amountZat: 4n * ZEC,
        collateralFloorZat: overrides.floor ?? 4n * ZEC,
        mintAmount: overrides.mintAmount ?? 100n * ZSD,
        recipient: alice.address,
        relayer: relayer.address,
        fee: 1n * ZSD,
      });
    }

    it("mints while the guardian has paused them; owners' repayments go on; only the guardian pauses and resumes", async () => {
      const { proof, request } = await proved();
      const opened = await s.depositAndMint({ amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
      const positionId = await s.read.positions.read.positionCount();
      await expectRevert(s.as(alice).minter.write.setMintsPaused([true, "x"]), "AccessControlUnauthorizedAccount");
      await expectRevert(s.as(pauser).minter.write.setMintsPaused([true, "x"]), "AccessControlUnauthorizedAccount");
      const paused = await s.receipt(
        await s.as(guardian).minter.write.setMintsPaused([true, "reserves short by 1 ZEC"]),
      );
      const [event] = parseEventLogs({ abi: stableMinterAbi, logs: paused.logs, eventName: "MintsPausedSet" });
      expect(event!.args).toEqual({ paused: true, guardian: guardian.address, reason: "reserves short by 1 ZEC" });
      expect(await s.read.minter.read.mintsPaused()).toBe(true);
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "MintsArePaused");
      await expectRevert(s.as(relayer).minter.write.mintBatch([[proof], [request]]), "MintsArePaused");
      // The owner's own operations are not new ZSD: a repayment goes through.
      expect(opened).toBeDefined();
      await s.receipt(await s.as(alice).minter.write.repay([positionId, 10n * ZSD, 0n]));
      await s.receipt(await s.as(guardian).minter.write.setMintsPaused([false, "reserves made good"]));
      await s.receipt(await s.as(relayer).minter.write.mint([proof, request]));
    });

    it("a reused nullifier", async () => {
      const { proof, request } = await proved();
      await s.receipt(await s.as(relayer).minter.write.mint([proof, request]));
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "NullifierAlreadySpent", [
        request.nullifierHash,
      ]);
    });

    it("an unknown root", async () => {
      const { proof, request } = await proved();
      await expectRevert(s.as(relayer).minter.write.mint([proof, { ...request, root: 12345n }]), "UnknownRoot", [
        12345n,
      ]);
    });

    it("a root replaced longer ago than maxRootAge", async () => {
      const { proof, request } = await proved();
      await s.deposit(createNote(), 1n * ZEC);
      const maxRootAge = await s.read.minter.read.maxRootAge();
      // Keep the price fresh so that only the root can fail.
      await s.increaseTime(Number(maxRootAge) + 1);
      await s.setPrice(50_00000000n);
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "RootExpired");
    });

    it("the same proof with a changed recipient, relayer, fee or mint amount", async () => {
      const { proof, request } = await proved();
      const minter = s.as(relayer).minter;
      await expectRevert(minter.write.mint([proof, { ...request, recipient: carol.address }]), "InvalidProof");
      await expectRevert(minter.write.mint([proof, { ...request, relayer: carol.address }]), "InvalidProof");
      await expectRevert(minter.write.mint([proof, { ...request, fee: 2n * ZSD }]), "InvalidProof");
      await expectRevert(minter.write.mint([proof, { ...request, mintAmount: 99n * ZSD }]), "InvalidProof");
      // Nor a changed floor, nor another nullifier.
      await expectRevert(minter.write.mint([proof, { ...request, collateralFloorZat: 3n * ZEC }]), "InvalidProof");
      await expectRevert(minter.write.mint([proof, { ...request, nullifierHash: 7n }]), "InvalidProof");
      // The untouched proof still works.
      await s.receipt(await minter.write.mint([proof, request]));
    });

    it("a proof made for another minter", async () => {
      const other = await deploySystem();
      const note = createNote();
      await s.deposit(note, 4n * ZEC);
      await other.deposit(note, 4n * ZEC);
      const forOther = await other.prove({
        note,
        amountZat: 4n * ZEC,
        mintAmount: 10n * ZSD,
        recipient: alice.address,
      });
      const here = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 10n * ZSD, recipient: alice.address });
      await expectRevert(s.as(alice).minter.write.mint([forOther.proof, here.request]), "InvalidProof");
    });

    it("a mint amount the floor does not cover at the current price", async () => {
      // 4 ZEC at $50 = $200 backs at most $133.33 at 150%.
      const { proof, request } = await proved({ mintAmount: 134n * ZSD });
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "InsufficientCollateralValue");

      // The same collateral covers $100 at $50 but not once ZEC falls to $30.
      const ok = await proved({ mintAmount: 100n * ZSD });
      await s.setPrice(30_00000000n);
      await expectRevert(s.as(relayer).minter.write.mint([ok.proof, ok.request]), "InsufficientCollateralValue");
    });

    it("a stale price on both feeds (frozen at the last good price)", async () => {
      const { proof, request } = await proved();
      const maxPriceAge = await s.read.priceFeed.read.maxPriceAge();
      await s.increaseTime(Number(maxPriceAge) + 1);
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "PriceFrozen", [50_00000000n]);
    });

    it("while paused, and again after unpause it works", async () => {
      const { proof, request } = await proved();
      await s.receipt(await s.as(pauser).minter.write.pause());
      await expectRevert(s.as(relayer).minter.write.mint([proof, request]), "EnforcedPause");
      await s.receipt(await s.as(pauser).minter.write.unpause());
      await s.receipt(await s.as(relayer).minter.write.mint([proof, request]));
    });

    it("malformed requests: zero amount, fee above amount, fee without relayer, no recipient", async () => {
      const { proof, request } = await proved();
      const minter = s.as(relayer).minter;
      await expectRevert(minter.write.mint([proof, { ...request, mintAmount: 0n }]), "InvalidMintAmount");
      await expectRevert(minter.write.mint([proof, { ...request, fee: request.mintAmount + 1n }]), "FeeExceedsAmount");
      await expectRevert(minter.write.mint([proof, { ...request, relayer: zeroAddress }]), "MissingRelayer");
      await expectRevert(minter.write.mint([proof, { ...request, recipient: zeroAddress }]), "InvalidRecipient");
    });

    it("deposits without the attestors' quorum, oracle and pause functions called without the role", async () => {
      await expectRevert(s.as(alice).registry.write.recordDeposits([[1n], ZEC, []]), "AttestorQuorumNotMet", [0n, 2n]);
      await expectRevert(s.as(custody).oracle.write.setPrice([1n]), "AccessControlUnauthorizedAccount");
      await expectRevert(s.as(alice).minter.write.pause(), "AccessControlUnauthorizedAccount");
      await expectRevert(s.as(alice).redemptions.write.pause(), "AccessControlUnauthorizedAccount");
      await s.receipt(await s.as(pauser).minter.write.pause());
      await expectRevert(s.as(alice).minter.write.unpause(), "AccessControlUnauthorizedAccount");
      await expectRevert(s.as(alice).token.write.mint([alice.address, 1n]), "AccessControlUnauthorizedAccount");
      await expectRevert(s.as(alice).registry.write.recordPayout([1n]), "AccessControlUnauthorizedAccount");
      await expectRevert(
        s.as(alice).positions.write.setMinCollateralRatio([20_000n]),
        "AccessControlUnauthorizedAccount",
      );
    });
  });

  it("binds with the same hash off-chain and on-chain", async () => {
    const { binding, raw } = await (async () => {
      const note = createNote();
      await s.deposit(note, ZEC);
      return s.prove({
        note,
        amountZat: ZEC,
        mintAmount: 5n * ZSD,
        recipient: alice.address,
        relayer: relayer.address,
        fee: 1n,
      });
    })();
    const onChain = await s.read.minter.read.mintBinding([
      binding.recipient,
      binding.relayer,
      binding.fee,
      binding.mintAmount,
      binding.owner,
    ]);
    expect(onChain).toBe(raw.publicSignals.bindingHash);
  });
});
