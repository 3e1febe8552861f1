// POST /v1/mint (both shapes), GET /v1/mints/{id} and the relay worker, on a
// live node with real proofs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Note, createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, eventually, json, openStorage, startRelayApi } from "./helpers.ts";

const { alice, bob, carol, relayer } = accounts;

describe("mint through the relay", () => {
  let s: System;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    s = await deploySystem();
    storage = await openStorage("pglite");
    api = await startRelayApi(s, storage.db, { MINT_WAIT_MS: "20000" });
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    await releaseProver();
  });

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
    const rows = await storage.db.query("SELECT id FROM mints WHERE proof_id = $1", [record.proofId]);
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
});
