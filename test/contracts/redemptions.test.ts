import { type Hex, keccak256, parseEventLogs } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { redemptionsAbi } from "@zsd/sdk/abis";
import { usdValueOfZat } from "@zsd/sdk/units";
import { releaseProver } from "@zsd/sdk/notes";
import { redirectTypedData } from "@zsd/sdk";
import {
  type System,
  ZEC,
  ZSD,
  accounts,
  deploySystem,
  expectRevert,
  signRedeem,
  snapshots,
} from "../helpers/fixtures.ts";

const { alice, bob, relayer, custody, pauser } = accounts;
const SAPLING = "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
const OTHER = "ztestsapling1pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp";
const STATUS = { None: 0, Requested: 1, Completed: 2, Failed: 3, Redirected: 4 };

describe("Redemptions", () => {
  let s: System;
  // Alice's addresses sealed to custody's key for her payouts (the contract
  // addresses, hence the associated data, survive the snapshots).
  let sapling: Hex;
  let other: Hex;
  beforeAll(async () => {
    s = await deploySystem();
    sapling = s.seal(SAPLING, alice.address);
    other = s.seal(OTHER, alice.address);
    // Alice holds 148 ZSD against a 5 ZEC deposit (collateral total: 5 ZEC).
    await s.depositAndMint({
      amountZat: 5n * ZEC,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  async function deadline(offset = 3600n) {
    const block = await s.publicClient.getBlock();
    return block.timestamp + offset;
  }

  async function permit(
    amount: bigint,
    sealedAddress = sapling,
    signer = alice,
    owner = alice.address,
    minZatOut = 0n,
  ) {
    const sig = await s.signedRedeem(signer, amount, sealedAddress, owner, minZatOut);
    return [owner, amount, minZatOut, sealedAddress, sig.deadline, sig.v, sig.r, sig.s] as const;
  }

  it("redeem burns the tokens and records the ZEC due at the oracle price less the fee", async () => {
    const receipt = await s.receipt(await s.as(alice).redemptions.write.redeem([100n * ZSD, sapling]));
    // $100 at $50/ZEC = 2 ZEC; 0.5% fee = 0.01 ZEC.
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    expect(event!.args).toEqual({
      id: 1n,
      owner: alice.address,
      amount: 100n * ZSD,
      zatDue: 199_000_000n,
      feeZat: 1_000_000n,
      price: 50_00000000n,
      sealedAddress: sapling,
      sealedAddressHash: keccak256(sapling),
    });
    // Custody reads the address; the chain shows only the envelope.
    expect(s.open(event!.args.sealedAddress, alice.address)).toBe(SAPLING);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(48n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(50n * ZSD);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(199_000_000n);
    expect(await s.read.redemptions.read.getPayout([1n])).toEqual({
      owner: alice.address,
      status: STATUS.Requested,
      zatDue: 199_000_000n,
      amount: 100n * ZSD,
    });
  });

  it("redeemWithPermit lets a relayer submit the owner's signed redemption", async () => {
    const args = await permit(40n * ZSD);
    await s.receipt(await s.as(relayer).redemptions.write.redeemWithPermit(args));
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(108n * ZSD);
    expect((await s.read.redemptions.read.getPayout([1n])).owner).toBe(alice.address);
    // The nonce is spent: the same signature cannot redeem twice.
    await expectRevert(s.as(relayer).redemptions.write.redeemWithPermit(args), "InvalidSignature");
  });

  it("redeemWithPermit refuses a changed address or amount, another signer, and an expired deadline", async () => {
    const args = await permit(40n * ZSD);
    const r = s.as(relayer).redemptions.write;
    await expectRevert(
      r.redeemWithPermit([
        args[0],
        args[1],
        args[2],
        s.seal("zs1attacker", alice.address),
        args[4],
        args[5],
        args[6],
        args[7],
      ]),
      "InvalidSignature",
    );
    await expectRevert(
      r.redeemWithPermit([args[0], 41n * ZSD, args[2], args[3], args[4], args[5], args[6], args[7]]),
      "InvalidSignature",
    );
    // A relay cannot lower the least ZEC the owner signed for.
    const bounded = await permit(40n * ZSD, sapling, alice, alice.address, ZEC / 2n);
    await expectRevert(
      r.redeemWithPermit([bounded[0], bounded[1], 0n, bounded[3], bounded[4], bounded[5], bounded[6], bounded[7]]),
      "InvalidSignature",
    );
    await expectRevert(r.redeemWithPermit(await permit(40n * ZSD, sapling, bob, alice.address)), "InvalidSignature", [
      alice.address,
    ]);
    const expired = await deadline(-1n);
    await expectRevert(
      r.redeemWithPermit([args[0], args[1], args[2], args[3], expired, args[5], args[6], args[7]]),
      "SignatureExpired",
      [expired],
    );
    // Signed by the owner over a deadline already past: expired, though the signature is the owner's.
    const late = await signRedeem(
      alice,
      { chainId: s.chainId, verifyingContract: s.read.redemptions.address },
      { owner: alice.address, amount: 40n * ZSD, minZatOut: 0n, sealedAddress: sapling, nonce: 0n, deadline: expired },
    );
    await expectRevert(
      r.redeemWithPermit([alice.address, 40n * ZSD, 0n, sapling, expired, late.v, late.r, late.s]),
      "SignatureExpired",
      [expired],
    );
    // None of them used the owner's nonce or burned a token.
    expect(await s.read.redemptions.read.nonces([alice.address])).toBe(0n);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(148n * ZSD);
    await s.receipt(await r.redeemWithPermit(args));
  });

  it("redirectWithSig refuses an expired signature and another signer's with the signed calls' errors", async () => {
    await s.receipt(await s.as(alice).redemptions.write.redeem([100n * ZSD, sapling]));
    await s.receipt(await s.as(custody).redemptions.write.failPayout([1n, "unpayable_address"]));
    const sign = async (signer: typeof alice, until: bigint) =>
      signer.signTypedData(
        redirectTypedData(
          { chainId: s.chainId, verifyingContract: s.read.redemptions.address },
          {
            id: 1n,
            sealedAddress: other,
            noteCommitment: 0n,
            nonce: await s.read.redemptions.read.nonces([alice.address]),
            deadline: until,
          },
        ),
      );
    const redirect = (until: bigint, signature: Hex) =>
      s.as(relayer).redemptions.write.redirectWithSig([1n, other, 0n, until, signature]);
    const past = await deadline(-1n);
    await expectRevert(redirect(past, await sign(alice, past)), "SignatureExpired", [past]);
    const until = await deadline();
    await expectRevert(redirect(until, await sign(bob, until)), "InvalidSignature", [alice.address]);
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(STATUS.Failed);
    expect(await s.read.redemptions.read.nonces([alice.address])).toBe(0n);
    // The owner's own signature, unexpired, moves the held ZEC.
    await s.receipt(await redirect(until, await sign(alice, until)));
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(STATUS.Redirected);
  });

  it("completion lowers total collateral by the ZEC paid", async () => {
    await s.receipt(await s.as(alice).redemptions.write.redeem([100n * ZSD, sapling]));
    const txid = `0x${"ab".repeat(32)}` as const;
    const receipt = await s.receipt(await s.as(custody).redemptions.write.completePayout([1n, txid]));
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutCompleted" });
    expect(event!.args).toEqual({ id: 1n, zcashTxId: txid, zatPaid: 199_000_000n });
    expect(await s.read.registry.read.totalCollateralZat()).toBe(5n * ZEC - 199_000_000n);
    expect(await s.read.registry.read.totalPaidOutZat()).toBe(199_000_000n);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(0n);
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(STATUS.Completed);
    await expectRevert(s.as(custody).redemptions.write.completePayout([1n, txid]), "PayoutNotPending");
    await expectRevert(s.as(custody).redemptions.write.failPayout([1n, "late"]), "PayoutNotPending");
  });

  it("failure holds the ZEC for the owner, who redirects it to another address or into a note", async () => {
    await s.receipt(await s.as(alice).redemptions.write.redeem([100n * ZSD, sapling]));
    const position = await s.read.positions.read.getPosition([1n]);
    const receipt = await s.receipt(await s.as(custody).redemptions.write.failPayout([1n, "address rejected"]));
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutFailed" });
    // 100 ZSD at $50 is 2 ZEC, less the 0.5% fee.
    expect(event!.args).toEqual({ id: 1n, owner: alice.address, zatHeld: 199_000_000n, reason: "address rejected" });
    // Nothing is minted back and no position gets anything back.
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(48n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(50n * ZSD);
    expect(await s.read.positions.read.getPosition([1n])).toEqual(position);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(5n * ZEC);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(199_000_000n);
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(STATUS.Failed);
    await expectRevert(
      s.as(custody).redemptions.write.completePayout([1n, `0x${"00".repeat(32)}`]),
      "PayoutNotPending",
    );
    // Only the owner redirects, to exactly one place.
    const r = s.as(alice).redemptions.write;
    await expectRevert(s.as(bob).redemptions.write.redirect([1n, other, 0n]), "NotPayoutOwner", [1n, bob.address]);
    await expectRevert(r.redirect([1n, "0x", 0n]), "InvalidRedirectDestination");
    await expectRevert(r.redirect([1n, other, 7n]), "InvalidRedirectDestination");
    // Into a note: the ZEC becomes an unminted note (it can back a new position or be withdrawn).
    const redirected = await s.receipt(await r.redirect([1n, "0x", 12345n]));
    const [moved] = parseEventLogs({ abi: redemptionsAbi, logs: redirected.logs, eventName: "PayoutRedirected" });
    expect(moved!.args).toMatchObject({ id: 1n, newId: 0n });
    expect(await s.read.registry.read.unmintedZat()).toBe(199_000_000n);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(0n);
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(STATUS.Redirected);
    await expectRevert(r.redirect([1n, other, 0n]), "PayoutNotFailed", [1n, STATUS.Redirected]);
    // To another address: a new payout that custody pays like any other.
    await s.receipt(await s.as(alice).redemptions.write.redeem([10n * ZSD, sapling]));
    await s.receipt(await s.as(custody).redemptions.write.failPayout([2n, "unpayable_address"]));
    const again = await s.receipt(await r.redirect([2n, other, 0n]));
    const [request] = parseEventLogs({ abi: redemptionsAbi, logs: again.logs, eventName: "PayoutRequested" });
    expect(request!.args).toMatchObject({
      id: 3n,
      owner: alice.address,
      amount: 0n,
      zatDue: 19_900_000n,
      sealedAddress: other,
      sealedAddressHash: keccak256(other),
    });
    await s.receipt(await s.as(custody).redemptions.write.completePayout([3n, `0x${"02".repeat(32)}`]));
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(0n);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(5n * ZEC - 19_900_000n);
  });

  it("only custody completes or fails a redemption", async () => {
    await s.receipt(await s.as(alice).redemptions.write.redeem([10n * ZSD, sapling]));
    await expectRevert(
      s.as(alice).redemptions.write.completePayout([1n, `0x${"01".repeat(32)}`]),
      "AccessControlUnauthorizedAccount",
    );
    await expectRevert(s.as(relayer).redemptions.write.failPayout([1n, "no"]), "AccessControlUnauthorizedAccount");
  });

  it("refuses bad requests: zero, dust, empty or oversized sealed address, more than the balance", async () => {
    const r = s.as(alice).redemptions.write;
    await expectRevert(r.redeem([0n, sapling]), "InvalidAmount");
    // Less than one zatoshi's worth at $50/ZEC.
    await expectRevert(r.redeem([usdValueOfZat(1n, 50_00000000n) - 1n, sapling]), "RedemptionTooSmall");
    await expectRevert(r.redeem([ZSD, "0x"]), "InvalidSealedAddress", [0n]);
    await expectRevert(r.redeem([ZSD, s.seal("z".repeat(513), alice.address)]), "InvalidSealedAddress", [578n]);
    await expectRevert(r.redeem([149n * ZSD, sapling]), "ERC20InsufficientBalance");
  });

  it("pays a pro-rata share, not the oracle price, when the positions are worth less than the supply", async () => {
    // At $20/ZEC the 5 ZEC backing 150 ZSD are worth $100: 148 ZSD at the price would be 7.4 ZEC.
    await s.setPrice(20_00000000n);
    // 90 of 150 ZSD is 3 ZEC of the 5, with no fee: every ZSD gets the same share of what there is.
    const redeem = async (amount: bigint) => {
      const receipt = await s.receipt(await s.as(alice).redemptions.write.redeem([amount, sapling]));
      const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
      return event!.args;
    };
    const first = await redeem(90n * ZSD);
    expect(first).toMatchObject({ zatDue: 300_000_000n, feeZat: 0n });
    // 20 of the 60 ZSD left is a third of the 2 ZEC left: the same rate, so splitting gains nothing.
    const second = await redeem(20n * ZSD);
    expect(second).toMatchObject({ zatDue: 66_666_666n, feeZat: 0n });
    expect(second.zatDue! * 90n).toBeLessThanOrEqual(first.zatDue! * 20n);
  });

  it("refuses a frozen price (both feeds stale) and a paused contract", async () => {
    await s.receipt(await s.as(pauser).redemptions.write.pause());
    await expectRevert(s.as(alice).redemptions.write.redeem([ZSD, sapling]), "EnforcedPause");
    await s.receipt(await s.as(pauser).redemptions.write.unpause());
    await s.increaseTime(Number(await s.read.priceFeed.read.maxPriceAge()) + 1);
    await expectRevert(s.as(alice).redemptions.write.redeem([ZSD, sapling]), "PriceFrozen");
  });
});
