// Failures that say why: a mint or redemption the contracts refuse is failed
// at once (simulated before anything is signed) with the refusal's code and a
// reason naming its figures, decoded from the ABIs.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { encodeFunctionData } from "viem";
import { describe, expect, it } from "vitest";
import { encodeMintCall, stableMinterAbi } from "@zsd/sdk";
import { createNote, publicSignalsToArray } from "@zsd/sdk/notes";
import { formatZsd } from "@zsd/sdk/units";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { ContractRevertError } from "../../../api/src/domain/errors.ts";
import { decodeRevert, explainRevert, refusalOf, refusalOfMined } from "../../../api/src/domain/reverts.ts";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, json, queueMint, settledMint, useRelayApi } from "../helpers.ts";

const { alice, bob, pauser, relayer } = accounts;
const WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const PRICE_50 = 5_000_000_000n;

describe("decoded refusals", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;
  let chain: Chain;

  useRelayApi({}, async (stack) => {
    ({ s, api, db } = stack);
    chain = new Chain(s.deployment, s.rpcUrl, 5_000);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
  });

  const setPrice = async (price: bigint) => s.setPrice(price);

  /** The relay's bookkeeping of a mint: nothing sent means no attempt and no transaction. */
  const row = async (id: string) =>
    (await db.query<{ attempts: number; tx_hash: string | null }>("SELECT * FROM mints WHERE id = $1", [id]))[0]!;

  it("decodes a refusal from a node's error, whatever contract of ours raised it", async () => {
    const error = await chain.client
      .estimateGas({
        account: relayer.address,
        to: chain.redemptions,
        data: encodeFunctionData({
          abi: stableMinterAbi,
          functionName: "pause",
        }),
      })
      .catch((e: unknown) => e);
    // pause() is Redemptions' too (the same selector); the relayer lacks the pauser role.
    const revert = decodeRevert(error);
    expect(revert).toBeInstanceOf(ContractRevertError);
    expect(revert!.errorName).toBe("AccessControlUnauthorizedAccount");
    expect(revert!.code).toBe("access_control_unauthorized_account");
    expect(explainRevert(revert!, 0n).reason).toContain(relayer.address);
    // Not a refusal: a node that does not answer.
    expect(decodeRevert(new Error("socket hang up"))).toBeUndefined();
    const unreachable = new Chain(s.deployment, "http://127.0.0.1:9", 1_000);
    const down = await unreachable.client.getBlockNumber().catch((e: unknown) => e);
    expect(await refusalOf(chain, down)).toBeUndefined();
  });

  it("fails a mint the minter refuses for its collateral at once, saying by how much; the proof mints later", async () => {
    api.worker!.stop();
    // 4 ZEC proven; 100 ZSD needs $150 at the 150% ratio: enough at $50 ($200), not at $30 ($120).
    const { mintId } = await queueMint(api, s, { recipient: alice.address, mintAmount: 100n * ZSD });
    await setPrice(3_000_000_000n);
    api.worker!.start();
    const failed = (await settledMint(api, mintId)) as Record<string, unknown>;
    expect(failed).toMatchObject({
      status: "failed",
      txHash: null,
      failureCode: "insufficient_collateral_value",
      failureReason:
        "At the current ZEC/USD price the proven collateral floor is worth $120; this mint needs $150 at the minimum collateral ratio.",
    });
    // Simulated, refused, failed: no transaction signed and no retry.
    expect(await row(mintId)).toMatchObject({ attempts: 0, tx_hash: null });

    // The cause gone, the same proof mints.
    await setPrice(PRICE_50);
    const [{ proof_id: proofId }] = await db.query<{ proof_id: string }>("SELECT proof_id FROM mints WHERE id = $1", [
      mintId,
    ]);
    const again = await api.call(
      "/v1/mint",
      json({ amount: "100", collateralType: "ZEC", proofId, recipient: alice.address }),
    );
    expect(again.status).toBe(202);
    const second = await settledMint(api, ((await again.json()) as { mintId: string }).mintId);
    expect(second).toMatchObject({ status: "confirmed", failureCode: null, failureReason: null });
  });

  it("refuses at once a mint the minter would refuse now, queueing nothing and keeping the proof", async () => {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const submitted = await api.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "100",
        recipient: alice.address,
      }),
    );
    const { proofId } = (await submitted.json()) as { proofId: string };
    const mint = () =>
      api.call("/v1/mint", json({ amount: "100", collateralType: "ZEC", proofId, recipient: alice.address }));
    const [{ n: before }] = await db.query<{ n: string }>("SELECT count(*) AS n FROM mints");
    await setPrice(3_000_000_000n);
    try {
      const refused = await mint();
      expect(refused.status).toBe(422);
      expect(await refused.json()).toMatchObject({
        code: "mint_would_revert",
        proofId,
        failureCode: "insufficient_collateral_value",
        detail: expect.stringContaining("worth $120; this mint needs $150"),
      });
      await s.receipt(await s.as(pauser).minter.write.pause());
      try {
        expect(await (await mint()).json()).toMatchObject({ code: "mint_would_revert", failureCode: "enforced_pause" });
      } finally {
        await s.receipt(await s.as(pauser).minter.write.unpause());
      }
    } finally {
      await setPrice(PRICE_50);
    }
    const [{ n: after }] = await db.query<{ n: string }>("SELECT count(*) AS n FROM mints");
    expect(after).toBe(before);
    expect(((await (await api.call(`/v1/proofs/${proofId}`)).json()) as { status: string }).status).toBe("verified");
    expect((await mint()).status).toBe(202);
  });

  it("names a pause and a frozen price (both feeds stale), with the last good price", async () => {
    // Queued before the pause: the relay's simulation meets it.
    api.worker!.stop();
    const paused = await queueMint(api, s, { recipient: alice.address, mintAmount: 10n * ZSD });
    await s.receipt(await s.as(pauser).minter.write.pause());
    api.worker!.start();
    try {
      const mintId = paused.mintId;
      expect(await settledMint(api, mintId)).toMatchObject({
        status: "failed",
        failureCode: "enforced_pause",
        failureReason: expect.stringMatching(/paused by the operator/),
      });
    } finally {
      await s.receipt(await s.as(pauser).minter.write.unpause());
    }

    // Queued while the price was fresh; stale (by two hours) when the relay gets to it.
    api.worker!.stop();
    const { mintId } = await queueMint(api, s, { recipient: alice.address, mintAmount: 10n * ZSD });
    await s.increaseTime(7_200);
    api.worker!.start();
    try {
      const failed = await settledMint(api, mintId);
      // Both feeds stale: the price froze at its last good value, which the reason names.
      expect(failed).toMatchObject({ status: "failed", failureCode: "price_frozen" });
      expect(failed.failureReason).toMatch(/^Neither ZEC\/USD feed can be trusted now .* last good price \(50 USD\)/);
    } finally {
      await setPrice(PRICE_50);
    }
  });

  it("fails a redemption whose owner no longer holds the ZSD, with both balances", async () => {
    api.worker!.stop();
    const amount = 50n * ZSD;
    const sealedAddress = s.seal(WITHDRAW, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress, alice.address);
    const response = await api.call(
      "/v1/redeem",
      json({
        amount: formatZsd(amount),
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      }),
    );
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    // Signed, then spent elsewhere before the relay sends it.
    const balance = await s.read.token.read.balanceOf([alice.address]);
    await s.receipt(await s.as(alice).token.write.transfer([bob.address, balance]));
    api.worker!.start();
    let redemption: Record<string, unknown> = {};
    for (let i = 0; i < 100 && redemption.status !== "failed"; i++) {
      redemption = (await (await api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>;
      if (redemption.status !== "failed") await new Promise((r) => setTimeout(r, 100));
    }
    expect(redemption).toMatchObject({
      status: "failed",
      txHash: null,
      failureCode: "erc20_insufficient_balance",
      failureReason: `${alice.address} holds 0 ZSD; this needs 50 ZSD.`,
    });
    await s.receipt(await s.as(bob).token.write.transfer([alice.address, balance]));
  });

  it("reads why a mined transaction reverted by replaying it on the state it met", async () => {
    const note = createNote();
    const { leaf } = await s.deposit(note, 4n * ZEC);
    expect(leaf).toBeGreaterThan(0n);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 10n * ZSD, recipient: alice.address });
    const data = encodeMintCall(proved.proof, proved.request);
    const minted = await s.receipt(await s.as(bob).wallet.sendTransaction({ to: chain.minter, data }));
    expect(minted.status).toBe("success");
    // The same call mined after it would meet a spent nullifier.
    const head = await s.publicClient.getBlockNumber();
    expect(await refusalOfMined(chain, { from: bob.address, to: chain.minter, data, blockNumber: head + 1n })).toEqual({
      code: "nullifier_already_spent",
      reason: "This deposit was already minted (its nullifier is spent).",
    });
    // Replayed where it went through, there is no refusal to read.
    expect(
      await refusalOfMined(chain, { from: bob.address, to: chain.minter, data, blockNumber: minted.blockNumber }),
    ).toMatchObject({ code: "transaction_reverted" });
  });

  it("explains each refusal a relayed call can meet, and names any other with its arguments", () => {
    const say = (name: string, args: unknown[], now = 0n) =>
      explainRevert(new ContractRevertError(name as never, args), now);
    expect(say("RootExpired", [1n, 1_000n, 600n], 1_900n).reason).toMatch(/superseded 900 s ago.*for 600 s/);
    expect(say("PositionNotOpen", [3n, 3]).reason).toBe("Position 3 is closed, not open.");
    expect(say("SignatureExpired", [0n]).reason).toContain("1970-01-01T00:00:00.000Z");
    expect(say("PayoutNotPending", [7n, 2]).reason).toBe("Payout 7 is completed, not requested.");
    expect(say("PayoutNotPending", [7n, 3]).reason).toBe(
      "Payout 7 is failed (its ZEC held for the owner), not requested.",
    );
    expect(say("PayoutNotFailed", [4n, 2])).toEqual({
      code: "payout_not_failed",
      reason: "Payout 4 is completed: only a failed payout, its ZEC held for the owner, can be redirected.",
    });
    expect(say("NotPayoutOwner", [4n, "0xB0b"]).reason).toMatch(/^0xB0b does not own payout 4: only its owner/);
    expect(say("InvalidRedirectDestination", []).reason).toMatch(/exactly one destination/);
    expect(say("SignatureExpired", [0n]).reason).toMatch(/1970-01-01T00:00:00.000Z .*sign it again/);
    expect(say("InvalidSignature", ["0xA11ce"]).reason).toMatch(
      /^The signature is not 0xA11ce's EIP-712 signature of this call/,
    );
    expect(say("PositionNotUnderwater", [3n, 200n * 10n ** 18n, 100n * 10n ** 18n]).reason).toBe(
      "Position 3 is worth $200, not under its debt of 100 ZSD (nor within a redemption's margin of 4 zatoshi and 1 ppm): liquidate it instead.",
    );
    expect(say("NoDebtToRedistributeTo", [3n]).reason).toMatch(/holds all the debt/);
    expect(say("UnderwaterPositionsPending", [30n]).reason).toMatch(/or 30 whose settling .*: call redistribute/);
    expect(say("NothingToRedistribute", []).reason).toMatch(/None of the positions named can be redistributed now/);
    expect(say("ReentrancyGuardReentrantCall", [])).toEqual({
      code: "reentrancy_guard_reentrant_call",
      reason: "The contract refused with ReentrancyGuardReentrantCall().",
    });
  });
});
