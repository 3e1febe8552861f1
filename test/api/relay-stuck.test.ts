// A relayed transaction that waits too long is replaced at the same nonce with
// higher fees; the replacement is mined and the mint confirmed once.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "../../sdk/js/src/notes/index.ts";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, json, openStorage, startApi } from "./helpers.ts";

describe("stuck relay transactions", () => {
  let s: System;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let dir: string;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-relay-stuck-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    storage = await openStorage("pglite");
    api = await startApi(storage.db, {
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: s.rpcUrl,
      ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(1),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RELAY_POLL_MS: "50",
      RELAY_STUCK_AFTER_MS: "400",
    });
  });
  afterAll(async () => {
    await s.testClient.setAutomine(true);
    await api?.worker?.stop();
    await api?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  const txHashOf = async (mintId: string) =>
    (
      await storage.db.query<{ tx_hash: string | null; status: string }>(
        "SELECT tx_hash, status FROM mints WHERE id = $1",
        [mintId],
      )
    )[0]!;

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it("replaces a pending mint with higher fees and confirms the replacement", async () => {
    const note = createNote();
    await api.call("/v1/sandbox/deposits", json({ amount: "4", noteCommitment: noteCommitment(note).toString() }));
    const proved = await s.prove({
      note,
      amountZat: 400_000_000n,
      mintAmount: 100n * ZSD,
      recipient: accounts.alice.address,
    });
    const proof = (await (
      await api.call(
        "/v1/proofs/submit",
        json({
          proof: proved.raw.proof,
          publicSignals: publicSignalsToArray(proved.raw.publicSignals),
          mintAmount: "100",
          recipient: accounts.alice.address,
        }),
      )
    ).json()) as { proofId: string };
    const { mintId } = (await (
      await api.call(
        "/v1/mint",
        json({ amount: "100", collateralType: "ZEC", proofId: proof.proofId, recipient: accounts.alice.address }),
      )
    ).json()) as { mintId: string };

    // Blocks stop: the mint's transaction stays in the mempool.
    await s.testClient.setAutomine(false);
    api.worker!.start();
    const first = await waitFor(
      () => txHashOf(mintId),
      (r) => r.status === "submitted" && r.tx_hash !== null,
      "the first send",
    );
    const firstTx = await s.publicClient.getTransaction({ hash: first.tx_hash as Hex });
    const replaced = await waitFor(
      () => txHashOf(mintId),
      (r) => r.tx_hash !== first.tx_hash,
      "a replacement",
    );
    const replacement = await s.publicClient.getTransaction({ hash: replaced.tx_hash as Hex });
    expect(replacement.nonce).toBe(firstTx.nonce);
    expect(replacement.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(firstTx.maxFeePerGas! * 125n);

    await s.testClient.mine({ blocks: 1 });
    await s.testClient.setAutomine(true);
    const mint = await waitFor(
      async () => (await (await api.call(`/v1/mints/${mintId}`)).json()) as { status: string; txHash: string },
      (m) => m.status === "confirmed" || m.status === "failed",
      "confirmation",
    );
    const receipt = await s.publicClient.getTransactionReceipt({ hash: mint.txHash as Hex });
    expect(mint.status).toBe("confirmed");
    expect(receipt.status).toBe("success");
    expect(await s.read.token.read.balanceOf([accounts.alice.address])).toBe(100n * ZSD);
    await expect(s.publicClient.getTransactionReceipt({ hash: first.tx_hash as Hex })).rejects.toThrow();
  });
});
