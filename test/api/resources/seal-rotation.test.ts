// A seal key rotation seen through the API: governance makes a new
// key current on Redemptions; GET /v1/relay serves it, custody (holding both
// keys) opens and pays what is sealed to it, and an address sealed to the old
// key once its grace period is over is refused before anything is queued.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { redemptionsAbi } from "@zsd/sdk";
import { DEV_SEAL_KEY, type SealKey, sealAddress, sealKeyFromSecret } from "@zsd/sdk/seal";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";

const { alice, deployer } = accounts;
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const SECOND_KEY = sealKeyFromSecret(2, `0x${"5e".repeat(32)}`);

describe("seal key rotation through the API", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  // Custody holds the key it started with and the one governance will rotate to.
  const keys = [DEV_SEAL_KEY, SECOND_KEY].map((k) => `${k.keyId}:${k.secretKey}`).join(",");
  useRelayApi({ env: { CUSTODY_SEAL_KEYS: keys }, startWorker: true }, async (stack) => {
    ({ s, api, db } = stack);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
  });

  /** Sends a Redemptions admin call as the timelock (governance). */
  async function asTimelock(functionName: "setSealKey" | "setSealKeyGrace", args: readonly unknown[]) {
    const timelock = s.read.timelock.address;
    await s.testClient.impersonateAccount({ address: timelock });
    await s.testClient.setBalance({ address: timelock, value: 10n ** 18n });
    try {
      await s.receipt(
        await s.as(deployer).wallet.writeContract({
          account: timelock,
          address: s.read.redemptions.address,
          abi: redemptionsAbi,
          functionName,
          args,
        } as never),
      );
    } finally {
      await s.testClient.stopImpersonatingAccount({ address: timelock });
    }
  }

  async function redeemBody(key: SealKey) {
    const context = { chainId: s.chainId, redemptions: s.read.redemptions.address, owner: alice.address };
    const sealedAddress: Hex = sealAddress(key, context, SAPLING, "testnet");
    const { deadline, ...sig } = await s.signedRedeem(alice, ZSD, sealedAddress, alice.address);
    return { amount: 1, sealedAddress, owner: alice.address, permit: { deadline: Number(deadline), ...sig } };
  }

  it("serves the new key, pays what is sealed to it, and refuses the retired one with nothing queued", async () => {
    // No grace: the old key retires with the rotation's block.
    await asTimelock("setSealKeyGrace", [0n]);
    await asTimelock("setSealKey", [SECOND_KEY.keyId, SECOND_KEY.publicKey]);
    const relay = (await (await api.call("/v1/relay")).json()) as { sealKey: SealKey };
    expect(relay.sealKey).toMatchObject({ keyId: 2, publicKey: SECOND_KEY.publicKey });

    const rows = async () =>
      (await db.query<{ n: string }>("SELECT count(*)::text AS n FROM redemption_requests"))[0]!.n;
    const before = await rows();
    const retired = await api.call("/v1/redeem", json(await redeemBody(DEV_SEAL_KEY)));
    expect(retired.status).toBe(422);
    expect(await retired.json()).toMatchObject({
      code: "unreadable_address",
      title: "Unreadable sealed address",
      detail: expect.stringMatching(/sealed to key 1, which the Redemptions contract retired at/),
      errors: [{ field: "body.sealedAddress" }],
    });
    expect(await rows()).toBe(before);

    const current = await api.call("/v1/redeem", json(await redeemBody(relay.sealKey)));
    expect(current.status).toBe(202);
    const { id } = (await current.json()) as { id: string };
    const done = await eventually(
      async () => (await (await api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => r.status === "paid" || r.status === "failed",
      "the redemption sealed to the new key",
    );
    expect(done).toMatchObject({ status: "paid", withdrawAddress: SAPLING });
  });
});
