// Another sender using the relayer key takes the nonce the worker just signed
// with, so the node answers the worker's broadcast with "nonce too low" (the
// other transaction is mined) or "replacement transaction underpriced" (it
// waits in the mempool with higher fees). Either way the worker signs the mint
// again at a fresh nonce and it is confirmed once; nothing stalls meanwhile.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Hex, parseTransaction } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RpcProxy, startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { type RunningApi, eventually, queueMint, settledMint, useRelayApi } from "../helpers.ts";

const { relayer, carol } = accounts;

describe("relay nonces taken by another sender", () => {
  let s: System;
  let proxy: RpcProxy;
  let api: RunningApi;
  let db: Database;

  // Registered first, so it runs last: the API's last requests go through the proxy.
  afterAll(async () => {
    await proxy?.close();
  });
  // One mint a transaction: the second mint's own transaction is what shows the worker not stuck behind the first.
  useRelayApi(
    {
      prepare: async (system) => (proxy = await startRpcProxy(system.rpcUrl)),
      env: () => ({ RPC_URL: proxy.url, RELAY_MINT_BATCH_MAX: "1" }),
    },
    (stack) => ({ s, api, db } = stack),
  );
  afterAll(async () => {
    await s.testClient.setAutomine(true);
  });

  /** A plain transfer from the relayer's key at `nonce`, sent straight to the node. */
  function competingSend(nonce: number, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) {
    return s.as(relayer).wallet.sendTransaction({
      account: relayer,
      chain: s.as(relayer).wallet.chain,
      to: carol.address,
      value: 1n,
      nonce,
      ...fees,
    });
  }

  async function expectMintedOnceAtFreshNonce(mintId: string, nullifierHash: bigint, takenNonce: number) {
    const mint = await settledMint(api, mintId);
    expect(mint).toMatchObject({ status: "confirmed", failureReason: null });
    const events = await s.mintedEvents(nullifierHash);
    expect(events).toHaveLength(1);
    expect(events[0]!.transactionHash).toBe(mint.txHash);
    const tx = await s.publicClient.getTransaction({ hash: mint.txHash as Hex });
    expect(tx.from.toLowerCase()).toBe(relayer.address.toLowerCase());
    expect(tx.nonce).toBeGreaterThan(takenNonce);
  }

  /** The node's refusals of the worker's broadcasts, by message. */
  const refusals = (pattern: RegExp) => proxy.sent.filter((t) => pattern.test(t.error ?? ""));

  it('re-signs a mint whose nonce another sender used first ("nonce too low")', async () => {
    // Queued first: the sandbox deposit is a transaction through the proxy too.
    const { mintId, nullifierHash } = await queueMint(api, s, { recipient: carol.address, mintAmount: 10n * ZSD });
    let taken = -1;
    proxy.beforeNextSend = async (raw) => {
      taken = parseTransaction(raw).nonce!;
      // Mined at once (automine): the worker's transaction arrives with a used nonce.
      await s.receipt(await competingSend(taken, await s.publicClient.estimateFeesPerGas()));
    };
    api.worker!.start();
    await expectMintedOnceAtFreshNonce(mintId, nullifierHash, taken);
    expect(refusals(/nonce too low/i).map((t) => parseTransaction(t.raw).nonce)).toEqual([taken]);
    await api.worker!.stop();
  });

  it('waits out a higher-priced transaction holding its nonce ("replacement underpriced") without stalling', async () => {
    const first = await queueMint(api, s, { recipient: carol.address, mintAmount: 11n * ZSD });
    const second = await queueMint(api, s, { recipient: carol.address, mintAmount: 12n * ZSD });
    await s.testClient.setAutomine(false);
    let taken = -1;
    proxy.beforeNextSend = async (raw) => {
      const signed = parseTransaction(raw);
      taken = signed.nonce!;
      // Waits in the mempool, at the worker's nonce, with three times its fees.
      await competingSend(taken, {
        maxFeePerGas: signed.maxFeePerGas! * 3n,
        maxPriorityFeePerGas: signed.maxPriorityFeePerGas! * 3n,
      });
    };
    api.worker!.start();
    // The worker keeps trying, and is not stuck behind the taken nonce: the second mint goes out meanwhile.
    await eventually(
      async () => refusals(/replacement transaction underpriced/i).length,
      (n) => n >= 2,
      "the worker's broadcast to be refused as underpriced, more than once",
    );
    const [row] = await db.query<{ status: string; nonce: number }>("SELECT status, nonce FROM mints WHERE id = $1", [
      second.mintId,
    ]);
    expect(row).toMatchObject({ status: "submitted", nonce: taken + 1 });

    await s.testClient.mine({ blocks: 1 });
    await s.testClient.setAutomine(true);
    await expectMintedOnceAtFreshNonce(first.mintId, first.nullifierHash, taken);
    await expectMintedOnceAtFreshNonce(second.mintId, second.nullifierHash, taken);
    expect(await s.read.token.read.balanceOf([carol.address])).toBe(33n * ZSD);
  });
});
