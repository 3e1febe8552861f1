// A relayed redemption whose transaction waits too long is replaced at the same
// nonce with higher fees, as a stuck mint is. Whichever of the two is mined,
// the ZSD is burned once and the redemption paid.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Hex, keccak256 } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { redemptionsAbi } from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RpcProxy, startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";

const { alice } = accounts;
const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

describe("stuck relayed redemptions", () => {
  let s: System;
  let proxy: RpcProxy;
  let api: RunningApi;
  let db: Database;

  // Registered first, so it runs last: the API's last requests go through the proxy.
  afterAll(async () => {
    await proxy?.close();
  });
  useRelayApi(
    {
      prepare: async (system) => (proxy = await startRpcProxy(system.rpcUrl)),
      env: () => ({ RPC_URL: proxy.url, RELAY_STUCK_AFTER_MS: "400" }),
    },
    async (stack) => {
      ({ s, api, db } = stack);
      await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: alice.address });
    },
  );
  afterAll(async () => {
    await s.testClient.setAutomine(true);
  });

  /** Posts alice's signed redemption of `amount`; returns its id. */
  async function redeem(amount: bigint): Promise<string> {
    const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, amount, sealedAddress);
    const permit = { deadline: Number(deadline), ...sig };
    const body = { amount: Number(amount / ZSD), sealedAddress, owner: alice.address, permit };
    const response = await api.call("/v1/redeem", json(body));
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  const relayRow = async (id: string) =>
    (
      await db.query<{ tx_hash: string | null; relay_status: string }>(
        "SELECT tx_hash, relay_status FROM redemption_requests WHERE id = $1",
        [id],
      )
    )[0]!;

  const firstSend = (id: string) =>
    eventually(
      () => relayRow(id),
      (r) => r.relay_status === "submitted" && r.tx_hash !== null,
      "the first send",
    );

  // A row names its transaction before it is broadcast (write-ahead): wait for the node to have it.
  const nodeTransaction = (hash: Hex) =>
    eventually(
      () => s.publicClient.getTransaction({ hash }).catch(() => undefined),
      (tx) => tx !== undefined,
      `transaction ${hash} to reach the node`,
    ).then((tx) => tx!);

  const settled = (id: string) =>
    eventually(
      async () => (await (await api.call(`/v1/redemptions/${id}`)).json()) as Record<string, unknown>,
      (r) => r.status === "paid" || r.status === "failed",
      `redemption ${id} to settle`,
    );

  const burns = () =>
    s.publicClient.getContractEvents({
      address: s.deployment.contracts.Redemptions!.address,
      abi: redemptionsAbi,
      eventName: "PayoutRequested",
      args: { owner: alice.address },
      fromBlock: 0n,
    });

  it("replaces a pending redemption with higher fees and pays the replacement's burn once", async () => {
    // Blocks stop: the redemption's transaction stays in the mempool.
    await s.testClient.setAutomine(false);
    const id = await redeem(40n * ZSD);
    api.worker!.start();
    const first = await firstSend(id);
    const firstTx = await nodeTransaction(first.tx_hash as Hex);
    const replaced = await eventually(
      () => relayRow(id),
      (r) => r.tx_hash !== first.tx_hash,
      "a replacement",
    );
    const replacement = await nodeTransaction(replaced.tx_hash as Hex);
    expect(replacement.nonce).toBe(firstTx.nonce);
    expect(replacement.input).toBe(firstTx.input);
    expect(replacement.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(firstTx.maxFeePerGas! * 125n);

    await s.testClient.mine({ blocks: 1 });
    await s.testClient.setAutomine(true);
    const paid = await settled(id);
    expect(paid).toMatchObject({ status: "paid", redemptionId: "1", txHash: replaced.tx_hash });
    const receipt = await s.publicClient.getTransactionReceipt({ hash: replaced.tx_hash as Hex });
    expect(receipt.status).toBe("success");
    await expect(s.publicClient.getTransactionReceipt({ hash: first.tx_hash as Hex })).rejects.toThrow();
    expect(await burns()).toHaveLength(1);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(160n * ZSD);
  });

  it("pays the burn of the replaced transaction when that one is mined first", async () => {
    await s.testClient.setAutomine(false);
    const id = await redeem(30n * ZSD);
    const first = await firstSend(id);
    await eventually(
      async () => proxy.sent.some((t) => keccak256(t.raw) === first.tx_hash),
      (sent) => sent,
      "the first broadcast",
    );
    // The first transaction is mined just before its replacement reaches the node, which refuses it.
    proxy.beforeNextSend = async () => void (await s.testClient.mine({ blocks: 1 }));
    await eventually(
      async () => proxy.sent.filter((t) => /nonce too low/i.test(t.error ?? "")).length,
      (n) => n > 0,
      "the replacement to be refused",
    );
    await s.testClient.setAutomine(true);
    const paid = await settled(id);
    expect(paid).toMatchObject({ status: "paid", redemptionId: "2", txHash: first.tx_hash });
    expect(await burns()).toHaveLength(2);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(130n * ZSD);
  });
});
