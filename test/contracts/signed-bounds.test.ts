// Every value-moving signature carries the bounds its signer accepts, so whoever
// carries it cannot send it at a worse moment: a later price, a redistribution
// onto the position, a redemption that overtook it. A breach reverts with its
// named error and moves nothing; the same signature still goes through once the
// state is back within its bounds.
import { type Address, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { positionManagerAbi } from "@zsd/sdk/abis";
import {
  type Destination,
  type LiquidationBounds,
  type Note,
  closeTypedData,
  createNote,
  liquidateTypedData,
  noteCommitment,
  positionOwnerKey,
  releaseProver,
  repayTypedData,
} from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { checkBooks } from "../helpers/books.ts";

const { alice, carol, relayer } = accounts;
const SAPLING = "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
const USD = 100_000_000n;
/** zatoshi × price (8 decimals) × 100 is a value in ZSD's 18 decimals. */
const ZAT_PRICE_TO_USD18 = 100n;
const BONUS_BPS = 500n;
const FEE_BPS = 50n;

describe("signed calls carry their signer's bounds", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  const domain = () => ({ chainId: s.chainId, verifyingContract: s.read.minter.address });
  const deadline = async () => (await s.publicClient.getBlock()).timestamp + 3600n;
  const price = (usd: bigint) => s.setPrice(usd * USD);
  const position = (id: bigint) => s.read.positions.read.getPosition([id]);
  const toAddress = (owner: Address): Destination => ({ sealedAddress: s.sealed(SAPLING, owner), noteCommitment: 0n });
  const toNote = (): Destination => ({ sealedAddress: "0x", noteCommitment: noteCommitment(createNote()) });
  const ownerOf = (note: Note) => privateKeyToAccount(positionOwnerKey(note));

  /** Opens a position of `zec` ZEC and `zsd` ZSD, minted to alice. */
  async function open(zec: bigint, zsd: bigint) {
    const { note, receipt } = await s.depositAndMint({ amountZat: zec, mintAmount: zsd, recipient: alice.address });
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    return { note, id: opened!.args.positionId! };
  }

  /** What a breach must leave as it was: the positions, the supply, the signer's ZSD and nonces, the payouts. */
  async function state(signer: Address, ids: bigint[]) {
    return {
      positions: await Promise.all(ids.map(position)),
      supply: await s.read.token.read.totalSupply(),
      balance: await s.read.token.read.balanceOf([signer]),
      minterNonce: await s.read.minter.read.nonces([signer]),
      redemptionsNonce: await s.read.redemptions.read.nonces([signer]),
      payouts: await s.read.redemptions.read.payoutCount(),
      unminted: await s.read.registry.read.unmintedZat(),
    };
  }

  /** The ZEC a liquidation takes at `usd`, as the position manager computes it. */
  const seizedAt = (collateralZat: bigint, debt: bigint, usd: bigint) => {
    const byDebt = (debt * (10_000n + BONUS_BPS)) / 10_000n / (usd * USD * ZAT_PRICE_TO_USD18);
    return byDebt < collateralZat ? byDebt : collateralZat;
  };

  async function signLiquidation(positionId: bigint, bounds: LiquidationBounds, to: Destination) {
    const typed = liquidateTypedData(domain(), {
      positionId,
      ...bounds,
      ...to,
      nonce: await s.read.minter.read.nonces([alice.address]),
      deadline: await deadline(),
    });
    const signature = await alice.signTypedData(typed);
    return () =>
      s
        .as(relayer)
        .minter.write.liquidateWithSig([positionId, alice.address, bounds, to, typed.message.deadline, signature]);
  }

  it("a signed liquidation held until the price fell reverts SeizedValueBelowMinimum, and goes through at its price", async () => {
    const target = await open(3n * ZEC, 83n * ZSD);
    const other = await open(20n * ZEC, 100n * ZSD);
    // At $30 the target (3 ZEC for 83 ZSD, 108%) is liquidatable: the keeper sees 2.905 ZEC worth $87.15.
    await price(30n);
    const seen = await position(target.id);
    const bounds = {
      maxDebt: seen.debt,
      minSeizedZat: seizedAt(seen.collateralZat, seen.debt, 30n),
      minSeizedValue: seen.debt,
    };
    const to = toAddress(alice.address);
    const send = await signLiquidation(target.id, bounds, to);
    // Held until $20: all 3 ZEC, more than seen, but worth $60 for $83 (the keeper lost $23).
    await price(20n);
    const before = await state(alice.address, [target.id, other.id]);
    await expectRevert(send(), "SeizedValueBelowMinimum", [3n * ZEC * 20n * USD * ZAT_PRICE_TO_USD18, 83n * ZSD]);
    expect(await state(alice.address, [target.id, other.id])).toEqual(before);
    // Back at $30 the same signature pays what the keeper saw.
    await price(30n);
    const receipt = await s.receipt(await send());
    const [event] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionLiquidated" });
    expect(event!.args).toMatchObject({ debt: 83n * ZSD, seizedZat: bounds.minSeizedZat });
    await checkBooks(s);
  });

  it("a signed liquidation sent after a redistribution onto its target reverts DebtAboveMaximum", async () => {
    const target = await open(3n * ZEC, 83n * ZSD);
    const other = await open(20n * ZEC, 100n * ZSD);
    const sunk = await open(2n * ZEC, 60n * ZSD);
    // At $28 the target is at 101% and the third under 100% (56 for 60).
    await price(28n);
    const seen = await position(target.id);
    const bounds = {
      maxDebt: seen.debt,
      minSeizedZat: seizedAt(seen.collateralZat, seen.debt, 28n),
      minSeizedValue: 0n,
    };
    const send = await signLiquidation(target.id, bounds, toNote());
    // The relayer first spreads the third over the others: the target now owes more than the keeper saw.
    await s.receipt(await s.as(carol).minter.write.redistribute([sunk.id, toNote()]));
    const grown = await position(target.id);
    expect(grown.debt).toBeGreaterThan(seen.debt);
    const before = await state(alice.address, [target.id, other.id]);
    await expectRevert(send(), "DebtAboveMaximum", [grown.debt, seen.debt]);
    expect(await state(alice.address, [target.id, other.id])).toEqual(before);
    await checkBooks(s);
  });

  it("a direct liquidation bounded at the ZEC it saw reverts ZatOutBelowMinimum after a redemption took from the target", async () => {
    const target = await open(3n * ZEC, 83n * ZSD);
    const other = await open(20n * ZEC, 100n * ZSD);
    await price(30n);
    const seen = await position(target.id);
    const bounds = {
      maxDebt: seen.debt,
      minSeizedZat: seizedAt(seen.collateralZat, seen.debt, 30n),
      minSeizedValue: 0n,
    };
    await s.receipt(await s.as(alice).redemptions.write.redeem([40n * ZSD, s.sealed(SAPLING, alice.address)]));
    const now = await position(target.id);
    expect(now.debt).toBeLessThan(seen.debt);
    const before = await state(alice.address, [target.id, other.id]);
    await expectRevert(s.as(alice).minter.write.liquidate([target.id, bounds, toNote()]), "ZatOutBelowMinimum", [
      seizedAt(now.collateralZat, now.debt, 30n),
      bounds.minSeizedZat,
    ]);
    expect(await state(alice.address, [target.id, other.id])).toEqual(before);
    // Bounded at what it reads now, it goes through.
    await s.receipt(
      await s
        .as(alice)
        .minter.write.liquidate([
          target.id,
          { maxDebt: now.debt, minSeizedZat: seizedAt(now.collateralZat, now.debt, 30n), minSeizedValue: now.debt },
          toNote(),
        ]),
    );
    await checkBooks(s);
  });

  describe("redeem permits", () => {
    async function permit(amount: bigint, minZatOut: bigint) {
      const sealed = s.sealed(SAPLING, alice.address);
      const sig = await s.signedRedeem(alice, amount, sealed, alice.address, minZatOut);
      return () =>
        s
          .as(relayer)
          .redemptions.write.redeemWithPermit([
            alice.address,
            amount,
            minZatOut,
            sealed,
            sig.deadline,
            sig.v,
            sig.r,
            sig.s,
          ]);
    }
    /** Par less the fee at `usd`, a zatoshi under for rounding: what a client signs. */
    const par = (amount: bigint, usd: bigint) =>
      (amount * (10_000n - FEE_BPS)) / 10_000n / (usd * USD * ZAT_PRICE_TO_USD18) - 1n;

    it("a permit signed at par meets ZatOutBelowMinimum while redemptions pay pro rata, and burns nothing", async () => {
      const only = await open(5n * ZEC, 150n * ZSD);
      // At $28 the one position is worth $140 for 150 ZSD: redemptions pay a share of its ZEC, under par.
      await price(28n);
      const send = await permit(40n * ZSD, par(40n * ZSD, 28n));
      const before = await state(alice.address, [only.id]);
      await expectRevert(send(), "ZatOutBelowMinimum");
      expect(await state(alice.address, [only.id])).toEqual(before);
      // What it saved the owner from: the same redemption without a bound pays 1.3333 ZEC, 6.2% under par.
      await s.receipt(await (await permit(40n * ZSD, 0n))());
      const paid = (await s.read.redemptions.read.getPayout([1n])).zatDue;
      expect(paid * 1000n).toBeLessThan(par(40n * ZSD, 28n) * 940n);
      await checkBooks(s);
    });

    it("a permit signed at the quote meets ZatOutBelowMinimum once the price rose", async () => {
      const only = await open(5n * ZEC, 150n * ZSD);
      const [quoted] = await s.read.redemptions.read.quote([40n * ZSD]);
      const send = await permit(40n * ZSD, quoted);
      await price(55n);
      const [now] = await s.read.redemptions.read.quote([40n * ZSD]);
      const before = await state(alice.address, [only.id]);
      await expectRevert(send(), "ZatOutBelowMinimum", [now, quoted]);
      expect(await state(alice.address, [only.id])).toEqual(before);
      await price(50n);
      await s.receipt(await send());
      expect((await s.read.redemptions.read.getPayout([1n])).zatDue).toBe(quoted);
    });
  });

  async function signRepay(positionId: bigint, maxAmount: bigint) {
    const typed = repayTypedData(domain(), {
      positionId,
      maxAmount,
      payer: alice.address,
      nonce: await s.read.minter.read.nonces([alice.address]),
      deadline: await deadline(),
    });
    const signature = await alice.signTypedData(typed);
    return () =>
      s
        .as(relayer)
        .minter.write.repayWithSig([positionId, maxAmount, alice.address, typed.message.deadline, signature, 0n]);
  }

  it("a signed repayment of the whole debt that a redemption overtook repays the smaller debt, never more", async () => {
    const mine = await open(5n * ZEC, 100n * ZSD);
    await open(20n * ZEC, 100n * ZSD);
    const send = await signRepay(mine.id, 100n * ZSD);
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, s.sealed(SAPLING, alice.address)]));
    const shrunk = (await position(mine.id)).debt;
    expect(shrunk).toBeLessThan(100n * ZSD);
    const balance = await s.read.token.read.balanceOf([alice.address]);
    const receipt = await s.receipt(await send());
    const [repaid] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionRepaid" });
    expect(repaid!.args).toMatchObject({ amount: shrunk, debtLeft: 0n });
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(balance - shrunk);
    await checkBooks(s);
  });

  it("a signed partial repayment burns exactly what it names when the debt shrank above it", async () => {
    const mine = await open(5n * ZEC, 100n * ZSD);
    await open(20n * ZEC, 100n * ZSD);
    const send = await signRepay(mine.id, 10n * ZSD);
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, s.sealed(SAPLING, alice.address)]));
    const shrunk = (await position(mine.id)).debt;
    await s.receipt(await send());
    expect((await position(mine.id)).debt).toBe(shrunk - 10n * ZSD);
    await checkBooks(s);
  });

  async function signClose(note: Note, positionId: bigint, bounds: { maxDebt: bigint; minZatOut: bigint }) {
    const owner = ownerOf(note);
    const to = toAddress(owner.address);
    const typed = closeTypedData(domain(), {
      positionId,
      ...bounds,
      ...to,
      nonce: await s.read.minter.read.nonces([owner.address]),
      deadline: await deadline(),
    });
    const signature = await owner.signTypedData(typed);
    return {
      owner: owner.address,
      send: () =>
        s
          .as(relayer)
          .minter.write.closeWithSig([
            positionId,
            bounds.maxDebt,
            bounds.minZatOut,
            to,
            typed.message.deadline,
            signature,
          ]),
    };
  }

  it("a signed close reverts DebtAboveMaximum after a redistribution onto the position", async () => {
    const mine = await open(10n * ZEC, 100n * ZSD);
    const other = await open(20n * ZEC, 100n * ZSD);
    const sunk = await open(2n * ZEC, 60n * ZSD);
    await price(28n);
    const seen = await position(mine.id);
    const close = await signClose(mine.note, mine.id, { maxDebt: seen.debt, minZatOut: seen.collateralZat });
    await s.receipt(await s.as(alice).token.write.transfer([close.owner, 150n * ZSD]));
    await s.receipt(await s.as(carol).minter.write.redistribute([sunk.id, toNote()]));
    const grown = await position(mine.id);
    const before = await state(close.owner, [mine.id, other.id]);
    await expectRevert(close.send(), "DebtAboveMaximum", [grown.debt, seen.debt]);
    expect(await state(close.owner, [mine.id, other.id])).toEqual(before);
    await checkBooks(s);
  });

  it("a signed close reverts ZatOutBelowMinimum after a redemption took from the position, and closes when within", async () => {
    const mine = await open(10n * ZEC, 100n * ZSD);
    const other = await open(20n * ZEC, 100n * ZSD);
    const seen = await position(mine.id);
    const close = await signClose(mine.note, mine.id, { maxDebt: seen.debt, minZatOut: seen.collateralZat });
    await s.receipt(await s.as(alice).token.write.transfer([close.owner, 100n * ZSD]));
    await s.receipt(await s.as(alice).redemptions.write.redeem([20n * ZSD, s.sealed(SAPLING, alice.address)]));
    const now = await position(mine.id);
    const before = await state(close.owner, [mine.id, other.id]);
    await expectRevert(close.send(), "ZatOutBelowMinimum", [now.collateralZat, seen.collateralZat]);
    expect(await state(close.owner, [mine.id, other.id])).toEqual(before);
    // Signed again at what the owner reads now, it closes.
    const again = await signClose(mine.note, mine.id, { maxDebt: now.debt, minZatOut: now.collateralZat });
    await s.receipt(await again.send());
    expect((await position(mine.id)).status).toBe(3);
    await checkBooks(s);
  });
});
