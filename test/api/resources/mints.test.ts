// POST /v1/mint (both shapes), GET /v1/mints/{id} and the relay worker, on a
// live node with real proofs.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { decodeFunctionData, parseEventLogs } from "viem";
import { describe, expect, it } from "vitest";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk";
import { type Note, createNote, noteCommitment, publicSignalsToArray } from "@zsd/sdk/notes";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";

const { alice, bob, carol, relayer } = accounts;

describe("mint through the relay", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  useRelayApi({ env: { MINT_WAIT_MS: "20000" } }, (stack) => ({ s, api, db } = stack));

  /** Sandbox deposit, proof by the SDK, submitted: what a wallet does before minting. */
  async function verifiedProof(
    options: { recipient?: `0x${string}`; amount?: bigint; fee?: bigint; note?: Note } = {},
  ) {
    const note = options.note ?? createNote();
    if (!options.note) {
      const deposit = await api.call(
        "/v1/sandbox/deposits",
        json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
      );
      expect(deposit.status).toBe(201);
    }
    const recipient = options.recipient ?? alice.address;
    const mintAmount = options.amount ?? 100n * ZSD;
    const fee = options.fee ?? ZSD;
    const proved = await s.prove({
      note,
      amountZat: 400_000_000n,
      mintAmount,
      recipient,
      relayer: relayer.address,
      fee,
    });
    const response = await api.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: (mintAmount / ZSD).toString(),
        recipient,
        relayer: relayer.address,
        fee: (fee / ZSD).toString(),
      }),
    );
    expect(response.status).toBe(201);
    return { note, proved, record: (await response.json()) as { proofId: string; proofHash: string } };
  }

  const until = (mintId: string, statuses: string[]) =>
    eventually(
      async () => (await (await api.call(`/v1/mints/${mintId}`)).json()) as Record<string, unknown>,
      (mint) => statuses.includes(mint.status as string),
      `mint ${mintId} to reach ${statuses}`,
    );

  it("shape A: queued at once, then submitted and confirmed by the worker", async () => {
    api.worker!.start();
    const { record } = await verifiedProof();
    const before = await s.read.token.read.balanceOf([relayer.address]);
    const response = await api.call(
      "/v1/mint",
      json({ amount: "100.00", collateralType: "ZEC", proofId: record.proofId, recipient: alice.address }),
    );
    expect(response.status).toBe(202);
    const queued = (await response.json()) as { mintId: string };
    // 4 ZEC at $50 over 100 ZSD.
    expect(queued).toMatchObject({
      status: "queued",
      mintId: expect.stringMatching(/^mint_/),
      expectedCollateralRatio: "2",
      pegPrice: "1.00",
    });
    const mint = await until(queued.mintId, ["confirmed", "failed"]);
    expect(mint).toMatchObject({
      status: "confirmed",
      amount: "100",
      recipient: alice.address,
      txHash: expect.stringMatching(/^0x/),
      failureReason: null,
    });
    expect(mint.confirmations).toBeGreaterThanOrEqual(1);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(99n * ZSD);
    expect(await s.read.token.read.balanceOf([relayer.address])).toBe(before + ZSD);
    expect(await (await api.call(`/v1/proofs/${record.proofId}`)).json()).toMatchObject({
      status: "consumed",
      mintId: queued.mintId,
    });
  });

  it("shape B takes the proof hash in either case of hex", async () => {
    const { record } = await verifiedProof({ recipient: carol.address, amount: 50n * ZSD, fee: 0n });
    const upper = `0x${record.proofHash.slice(2).toUpperCase()}`;
    const response = await api.call("/v1/mint", json({ amount: 50, collateralProof: upper }));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("success");
  });

  it("shape B: waits for the transaction and answers success with it", async () => {
    const { record } = await verifiedProof({ recipient: bob.address, amount: 50n * ZSD, fee: 0n });
    const response = await api.call("/v1/mint", json({ amount: 50, collateralProof: record.proofHash }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; tx: string };
    expect(body).toMatchObject({ status: "success", tx: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    const receipt = await s.publicClient.getTransactionReceipt({ hash: body.tx as `0x${string}` });
    expect(receipt.status).toBe("success");
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(50n * ZSD);
  });

  it("refuses an amount or recipient the proof does not bind, other collateral, and a proof used twice", async () => {
    const { record } = await verifiedProof();
    const call = (body: unknown) => api.call("/v1/mint", json(body));
    const base = { amount: "100.00", collateralType: "ZEC", proofId: record.proofId, recipient: alice.address };
    const amount = await call({ ...base, amount: "99" });
    expect(amount.status).toBe(422);
    expect(await amount.json()).toMatchObject({ code: "proof_mismatch", detail: expect.stringContaining("100") });
    expect((await (await call({ ...base, recipient: bob.address })).json()).code).toBe("proof_mismatch");
    expect((await (await call({ ...base, collateralType: "BTC" })).json()).code).toBe("unsupported_collateral");
    const missing = await call({ amount: "1", proofId: record.proofId });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(
      expect.arrayContaining(["body.collateralType", "body.recipient"]),
    );
    const first = await call(base);
    expect(first.status).toBe(202);
    const { mintId } = (await first.json()) as { mintId: string };
    const second = await call(base);
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ code: "proof_already_used", mintId });
    await until(mintId, ["confirmed"]);
  });

  it("50 concurrent identical POSTs with one Idempotency-Key make one mint", async () => {
    const { record } = await verifiedProof();
    const body = { amount: "100", collateralType: "ZEC", proofId: record.proofId, recipient: alice.address };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        api.call("/v1/mint", json(body, { "idempotency-key": `mint-${record.proofId}` })),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((st) => st === 202 || st === 409)).toBe(true);
    const ids = new Set<string>();
    for (const r of responses.filter((r) => r.status === 202)) ids.add(((await r.json()) as { mintId: string }).mintId);
    expect(ids.size).toBe(1);
    const rows = await db.query("SELECT id FROM mints WHERE proof_id = $1", [record.proofId]);
    expect(rows).toHaveLength(1);
    await until([...ids][0]!, ["confirmed"]);
  });

  it("two API keys racing for one deposit: one mint confirmed, the other refused with a clear reason", async () => {
    const rivalAccount = await api.keys.createAccount("rival wallet");
    const { secret: rivalKey } = await api.keys.create(rivalAccount.id, "sandbox", "rival");
    const note = createNote();
    await api.call("/v1/sandbox/deposits", json({ amount: "4", noteCommitment: noteCommitment(note).toString() }));
    const proveFor = (recipient: `0x${string}`) =>
      s.prove({ note, amountZat: 400_000_000n, mintAmount: 40n * ZSD, recipient });
    const proofs = [await proveFor(alice.address), await proveFor(bob.address)];
    const race = async (key: string, proved: Awaited<ReturnType<typeof proveFor>>, recipient: `0x${string}`) => {
      const submitted = await api.call("/v1/proofs/submit", {
        ...json({
          proof: proved.raw.proof,
          publicSignals: publicSignalsToArray(proved.raw.publicSignals),
          owner: proved.binding.owner,
          mintAmount: "40",
          recipient,
        }),
        key,
      });
      if (submitted.status !== 201) return submitted;
      const { proofId } = (await submitted.json()) as { proofId: string };
      return api.call("/v1/mint", { ...json({ amount: "40", collateralType: "ZEC", proofId, recipient }), key });
    };
    const results = await Promise.all([
      race(api.secret, proofs[0]!, alice.address),
      race(rivalKey, proofs[1]!, bob.address),
    ]);
    const won = results.filter((r) => r.status === 202);
    const lost = results.filter((r) => r.status !== 202);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.status).toBe(409);
    expect(await lost[0]!.json()).toMatchObject({
      code: "nullifier_claimed",
      detail: "Another pending proof already claims this deposit.",
    });
    const { mintId } = (await won[0]!.json()) as { mintId: string };
    const winnerKey = results[0]!.status === 202 ? api.secret : rivalKey;
    const loserKey = winnerKey === api.secret ? rivalKey : api.secret;
    const mint = (await (await api.call(`/v1/mints/${mintId}`, { key: winnerKey })).json()) as { status: string };
    expect(["queued", "submitted", "confirmed"]).toContain(mint.status);
    await eventually(
      async () => (await (await api.call(`/v1/mints/${mintId}`, { key: winnerKey })).json()) as { status: string },
      (m) => m.status === "confirmed",
      "the winner's mint to confirm",
    );
    // The winner's mint is not the loser's to see; once it is mined, the loser learns the deposit is spent.
    expect((await api.call(`/v1/mints/${mintId}`, { key: loserKey })).status).toBe(404);
    const loserProof = winnerKey === api.secret ? proofs[1]! : proofs[0]!;
    const loserRecipient = winnerKey === api.secret ? bob.address : alice.address;
    const retry = await api.call("/v1/proofs/submit", {
      ...json({
        proof: loserProof.raw.proof,
        publicSignals: publicSignalsToArray(loserProof.raw.publicSignals),
        owner: loserProof.binding.owner,
        mintAmount: "40",
        recipient: loserRecipient,
      }),
      key: loserKey,
    });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toMatchObject({ code: "nullifier_spent" });
  });

  it("reconciles a deposit minted outside the queue: confirmed when it is this mint, failed when another took it", async () => {
    await api.worker!.stop();
    // The same proof, sent by someone else before the worker (as after a crash between send and record).
    const same = await verifiedProof();
    const queued = (await (
      await api.call(
        "/v1/mint",
        json({ amount: "100", collateralType: "ZEC", proofId: same.record.proofId, recipient: alice.address }),
      )
    ).json()) as { mintId: string };
    const outside = await s.receipt(await s.as(relayer).minter.write.mint([same.proved.proof, same.proved.request]));

    // Another proof for the same deposit, to another recipient, wins the race.
    const raced = await verifiedProof();
    const lost = (await (
      await api.call(
        "/v1/mint",
        json({ amount: "100", collateralType: "ZEC", proofId: raced.record.proofId, recipient: alice.address }),
      )
    ).json()) as { mintId: string };
    const other = await s.prove({
      note: raced.note,
      amountZat: 400_000_000n,
      mintAmount: 10n * ZSD,
      recipient: bob.address,
    });
    await s.receipt(await s.as(bob).minter.write.mint([other.proof, other.request]));

    const supply = await s.read.token.read.totalSupply();
    api.worker!.start();
    expect(await until(queued.mintId, ["confirmed", "failed"])).toMatchObject({
      status: "confirmed",
      txHash: outside.transactionHash,
    });
    expect(await until(lost.mintId, ["confirmed", "failed"])).toMatchObject({
      status: "failed",
      failureReason: expect.stringMatching(/already minted by another proof/),
    });
    // Nothing was minted twice.
    expect(await s.read.token.read.totalSupply()).toBe(supply);
  });

  // Batches: the worker is stopped while mints queue, so they go out together.

  /** A fresh deposit's mint, queued; the worker is expected stopped. */
  async function queueMint(recipient: `0x${string}` = alice.address) {
    const proof = await verifiedProof({ recipient });
    const response = await api.call(
      "/v1/mint",
      json({ amount: "100", collateralType: "ZEC", proofId: proof.record.proofId, recipient }),
    );
    expect(response.status).toBe(202);
    return { ...proof, mintId: ((await response.json()) as { mintId: string }).mintId };
  }

  /** Starts the worker with blocks mined on demand, and answers the mints once all are sent. */
  async function sentWithoutMining(mintIds: string[]) {
    await s.testClient.setAutomine(false);
    api.worker!.start();
    return Promise.all(mintIds.map((id) => until(id, ["submitted"])));
  }

  const relayerNonce = () => s.publicClient.getTransactionCount({ address: relayer.address });

  it("mints queued together go out in one mintBatch, each with its own Minted event, position and status; a worker that dies before it learns the outcome sends nothing again", async () => {
    await api.worker!.stop();
    const mints = [await queueMint(), await queueMint(bob.address), await queueMint(carol.address)];
    const nonce = await relayerNonce();
    let sent: Record<string, unknown>[];
    try {
      sent = await sentWithoutMining(mints.map((m) => m.mintId));
      // The worker goes with its batch on record and in the pool, its outcome unknown to it.
      await api.worker!.stop();
      await s.testClient.mine({ blocks: 1 });
    } finally {
      await s.testClient.setAutomine(true);
    }
    const hash = sent[0]!.txHash as `0x${string}`;
    expect(sent.map((m) => m.txHash)).toEqual([hash, hash, hash]);
    api.worker!.start();
    const done = await Promise.all(mints.map((m) => until(m.mintId, ["confirmed", "failed"])));
    expect(done.map((m) => [m.status, m.txHash])).toEqual(mints.map(() => ["confirmed", hash]));
    expect(new Set(done.map((m) => m.positionId)).size).toBe(3);
    const tx = await s.publicClient.getTransaction({ hash });
    expect(decodeFunctionData({ abi: stableMinterAbi, data: tx.input }).functionName).toBe("mintBatch");
    const receipt = await s.publicClient.getTransactionReceipt({ hash });
    const minted = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "Minted" });
    expect(minted.map((e) => e.args.nullifierHash)).toEqual(mints.map((m) => m.proved.request.nullifierHash));
    const opened = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    expect(opened.map((e) => e.args.positionId.toString())).toEqual(done.map((m) => m.positionId));
    // One transaction for the three, and none sent again after the restart.
    expect(await relayerNonce()).toBe(nonce + 1);
  });

  it("a batch that reverts (a deposit taken meanwhile by a racing wallet) is taken apart: that mint fails alone with its reason, the others confirm", async () => {
    await api.worker!.stop();
    const mints = [await queueMint(), await queueMint(), await queueMint()];
    const raced = mints[1]!;
    const racing = await s.prove({
      note: raced.note,
      amountZat: 400_000_000n,
      mintAmount: 10n * ZSD,
      recipient: bob.address,
    });
    const supply = await s.read.token.read.totalSupply();
    let batch: `0x${string}`;
    try {
      batch = (await sentWithoutMining(mints.map((m) => m.mintId)))[0]!.txHash as `0x${string}`;
      // The racing wallet outbids the relay for the same block: its mint goes first, the batch reverts.
      // Its gas is set: an estimate would run against the pending block, where the batch spent the note first.
      await s.as(bob).minter.write.mint([racing.proof, racing.request], {
        gas: 2_000_000n,
        maxFeePerGas: 500_000_000_000n,
        maxPriorityFeePerGas: 400_000_000_000n,
      });
      await s.testClient.mine({ blocks: 1 });
    } finally {
      await s.testClient.setAutomine(true);
    }
    expect((await s.publicClient.getTransactionReceipt({ hash: batch })).status).toBe("reverted");
    const done = await Promise.all(mints.map((m) => until(m.mintId, ["confirmed", "failed"])));
    expect(done[1]).toMatchObject({
      status: "failed",
      failureReason: expect.stringMatching(/already minted by another proof/),
    });
    expect([done[0]!.status, done[2]!.status]).toEqual(["confirmed", "confirmed"]);
    expect(done[0]!.txHash).toBe(done[2]!.txHash);
    expect(done[0]!.txHash).not.toBe(batch);
    expect(await s.read.token.read.totalSupply()).toBe(supply + 210n * ZSD);
  });

  it("a batch on record that the node never got is broadcast again as the same transaction, not signed anew; a stored proof that no longer verifies never joins it", async () => {
    await api.worker!.stop();
    const mints = [await queueMint(), await queueMint(), await queueMint()];
    // The third's stored proof altered (its C point taken from the first's): checked off-chain, it fails alone.
    const [first, , altered] = mints;
    const proof = { ...(altered!.proved.raw.proof as object), pi_c: first!.proved.raw.proof.pi_c };
    await db.query("UPDATE proofs SET proof = $2::jsonb WHERE id = $1", [
      altered!.record.proofId,
      JSON.stringify(proof),
    ]);
    const nonce = await relayerNonce();
    let hash: `0x${string}`;
    try {
      hash = (await sentWithoutMining(mints.slice(0, 2).map((m) => m.mintId)))[0]!.txHash as `0x${string}`;
      await api.worker!.stop();
      // As if the process died between the record and the broadcast: the node never had it.
      await s.testClient.dropTransaction({ hash });
    } finally {
      await s.testClient.setAutomine(true);
    }
    expect(await s.publicClient.getTransaction({ hash }).catch(() => undefined)).toBeUndefined();
    api.worker!.start();
    const done = await Promise.all(mints.map((m) => until(m.mintId, ["confirmed", "failed"])));
    expect(done.map((m) => [m.status, m.txHash])).toEqual([
      ["confirmed", hash],
      ["confirmed", hash],
      ["failed", null],
    ]);
    expect(done[2]).toMatchObject({
      failureCode: "invalid_proof",
      failureReason: expect.stringMatching(/stored proof no longer verifies/),
    });
    expect(await (await api.call(`/v1/proofs/${altered!.record.proofId}`)).json()).toMatchObject({
      status: "rejected",
    });
    expect(await relayerNonce()).toBe(nonce + 1);
  });
});
