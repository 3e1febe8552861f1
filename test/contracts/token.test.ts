import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { releaseProver } from "@zsd/sdk/notes";
import { signPermit } from "@zsd/testkit";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const { alice, bob, carol, relayer } = accounts;

describe("StableToken (ERC-20, EIP-2612)", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  async function permitArgs(value: bigint, deadlineOffset = 3600n, signer = alice) {
    const nonce = await s.read.token.read.nonces([alice.address]);
    const deadline = (await s.publicClient.getBlock()).timestamp + deadlineOffset;
    const sig = await signPermit(
      signer,
      { name: "Shielded Dollar", chainId: s.chainId, verifyingContract: s.read.token.address },
      { owner: alice.address, spender: bob.address, value, nonce, deadline },
    );
    return [alice.address, bob.address, value, deadline, sig.v, sig.r, sig.s] as const;
  }

  it("has the deploy-time name, symbol and 18 decimals", async () => {
    expect(await s.read.token.read.name()).toBe("Shielded Dollar");
    expect(await s.read.token.read.symbol()).toBe("ZSD");
    expect(await s.read.token.read.decimals()).toBe(18);
  });

  it("transfers, and refuses more than the balance", async () => {
    await s.receipt(await s.as(alice).token.write.transfer([bob.address, 30n * ZSD]));
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(70n * ZSD);
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(30n * ZSD);
    await expectRevert(s.as(bob).token.write.transfer([carol.address, 31n * ZSD]), "ERC20InsufficientBalance", [
      bob.address,
      30n * ZSD,
      31n * ZSD,
    ]);
  });

  it("spends allowances with transferFrom, and refuses beyond them", async () => {
    await s.receipt(await s.as(alice).token.write.approve([bob.address, 10n * ZSD]));
    await s.receipt(await s.as(bob).token.write.transferFrom([alice.address, carol.address, 4n * ZSD]));
    expect(await s.read.token.read.allowance([alice.address, bob.address])).toBe(6n * ZSD);
    expect(await s.read.token.read.balanceOf([carol.address])).toBe(4n * ZSD);
    await expectRevert(
      s.as(bob).token.write.transferFrom([alice.address, carol.address, 7n * ZSD]),
      "ERC20InsufficientAllowance",
    );
  });

  it("lets a holder burn their own tokens", async () => {
    await s.receipt(await s.as(alice).token.write.burn([5n * ZSD]));
    expect(await s.read.token.read.totalSupply()).toBe(95n * ZSD);
  });

  it("sets an allowance from a permit signature, once", async () => {
    const args = await permitArgs(25n * ZSD);
    await s.receipt(await s.as(relayer).token.write.permit(args));
    expect(await s.read.token.read.allowance([alice.address, bob.address])).toBe(25n * ZSD);
    expect(await s.read.token.read.nonces([alice.address])).toBe(1n);
    // Replaying the same signature recovers another signer, since the nonce moved.
    await expectRevert(s.as(relayer).token.write.permit(args), "ERC2612InvalidSigner");
  });

  it("refuses an expired permit and one signed by someone else", async () => {
    await expectRevert(s.as(relayer).token.write.permit(await permitArgs(1n, 0n - 1n)), "ERC2612ExpiredSignature");
    await expectRevert(s.as(relayer).token.write.permit(await permitArgs(1n, 3600n, carol)), "ERC2612InvalidSigner");
    const args = await permitArgs(1n);
    await expectRevert(
      s.as(relayer).token.write.permit([args[0], args[1], 2n, args[3], args[4], args[5], args[6]]),
      "ERC2612InvalidSigner",
    );
  });

  it("mints only through the minter role and burns for redemptions only through the redeemer role", async () => {
    await expectRevert(s.as(alice).token.write.mint([alice.address, 1n]), "AccessControlUnauthorizedAccount");
    await expectRevert(
      s.as(alice).token.write.burnForRedemption([bob.address, 1n]),
      "AccessControlUnauthorizedAccount",
    );
  });
});
