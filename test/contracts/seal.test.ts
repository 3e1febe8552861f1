// Sealed withdraw addresses on-chain: Redemptions checks
// every payout's envelope (shape, version, key) and keeps custody's seal keys
// with rotation and a grace period; signatures and withdrawal proofs cover the
// ciphertext; the chain carries the envelope and its hash, never the address.
import { type Hex, bytesToHex, concat, keccak256, parseEventLogs, toHex } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { positionManagerAbi, redemptionsAbi } from "@zsd/sdk/abis";
import { releaseProver } from "@zsd/sdk/notes";
import { DEV_SEAL_KEY, sealKeyFromSecret } from "@zsd/sdk/seal";
import { redirectTypedData } from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const { alice, bob, relayer, custody, deployer } = accounts;
const SAPLING = "ztestsapling1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
const SECOND_KEY = sealKeyFromSecret(2, bytesToHex(crypto.getRandomValues(new Uint8Array(32))));
const UNKNOWN_KEY = sealKeyFromSecret(9, bytesToHex(crypto.getRandomValues(new Uint8Array(32))));
const WEEK = 7 * 24 * 3600;

describe("sealed withdraw addresses", () => {
  let s: System;
  let positionId: bigint;
  beforeAll(async () => {
    s = await deploySystem();
    // Alice owns a 10 ZEC position (ratio 500%) and holds its 100 ZSD.
    const minted = await s.depositAndMint({
      amountZat: 10n * ZEC,
      mintAmount: 100n * ZSD,
      recipient: alice.address,
      owner: alice.address,
    });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    positionId = opened!.args.positionId!;
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  /** Sends as the timelock (the admin of Redemptions). */
  async function asTimelock<T>(action: (account: Hex) => Promise<T>): Promise<T> {
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    try {
      return await action(timelock);
    } finally {
      await s.testClient.stopImpersonatingAccount({ address: timelock });
    }
  }
  const setSealKey = (keyId: number, publicKey: Hex) =>
    asTimelock((account) =>
      s.as(deployer).wallet.writeContract({
        account,
        address: s.read.redemptions.address,
        abi: redemptionsAbi,
        functionName: "setSealKey",
        args: [keyId, publicKey],
      }),
    );
  const setSealKeyGrace = (seconds: bigint) =>
    asTimelock((account) =>
      s.as(deployer).wallet.writeContract({
        account,
        address: s.read.redemptions.address,
        abi: redemptionsAbi,
        functionName: "setSealKeyGrace",
        args: [seconds],
      }),
    );

  /** The malformed envelopes and the error each payout request must revert with. */
  function malformed(owner: Hex) {
    const good = s.seal(SAPLING, owner);
    return [
      // An empty address seals to the 65 bytes of envelope alone.
      { sealed: s.seal("", owner), error: "InvalidSealedAddress", args: [65n] },
      { sealed: s.seal("z".repeat(513), owner), error: "InvalidSealedAddress", args: [578n] },
      { sealed: concat(["0x02", `0x${good.slice(4)}`]), error: "UnsupportedSealVersion", args: [2] },
      { sealed: s.seal(SAPLING, owner, UNKNOWN_KEY), error: "UnknownSealKey", args: [9] },
    ] as const;
  }

  it("deploys with the development key, current and unretired, and a week of grace", async () => {
    expect(await s.read.redemptions.read.currentSealKeyId()).toBe(1);
    expect(await s.read.redemptions.read.sealKey([1])).toEqual([DEV_SEAL_KEY.publicKey, 0n]);
    expect(await s.read.redemptions.read.sealKey([2])).toEqual([`0x${"00".repeat(32)}`, 0n]);
    expect(await s.read.redemptions.read.sealKeyGraceSeconds()).toBe(BigInt(WEEK));
    expect(s.deployment.sealKey).toEqual({ keyId: 1, publicKey: DEV_SEAL_KEY.publicKey });
    expect(await s.read.redemptions.read.SEALED_ADDRESS_MIN_LENGTH()).toBe(66n);
    expect(await s.read.redemptions.read.SEALED_ADDRESS_MAX_LENGTH()).toBe(577n);
  });

  it("refuses a too-short, too-long, wrong-version or unknown-key envelope on every payout request", async () => {
    const r = s.as(alice).redemptions.write;
    for (const { sealed, error, args } of malformed(alice.address)) {
      await expectRevert(r.redeem([ZSD, sealed]), error, args);
      const sig = await s.signedRedeem(alice, ZSD, sealed);
      await expectRevert(
        s
          .as(relayer)
          .redemptions.write.redeemWithPermit([alice.address, ZSD, 0n, sealed, sig.deadline, sig.v, sig.r, sig.s]),
        error,
        args,
      );
      // Released collateral is requested by the minter: Redemptions refuses it there too.
      await expectRevert(
        s
          .as(alice)
          .minter.write.withdrawCollateral([positionId, ZEC, { sealedAddress: sealed, noteCommitment: 0n }, 0n]),
        error,
        args,
      );
    }
    // A failed payout redirected to a malformed envelope.
    await s.receipt(await r.redeem([10n * ZSD, s.seal(SAPLING, alice.address)]));
    await s.receipt(await s.as(custody).redemptions.write.failPayout([1n, "unreadable_address"]));
    for (const { sealed, error, args } of malformed(alice.address)) {
      await expectRevert(r.redirect([1n, sealed, 0n]), error, args);
    }
    // An empty envelope is no address at all.
    await expectRevert(r.redeem([ZSD, "0x"]), "InvalidSealedAddress", [0n]);
    await expectRevert(
      s.as(alice).minter.write.withdrawCollateral([positionId, ZEC, { sealedAddress: "0x", noteCommitment: 0n }, 0n]),
      "InvalidDestination",
    );
    // The well-formed ones land.
    await s.receipt(await r.redirect([1n, s.seal(SAPLING, alice.address), 0n]));
    await s.receipt(
      await s
        .as(alice)
        .minter.write.withdrawCollateral([
          positionId,
          ZEC,
          { sealedAddress: s.seal(SAPLING, alice.address), noteCommitment: 0n },
          0n,
        ]),
    );
  });

  it("rotates keys: the previous key lands during the grace period and is refused after it", async () => {
    const underOld = s.seal(SAPLING, alice.address);
    const receipt = await s.receipt(await setSealKey(2, SECOND_KEY.publicKey));
    const block = await s.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const retiresAt = block.timestamp + BigInt(WEEK);
    const [set] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "SealKeySet" });
    expect(set!.args).toEqual({
      keyId: 2,
      publicKey: SECOND_KEY.publicKey,
      previousKeyId: 1,
      previousRetiresAt: retiresAt,
    });
    expect(await s.read.redemptions.read.currentSealKeyId()).toBe(2);
    expect(await s.read.redemptions.read.sealKey([1])).toEqual([DEV_SEAL_KEY.publicKey, retiresAt]);
    expect(await s.read.redemptions.read.sealKey([2])).toEqual([SECOND_KEY.publicKey, 0n]);

    // Signed just before the rotation, sent just after: it lands.
    const r = s.as(alice).redemptions.write;
    await s.receipt(await r.redeem([ZSD, underOld]));
    await s.receipt(await r.redeem([ZSD, s.seal(SAPLING, alice.address, SECOND_KEY)]));
    // The last second of grace still accepts it; from retiresAt on it is refused.
    await s.testClient.setNextBlockTimestamp({ timestamp: retiresAt - 2n });
    // One block: a fresh primary (the same price, no jump) is the price.
    await s.receipt(await s.as(accounts.oracleUpdater).oracle.write.setPrice([50_00000000n]));
    await s.testClient.setNextBlockTimestamp({ timestamp: retiresAt - 1n });
    await s.receipt(await r.redeem([ZSD, s.seal(SAPLING, alice.address)]));
    await s.testClient.setNextBlockTimestamp({ timestamp: retiresAt });
    await expectRevert(r.redeem([ZSD, s.seal(SAPLING, alice.address)]), "SealKeyRetired", [1, retiresAt]);
    await s.receipt(await r.redeem([ZSD, s.seal(SAPLING, alice.address, SECOND_KEY)]));

    // With no grace, a rotation retires the previous key at once.
    await s.receipt(await setSealKeyGrace(0n));
    const third = sealKeyFromSecret(3, bytesToHex(crypto.getRandomValues(new Uint8Array(32))));
    await s.receipt(await setSealKey(third.keyId, third.publicKey));
    await expectRevert(r.redeem([ZSD, s.seal(SAPLING, alice.address, SECOND_KEY)]), "SealKeyRetired");
    await s.receipt(await r.redeem([ZSD, s.seal(SAPLING, alice.address, third)]));
  });

  it("only the admin sets keys and the grace; a key id is used once, a zero key never; the grace is bounded", async () => {
    for (const account of [deployer, custody, alice]) {
      await expectRevert(
        s.as(account).redemptions.write.setSealKey([2, SECOND_KEY.publicKey]),
        "AccessControlUnauthorizedAccount",
      );
      await expectRevert(s.as(account).redemptions.write.setSealKeyGrace([60n]), "AccessControlUnauthorizedAccount");
    }
    await expectRevert(setSealKey(1, SECOND_KEY.publicKey), "SealKeyIdUsed", [1]);
    await expectRevert(setSealKey(2, `0x${"00".repeat(32)}`), "InvalidSealKey", [2, `0x${"00".repeat(32)}`]);
    await expectRevert(setSealKey(0, SECOND_KEY.publicKey), "InvalidSealKey", [0, SECOND_KEY.publicKey]);
    await s.receipt(await setSealKey(2, SECOND_KEY.publicKey));
    await expectRevert(setSealKey(2, SECOND_KEY.publicKey), "SealKeyIdUsed", [2]);
    // A retired id cannot come back either.
    await expectRevert(setSealKey(1, DEV_SEAL_KEY.publicKey), "SealKeyIdUsed", [1]);
    await expectRevert(setSealKeyGrace(BigInt(90 * 24 * 3600 + 1)), "InvalidParameter");
    const receipt = await s.receipt(await setSealKeyGrace(3600n));
    const [updated] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "ParameterUpdated" });
    expect(updated!.args).toEqual({
      name: toHex("sealKeyGraceSeconds", { size: 32 }),
      previousValue: BigInt(WEEK),
      newValue: 3600n,
    });
    expect(await s.read.redemptions.read.sealKeyGraceSeconds()).toBe(3600n);
  });

  it("a signature over one sealed address authorises no other, not even another sealing of the same address", async () => {
    const signed = s.seal(SAPLING, alice.address);
    const sig = await s.signedRedeem(alice, 10n * ZSD, signed);
    const permit = (sealed: Hex) =>
      s
        .as(relayer)
        .redemptions.write.redeemWithPermit([alice.address, 10n * ZSD, 0n, sealed, sig.deadline, sig.v, sig.r, sig.s]);
    await expectRevert(permit(s.seal(SAPLING, alice.address)), "InvalidSignature", [alice.address]);
    await expectRevert(permit(s.seal(SAPLING, bob.address)), "InvalidSignature", [alice.address]);
    await s.receipt(await permit(signed));

    // The same for a redirect of a failed payout.
    await s.receipt(await s.as(custody).redemptions.write.failPayout([1n, "unreadable_address"]));
    const to = s.seal(SAPLING, alice.address);
    const message = {
      id: 1n,
      sealedAddress: to,
      noteCommitment: 0n,
      nonce: await s.read.redemptions.read.nonces([alice.address]),
      deadline: (await s.publicClient.getBlock()).timestamp + 3600n,
    };
    const signature = await alice.signTypedData(
      redirectTypedData({ chainId: s.chainId, verifyingContract: s.read.redemptions.address }, message),
    );
    const redirect = (sealed: Hex) =>
      s.as(relayer).redemptions.write.redirectWithSig([1n, sealed, 0n, message.deadline, signature]);
    await expectRevert(redirect(s.seal(SAPLING, alice.address)), "InvalidSignature", [alice.address]);
    await s.receipt(await redirect(to));
  });

  it("PayoutRequested carries the envelope and its hash; no event or calldata carries the address", async () => {
    const sealed = s.seal(SAPLING, alice.address);
    const hash = await s.as(alice).redemptions.write.redeem([10n * ZSD, sealed]);
    const receipt = await s.receipt(hash);
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
    expect(Object.keys(event!.args).sort()).toEqual(
      ["amount", "feeZat", "id", "owner", "price", "sealedAddress", "sealedAddressHash", "zatDue"].sort(),
    );
    expect(event!.args.sealedAddress).toBe(sealed);
    expect(event!.args.sealedAddressHash).toBe(keccak256(sealed));
    // Only custody's key opens it, and only for this owner's payout.
    expect(s.open(sealed, alice.address)).toBe(SAPLING);
    expect(() => s.open(sealed, bob.address)).toThrow();
    const plaintext = toHex(SAPLING).slice(2);
    const tx = await s.publicClient.getTransaction({ hash });
    expect(tx.input.toLowerCase()).not.toContain(plaintext);
    for (const log of receipt.logs) expect(log.data.toLowerCase()).not.toContain(plaintext);
  });
});
