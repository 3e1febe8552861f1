// POST /v1/redeem and GET /v1/redemptions/{id}: the owner's signed redemption
// relayed, burned on-chain and paid by the (sandbox) custody.
import { type Hex, decodeFunctionData, parseSignature } from "viem";
import { redemptionsAbi } from "@zsd/sdk";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { formatZec } from "@zsd/sdk/units";
import { DEV_SEAL_KEY, openSealedAddress, sealAddress, sealBytes, sealKeyFromSecret } from "@zsd/sdk/seal";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, overriding, startRelayApi, useRelayApi } from "../helpers.ts";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { SealedAddresses } from "../../../api/src/domain/redemptions/sealed-addresses.ts";
import { addressesIn, captureLogs } from "../log-capture.ts";

const { alice, bob } = accounts;
const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
// Payable receivers (Sapling and Orchard), as in test/sdk/zcash-address.test.ts: the
// all-zero receiver used before has a pk_d of small order, which no wallet can pay.
const UNIFIED_TESTNET =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
const SAPLING_MAINNET = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya";

describe("redeem through the relay", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;
  // Every line the API logs (debug and up).
  const logs = captureLogs("debug");

  useRelayApi({ logger: logs.logger, startWorker: true }, async (stack) => {
    ({ s, api, db } = stack);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
  });

  /** A redemption body: the address sealed (unchecked, so tests may seal bad ones) for alice, then signed. */
  async function body(amount: bigint, withdrawAddress = SAPLING_TESTNET, signer = alice) {
    const sealedAddress = s.seal(withdrawAddress, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(signer, amount, sealedAddress, alice.address);
    return {
      amount: Number(amount / ZSD),
      sealedAddress,
      owner: alice.address,
      permit: { deadline: Number(deadline), ...sig },
    };
  }

  const until = (id: string, statuses: string[]) =>
    eventually(
      async () => (await (await api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => statuses.includes(r.status as string),
      `redemption ${id} to reach ${statuses}`,
    );

  it("relays the signed redemption: requested → burned → paid, collateral down", async () => {
    const collateral = await s.read.registry.read.totalCollateralZat();
    const response = await api.call("/v1/redeem", json(await body(40n * ZSD)));
    expect(response.status).toBe(202);
    const requested = (await response.json()) as { id: string; status: string };
    expect(requested).toMatchObject({
      object: "redemption",
      status: "requested",
      amount: "40",
      withdrawAddress: SAPLING_TESTNET,
    });
    const paid = await until(requested.id, ["paid", "failed"]);
    // $40 at $50/ZEC = 0.8 ZEC, less the 0.5% fee.
    expect(paid).toMatchObject({
      status: "paid",
      zecDue: "0.796",
      zcashTxId: expect.stringMatching(/^[0-9a-f]{64}$/),
      redemptionId: "1",
    });
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(160n * ZSD);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(collateral - 79_600_000n);
    expect((await s.read.redemptions.read.getPayout([1n])).status).toBe(2);
  });

  it("accepts a Unified address of the environment's network", async () => {
    const response = await api.call("/v1/redeem", json(await body(1n * ZSD, UNIFIED_TESTNET)));
    expect(response.status).toBe(202);
    await until(((await response.json()) as { id: string }).id, ["paid"]);
  });

  it("refuses unusable addresses with distinct codes", async () => {
    const code = async (address: string) => {
      // Opened before the signature is checked: the address's own problem, not invalid_signature.
      const sealedAddress = s.seal(address, alice.address);
      const response = await api.call("/v1/redeem", json({ ...(await body(ZSD)), sealedAddress }));
      expect(response.status).toBe(422);
      return ((await response.json()) as { code: string }).code;
    };
    expect(await code(SAPLING_MAINNET)).toBe("wrong_network");
    expect(await code("tmMcWbZU8t39htCR1fQRfRSHtkW4p3Ax5Se")).toBe("transparent_address");
    expect(await code(SAPLING_TESTNET.slice(0, -3) + "qqq")).toBe("bad_checksum");
    expect(await code("hello")).toBe("malformed_address");
  });

  it("gives an owner what to sign (typed data, next nonce, a deadline) and relays what they signed with it", async () => {
    const missing = await api.call("/v1/redemptions/terms");
    expect(missing.status).toBe(400);
    const response = await api.call(`/v1/redemptions/terms?owner=${alice.address}`);
    expect(response.status).toBe(200);
    const terms = (await response.json()) as {
      nonce: string;
      chainTime: number;
      suggestedDeadline: number;
      typedData: { domain: Record<string, unknown>; types: Record<string, unknown>; primaryType: string };
      bounds: Record<string, string>;
    };
    expect(BigInt(terms.nonce)).toBe(await s.read.redemptions.read.nonces([alice.address]));
    expect(terms.suggestedDeadline).toBe(terms.chainTime + 3_600);
    expect(terms.typedData.types.Redeem).toContainEqual({ name: "sealedAddress", type: "bytes" });
    // The permit's one bound, and the request field that carries it.
    expect(terms.typedData.types.Redeem).toContainEqual({ name: "minZatOut", type: "uint256" });
    expect(Object.keys(terms.bounds)).toEqual(["minZatOut"]);
    expect(terms.bounds.minZatOut).toMatch(/^permit\.minZec: /);
    // Sealed to the key GET /v1/relay serves, read from the chain.
    const relay = (await (await api.call("/v1/relay")).json()) as {
      sealKey: { keyId: number; publicKey: Hex; algorithm: string };
    };
    expect(relay.sealKey).toEqual({
      keyId: DEV_SEAL_KEY.keyId,
      publicKey: DEV_SEAL_KEY.publicKey,
      algorithm: "x25519-hkdf-sha256-chacha20poly1305",
    });
    const sealedAddress = sealAddress(
      relay.sealKey,
      { chainId: s.chainId, redemptions: s.read.redemptions.address, owner: alice.address },
      SAPLING_TESTNET,
      "testnet",
    );
    // Bounded at the quote: what it pays now.
    const [zatDue] = await s.read.redemptions.read.quote([ZSD]);
    const message = {
      owner: alice.address,
      amount: ZSD,
      minZatOut: zatDue,
      sealedAddress,
      nonce: BigInt(terms.nonce),
      deadline: BigInt(terms.suggestedDeadline),
    };
    const sign = privateKeyToAccount(hardhatPrivateKey(5)).signTypedData as (typed: unknown) => Promise<Hex>;
    const signature = await sign({ ...terms.typedData, message });
    const { r, s: sigS, v } = parseSignature(signature);
    const redeem = await api.call(
      "/v1/redeem",
      json({
        amount: "1",
        sealedAddress,
        owner: alice.address,
        permit: { deadline: terms.suggestedDeadline, minZec: formatZec(zatDue), v: Number(v), r, s: sigS },
      }),
    );
    expect(redeem.status).toBe(202);
    const paid = await until(((await redeem.json()) as { id: string }).id, ["paid"]);
    expect(paid).toMatchObject({ zecDue: formatZec(zatDue) });
  });

  it("refuses a permit whose minZec the redemption would not pay now, naming the bound; nothing burned or queued", async () => {
    const [zatDue] = await s.read.redemptions.read.quote([2n * ZSD]);
    const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
    const balance = await s.read.token.read.balanceOf([alice.address]);
    const [{ n: before }] = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM redemption_requests");
    // Signed for a zatoshi more than the quote: sent now, Redemptions would revert ZatOutBelowMinimum.
    const { deadline, ...sig } = await s.signedRedeem(alice, 2n * ZSD, sealedAddress, alice.address, zatDue + 1n);
    const response = await api.call(
      "/v1/redeem",
      json({
        amount: "2",
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), minZec: formatZec(zatDue + 1n), ...sig },
      }),
    );
    expect(response.status).toBe(422);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({
      code: "redemption_below_minimum",
      bound: "permit.minZec",
      zecDue: formatZec(zatDue),
      minZec: formatZec(zatDue + 1n),
    });
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(balance);
    const [{ n: after }] = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM redemption_requests");
    expect(after).toBe(before);
  });

  it("refuses a redemption worth less than the fee of a shielded payment", async () => {
    const tiny = 10n ** 12n; // 0.000001 ZSD: a few zatoshi at the test price
    const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, tiny, sealedAddress, alice.address);
    const response = await api.call(
      "/v1/redeem",
      json({
        amount: "0.000001",
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      }),
    );
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "redemption_too_small", minimumZec: "0.0001" });
  });

  it("moves updatedAt with every change, payment included", async () => {
    const response = await api.call("/v1/redeem", json(await body(1n * ZSD)));
    const { id, updatedAt: queuedAt } = (await response.json()) as { id: string; updatedAt: string };
    const paid = await until(id, ["paid"]);
    expect(Date.parse(paid.updatedAt as string)).toBeGreaterThan(Date.parse(queuedAt));
    // A payout that moves after the request's own last change (as with 12
    // confirmations) moves the redemption's updatedAt too.
    const [payout] = await api.db.query<{ updated_at: Date | string }>(
      "UPDATE payouts SET updated_at = now() + interval '1 minute' WHERE redemption_id = $1 RETURNING updated_at",
      [paid.redemptionId],
    );
    const later = (await (await api.call(`/v1/redemptions/${id}`)).json()) as { updatedAt: string };
    expect(Date.parse(later.updatedAt)).toBe(new Date(payout!.updated_at).getTime());
  });

  it("refuses an address in any form but its canonical lower case, naming that form", async () => {
    const response = await api.call("/v1/redeem", json(await body(ZSD, SAPLING_TESTNET.toUpperCase())));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "non_canonical_address", canonical: SAPLING_TESTNET });
  });

  it("answers a signed redemption posted again with 409 and the first one's id, before and after it is relayed", async () => {
    const signed = await body(2n * ZSD);
    const balance = await s.read.token.read.balanceOf([alice.address]);
    const first = await api.call("/v1/redeem", json(signed));
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const again = async (key?: string) => {
      const response = await api.call("/v1/redeem", { ...json(signed), key });
      expect(response.status).toBe(409);
      expect(response.headers.get("content-type")).toMatch(/problem\+json/);
      return (await response.json()) as Record<string, unknown>;
    };
    expect(await again()).toMatchObject({ code: "redemption_already_submitted", id });
    await until(id, ["paid"]);
    expect(await again()).toMatchObject({ code: "redemption_already_submitted", id });
    // Another account learns that it was relayed, not which request relayed it.
    const other = await api.keys.createAccount("other wallet");
    const { secret } = await api.keys.create(other.id, "sandbox", "other");
    const stranger = await again(secret);
    expect(stranger.code).toBe("redemption_already_submitted");
    expect(stranger.id).toBeUndefined();
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(balance - 2n * ZSD);
    expect(
      await db.query("SELECT id FROM redemption_requests WHERE signature->>'r' = $1", [signed.permit.r]),
    ).toHaveLength(1);
  });

  it("queues one of several identical signed redemptions posted at once", async () => {
    const signed = await body(ZSD);
    const responses = await Promise.all(Array.from({ length: 5 }, () => api.call("/v1/redeem", json(signed))));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409]);
    const { id } = (await responses.find((r) => r.status === 202)!.json()) as { id: string };
    for (const r of responses.filter((r) => r.status === 409)) {
      expect(await r.json()).toMatchObject({ code: "redemption_already_submitted", id });
    }
    await until(id, ["paid"]);
  });

  it("answers 409, not 422, when the same signed redemption is queued between its nonce check and its envelope check", async () => {
    // On PostgreSQL two posts of one signed redemption run side by side. This one checks the owner's
    // nonce, then (through the hook) the other post is queued in full; its envelope then reads as taken.
    const signed = await body(ZSD);
    let first: Response | undefined;
    let race: (() => Promise<void>) | undefined = async () => {
      first = await api.call("/v1/redeem", json(signed));
    };
    const hooked = overriding(db, {
      query: (async (sql: string, params?: unknown[]) => {
        const rows = await db.query(sql, params);
        if (race && /owner_nonce = \$2 AND status <> 'failed'/.test(sql)) {
          const go = race;
          race = undefined;
          await go();
        }
        return rows;
      }) as Database["query"],
    });
    const late = await startRelayApi(s, hooked);
    try {
      const second = await late.call("/v1/redeem", json(signed));
      expect(race, "the nonce check ran").toBeUndefined();
      expect(first!.status).toBe(202);
      expect(second.status).toBe(409);
      expect(await second.json()).toMatchObject({ code: "redemption_already_submitted" });
    } finally {
      await late.close();
    }
    await until(((await first!.json()) as { id: string }).id, ["paid"]);
  });

  it("answers 409 for a signed redemption someone already sent on-chain", async () => {
    const signed = await body(ZSD);
    await s.receipt(
      await s
        .as(bob)
        .redemptions.write.redeemWithPermit([
          alice.address,
          ZSD,
          0n,
          signed.sealedAddress,
          BigInt(signed.permit.deadline),
          signed.permit.v,
          signed.permit.r,
          signed.permit.s,
        ]),
    );
    const response = await api.call("/v1/redeem", json(signed));
    expect(response.status).toBe(409);
    const problem = (await response.json()) as Record<string, unknown>;
    expect(problem.code).toBe("redemption_already_submitted");
    expect(problem.id).toBeUndefined();
  });

  it("fails a queued redemption whose nonce another signed redemption used first, saying so", async () => {
    await api.worker!.stop();
    try {
      const queued = await api.call("/v1/redeem", json(await body(ZSD)));
      expect(queued.status).toBe(202);
      const { id } = (await queued.json()) as { id: string };
      const rival = await body(3n * ZSD);
      await s.receipt(
        await s
          .as(alice)
          .redemptions.write.redeemWithPermit([
            alice.address,
            3n * ZSD,
            0n,
            rival.sealedAddress,
            BigInt(rival.permit.deadline),
            rival.permit.v,
            rival.permit.r,
            rival.permit.s,
          ]),
      );
      api.worker!.start();
      expect(await until(id, ["failed", "burned", "paid"])).toMatchObject({
        status: "failed",
        failureReason: expect.stringMatching(/nonce/),
      });
    } finally {
      api.worker!.start();
    }
  });

  it("refuses a signature that is not the owner's for this amount and address, and more than the balance", async () => {
    const code = async (b: unknown) =>
      ((await (await api.call("/v1/redeem", json(b))).json()) as { code: string }).code;
    expect(await code(await body(ZSD, SAPLING_TESTNET, bob))).toBe("invalid_signature");
    expect(await code({ ...(await body(ZSD)), amount: 2 })).toBe("invalid_signature");
    const otherEnvelope = s.seal(UNIFIED_TESTNET, alice.address);
    expect(await code({ ...(await body(ZSD)), sealedAddress: otherEnvelope })).toBe("invalid_signature");
    expect(await code(await body(1_000n * ZSD))).toBe("insufficient_balance");
    const malformed = await api.call("/v1/redeem", json({ amount: 1, withdrawAddress: SAPLING_TESTNET }));
    expect(malformed.status).toBe(400);
  });

  it("refuses, changing nothing, a sealed address custody cannot open for this owner and chain", async () => {
    await api.worker!.stop();
    try {
      const count = async () =>
        (await db.query<{ n: string }>("SELECT count(*)::text AS n FROM redemption_requests"))[0]!.n;
      const before = { rows: await count(), nonce: await s.read.redemptions.read.nonces([alice.address]) };
      const problem = async (b: unknown): Promise<Record<string, unknown>> => {
        const response = await api.call("/v1/redeem", json(b));
        return { ...((await response.json()) as Record<string, unknown>), status: response.status };
      };
      const signedFor = async (sealedAddress: Hex) => {
        const { deadline, ...sig } = await s.signedRedeem(alice, ZSD, sealedAddress, alice.address);
        return { amount: 1, sealedAddress, owner: alice.address, permit: { deadline: Number(deadline), ...sig } };
      };
      // Sealed for bob (the associated data binds the owner), for another chain, to a key custody lacks.
      const context = { chainId: s.chainId, redemptions: s.read.redemptions.address, owner: alice.address };
      const stranger = sealKeyFromSecret(DEV_SEAL_KEY.keyId, `0x${"42".repeat(32)}`);
      const address = new TextEncoder().encode(SAPLING_TESTNET);
      for (const envelope of [
        s.seal(SAPLING_TESTNET, bob.address),
        sealBytes(DEV_SEAL_KEY, { ...context, chainId: 1 }, address),
        sealBytes(stranger, context, address),
        sealBytes({ ...DEV_SEAL_KEY, keyId: 7 }, context, address),
      ]) {
        const refused = await problem(await signedFor(envelope));
        expect(refused).toMatchObject({
          status: 422,
          code: "unreadable_address",
          errors: [{ field: "body.sealedAddress" }],
        });
        expect(refused.detail).toMatch(/GET \/v1\/relay/);
      }
      // Not an envelope at all: too short, odd hex.
      expect((await problem({ ...(await body(ZSD)), sealedAddress: "0x01" })).status).toBe(400);
      expect((await problem({ ...(await body(ZSD)), sealedAddress: `0x${"0".repeat(133)}` })).status).toBe(400);
      expect({ rows: await count(), nonce: await s.read.redemptions.read.nonces([alice.address]) }).toEqual(before);
    } finally {
      api.worker!.start();
    }
  });

  it("refuses an envelope a payout already carries: custody pays a sealed address once", async () => {
    const first = await body(ZSD);
    const response = await api.call("/v1/redeem", json(first));
    expect(response.status).toBe(202);
    await until(((await response.json()) as { id: string }).id, ["paid"]);
    const { deadline, ...sig } = await s.signedRedeem(alice, ZSD, first.sealedAddress, alice.address);
    const again = await api.call("/v1/redeem", json({ ...first, permit: { deadline: Number(deadline), ...sig } }));
    expect(again.status).toBe(422);
    expect(await again.json()).toMatchObject({
      code: "unreadable_address",
      title: "Unreadable sealed address",
      detail: expect.stringMatching(/already carries this sealed address/),
    });
  });

  it("takes an owner's envelope that someone else copied onto their own redemption first (a front-run)", async () => {
    const signed = await body(ZSD);
    // Bob lands alice's envelope on his own redemption, straight on the chain: it opens for alice only.
    await s.receipt(await s.as(alice).token.write.transfer([bob.address, ZSD]));
    await s.receipt(await s.as(bob).redemptions.write.redeem([ZSD, signed.sealedAddress]));
    const copy = (await s.read.redemptions.read.payoutCount()).toString();
    await eventually(
      async () =>
        (await db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = $1", [copy]))[0],
      (row) => row?.status === "held",
      "bob's copy to be failed and held",
    );
    // Alice's own request still goes: custody pays her envelope, which the copy never opened.
    const response = await api.call("/v1/redeem", json(signed));
    expect(response.status).toBe(202);
    await until(((await response.json()) as { id: string }).id, ["paid"]);
  });

  it("says at start when custody lacks the chain's current seal key, and opens nothing sealed to it", async () => {
    const wrong = captureLogs("info");
    // Key id 1 as on the chain, but another secret: the public keys differ.
    const other = await startRelayApi(s, db, { CUSTODY_SEAL_KEYS: `1:0x${"42".repeat(32)}` }, wrong);
    try {
      await eventually(
        async () => wrong.lines.join(""),
        (text) => text.includes("custody lacks the chain's current seal key"),
        "the start-up warning",
      );
      const response = await other.call("/v1/redeem", json(await body(ZSD)));
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({ code: "unreadable_address" });
    } finally {
      await other.close();
    }
    // The right key says nothing of the kind.
    expect(logs.lines.join("")).not.toContain("custody lacks");
  });

  describe("the spec's shape: {amount, withdrawAddress} with the owner's signature", () => {
    interface SealedTerms {
      nonce: string;
      suggestedDeadline: number;
      withdrawAddress: string;
      sealedAddress: Hex;
    }
    const terms = async (address = SAPLING_TESTNET) => {
      const response = await api.call(
        `/v1/redemptions/terms?owner=${alice.address}&withdrawAddress=${encodeURIComponent(address)}`,
      );
      expect(response.status).toBe(200);
      return (await response.json()) as SealedTerms;
    };
    /** The spec's body, signed over the envelope `sealed` (the terms' unless a test signs another). */
    const clearBody = async (amount: bigint, sealed?: Hex, address = SAPLING_TESTNET) => {
      const sealedAddress = sealed ?? (await terms(address)).sealedAddress;
      const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
      return {
        amount: Number(amount / ZSD),
        withdrawAddress: address,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      };
    };

    beforeAll(async () => {
      // The terms name the chain's nonce: a redemption of the tests above still to burn would take it first.
      await eventually(
        async () => (await db.query("SELECT 1 FROM redemption_requests WHERE status = 'requested'")).length,
        (n) => n === 0,
        "earlier redemptions to burn or fail",
      );
    });

    it("answers the address sealed for the owner at their nonce, the same bytes each time it is asked", async () => {
      const first = await terms();
      expect(first).toMatchObject({ withdrawAddress: SAPLING_TESTNET, sealedAddress: expect.stringMatching(/^0x01/) });
      expect(BigInt(first.nonce)).toBe(await s.read.redemptions.read.nonces([alice.address]));
      const context = { chainId: s.chainId, redemptions: s.read.redemptions.address, owner: alice.address };
      expect(openSealedAddress([DEV_SEAL_KEY], context, first.sealedAddress)).toBe(SAPLING_TESTNET);
      expect((await terms()).sealedAddress).toBe(first.sealedAddress);
      // Another address, or another owner, is another envelope.
      expect((await terms(UNIFIED_TESTNET)).sealedAddress).not.toBe(first.sealedAddress);
      const bobs = (await (
        await api.call(`/v1/redemptions/terms?owner=${bob.address}&withdrawAddress=${SAPLING_TESTNET}`)
      ).json()) as SealedTerms;
      expect(bobs.sealedAddress).not.toBe(first.sealedAddress);
    });

    it("relays {amount, withdrawAddress} signed over the terms' bytes: paid, the chain carrying only the seal", async () => {
      const { sealedAddress } = await terms();
      const response = await api.call("/v1/redeem", json(await clearBody(2n * ZSD, sealedAddress)));
      expect(response.status).toBe(202);
      const requested = (await response.json()) as { id: string };
      expect(requested).toMatchObject({ status: "requested", amount: "2", withdrawAddress: SAPLING_TESTNET });
      const paid = await until(requested.id, ["paid", "failed"]);
      expect(paid).toMatchObject({ status: "paid", redemptionId: expect.any(String) });
      // The relayed call carries the sealed bytes the owner signed, and the clear address in no form.
      const tx = await s.publicClient.getTransaction({ hash: paid.txHash as Hex });
      const { functionName, args } = decodeFunctionData({ abi: redemptionsAbi, data: tx.input });
      expect(functionName).toBe("redeemWithPermit");
      expect(args).toContain(sealedAddress);
      expect(addressesIn(tx.input, [SAPLING_TESTNET])).toEqual([]);
      // The next terms are at the next nonce: a fresh envelope, never the one on-chain.
      expect((await terms()).sealedAddress).not.toBe(sealedAddress);
    });

    it("refuses a clear address that is unusable, both at the terms and at the request, with its code", async () => {
      const code = async (address: string) => {
        const asked = await api.call(
          `/v1/redemptions/terms?owner=${alice.address}&withdrawAddress=${encodeURIComponent(address)}`,
        );
        expect(asked.status).toBe(422);
        expect(asked.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        const sent = await api.call(
          "/v1/redeem",
          json(await clearBody(ZSD, s.seal(SAPLING_TESTNET, alice.address), address)),
        );
        expect(sent.status).toBe(422);
        const problem = (await sent.json()) as { code: string; errors?: { field: string }[] };
        expect(problem.errors?.[0]?.field).toBe("body.withdrawAddress");
        expect(((await asked.json()) as { code: string }).code).toBe(problem.code);
        return problem.code;
      };
      expect(await code(SAPLING_MAINNET)).toBe("wrong_network");
      expect(await code("tmMcWbZU8t39htCR1fQRfRSHtkW4p3Ax5Se")).toBe("transparent_address");
      expect(await code(SAPLING_TESTNET.slice(0, -3) + "qqq")).toBe("bad_checksum");
      expect(await code("hello")).toBe("malformed_address");
      expect(await code(SAPLING_TESTNET.toUpperCase())).toBe("non_canonical_address");
    });

    it("refuses a signature over any other envelope than the API's, and hostile bodies with 4xx problems", async () => {
      const status = async (b: unknown) => {
        const response = await api.call("/v1/redeem", json(b));
        expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        return [response.status, ((await response.json()) as { code: string }).code];
      };
      // The caller's own seal of the same address is other bytes: the signature does not cover the API's.
      expect(await status(await clearBody(ZSD, s.seal(SAPLING_TESTNET, alice.address)))).toEqual([
        422,
        "invalid_signature",
      ]);
      // The terms' bytes for another address.
      expect(await status(await clearBody(ZSD, (await terms(UNIFIED_TESTNET)).sealedAddress))).toEqual([
        422,
        "invalid_signature",
      ]);
      const good = await clearBody(ZSD);
      const both = { ...good, sealedAddress: (await terms()).sealedAddress };
      expect((await status(both))[0]).toBe(400);
      const { withdrawAddress: _, ...neither } = good;
      expect((await status(neither))[0]).toBe(400);
      for (const withdrawAddress of [42, null, "", "z".repeat(100_000), ["x"], { a: 1 }]) {
        const [code] = await status({ ...good, withdrawAddress });
        expect(code).toBeGreaterThanOrEqual(400);
        expect(code).toBeLessThan(500);
      }
      const terms400 = await api.call(`/v1/redemptions/terms?owner=${alice.address}&withdrawAddress=`);
      expect(terms400.status).toBe(400);
      // The same signature, still unsent, goes through: nothing above spent the nonce.
      expect((await api.call("/v1/redeem", json(good))).status).toBe(202);
    });
    it("seals once for a refused signature however many nonces the owner used, saying what to sign; 409 for one relayed", async () => {
      // The test above leaves a redemption to burn: the nonce is read once it has.
      await eventually(
        async () => (await db.query("SELECT 1 FROM redemption_requests WHERE status = 'requested'")).length,
        (n) => n === 0,
        "earlier redemptions to burn or fail",
      );
      const used = await s.read.redemptions.read.nonces([alice.address]);
      expect(used).toBeGreaterThan(2n);
      const seals = vi.spyOn(SealedAddresses.prototype, "sealFor");
      try {
        const refused = await api.call(
          "/v1/redeem",
          json(await clearBody(ZSD, s.seal(SAPLING_TESTNET, alice.address))),
        );
        expect(refused.status).toBe(422);
        const problem = (await refused.json()) as { code: string; detail: string };
        expect(problem.code).toBe("invalid_signature");
        expect(problem.detail).toContain("GET /v1/redemptions/terms");
        expect(problem.detail).toContain(`nonce ${used}`);
        expect(seals).toHaveBeenCalledTimes(1);

        // A signature this relay took at a nonce since used is still told apart from a bad one.
        const good = await clearBody(ZSD);
        const sent = await api.call("/v1/redeem", json(good));
        expect(sent.status).toBe(202);
        const { id } = (await sent.json()) as { id: string };
        expect(await until(id, ["paid", "failed"])).toMatchObject({ status: "paid" });
        seals.mockClear();
        const again = await api.call("/v1/redeem", json(good));
        expect(again.status).toBe(409);
        expect(await again.json()).toMatchObject({ code: "redemption_already_submitted", id });
        expect(seals).toHaveBeenCalledTimes(2);
      } finally {
        seals.mockRestore();
      }
    });
  });

  // The redemptions above (paid, refused, failed on-chain) logged no address, in any form.
  it("logs no address of the run: no withdraw address, no owner", () => {
    expect(logs.lines.length).toBeGreaterThan(10);
    const used = [SAPLING_TESTNET, UNIFIED_TESTNET, SAPLING_MAINNET, "tmMcWbZU8t39htCR1fQRfRSHtkW4p3Ax5Se"];
    expect(addressesIn(logs.lines.join(""), [...used, alice.address, bob.address])).toEqual([]);
  });
});
