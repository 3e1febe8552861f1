// A relayed transaction that waits too long is replaced at the same nonce with
// higher fees; the replacement is mined and the mint confirmed once. Two
// queued mints go in one mintBatch, replaced as one.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import type { Hex } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, queueMint, settledMint, useRelayApi } from "../helpers.ts";

describe("stuck relay transactions", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  useRelayApi({ env: { RELAY_STUCK_AFTER_MS: "400" } }, (stack) => ({ s, api, db } = stack));
  afterAll(async () => {
    await s.testClient.setAutomine(true);
  });

  const txHashOf = async (mintId: string) =>
    (
      await db.query<{ tx_hash: string | null; status: string }>("SELECT tx_hash, status FROM mints WHERE id = $1", [
        mintId,
      ])
    )[0]!;

  it("replaces a pending batch of mints with higher fees and confirms the replacement", async () => {
    const { mintId } = await queueMint(api, s, { recipient: accounts.alice.address, mintAmount: 100n * ZSD });
    const other = await queueMint(api, s, { recipient: accounts.bob.address, mintAmount: 50n * ZSD });

    // Blocks stop: the mint's transaction stays in the mempool.
    await s.testClient.setAutomine(false);
    api.worker!.start();
    const first = await eventually(
      () => txHashOf(mintId),
      (r) => r.status === "submitted" && r.tx_hash !== null,
      "the first send",
    );
    expect(await txHashOf(other.mintId)).toEqual(first);
    const firstTx = await s.publicClient.getTransaction({ hash: first.tx_hash as Hex });
    const replaced = await eventually(
      () => txHashOf(mintId),
      (r) => r.tx_hash !== first.tx_hash,
      "a replacement",
    );
    expect((await txHashOf(other.mintId)).tx_hash).toBe(replaced.tx_hash);
    const replacement = await s.publicClient.getTransaction({ hash: replaced.tx_hash as Hex });
    expect(replacement.nonce).toBe(firstTx.nonce);
    expect(replacement.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(firstTx.maxFeePerGas! * 125n);

    await s.testClient.mine({ blocks: 1 });
    await s.testClient.setAutomine(true);
    const mint = await settledMint(api, mintId);
    const receipt = await s.publicClient.getTransactionReceipt({ hash: mint.txHash as Hex });
    expect(mint.status).toBe("confirmed");
    expect(mint.txHash).toBe(replaced.tx_hash);
    expect(await settledMint(api, other.mintId)).toMatchObject({ status: "confirmed", txHash: replaced.tx_hash });
    expect(receipt.status).toBe("success");
    expect(await s.read.token.read.balanceOf([accounts.alice.address])).toBe(100n * ZSD);
    expect(await s.read.token.read.balanceOf([accounts.bob.address])).toBe(50n * ZSD);
    await expect(s.publicClient.getTransactionReceipt({ hash: first.tx_hash as Hex })).rejects.toThrow();
  });
});
