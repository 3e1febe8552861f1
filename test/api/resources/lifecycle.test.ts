// The life of a proof and its mint: a failed mint gives its deposit back to
// the relay (unless the chain says the deposit can never mint again), and a
// mint request either lands whole or leaves nothing behind.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { type Note, createNote, noteCommitment, publicSignalsToArray } from "@zsd/sdk/notes";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, settledMint, startRelayApi, useRelayApi } from "../helpers.ts";
import { addressesIn, captureLogs } from "../log-capture.ts";

const { alice, bob, pauser } = accounts;
const MAX_ROOT_AGE = 60;

/** A JSON-RPC pass-through that can be switched off (every connection dropped). */
async function switchableRpc(target: string) {
  const state = { down: false };
  const server: Server = createServer((req, res) => {
    if (state.down) {
      req.socket.destroy();
      return;
    }
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      const upstream = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: raw,
      });
      res.writeHead(upstream.status, { "content-type": "application/json" }).end(await upstream.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("proof and mint lifecycle", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;
  // Every line the API logs (debug and up).
  const logs = captureLogs("debug");

  // A short root lifetime, so that a test can outlive a proof's root.
  useRelayApi(
    { deploy: { maxRootAge: BigInt(MAX_ROOT_AGE) }, env: { RATE_LIMIT_SANDBOX: "100000" }, logger: logs.logger },
    (stack) => ({ s, api, db } = stack),
  );

  async function deposit(note: Note) {
    const response = await api.call(
      "/v1/sandbox/deposits",
      json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
    );
    expect(response.status).toBe(201);
  }

  /** A proof of `note`'s deposit (made now, against the current root), submitted. */
  async function submitProof(note: Note, recipient: `0x${string}` = alice.address, on: RunningApi = api) {
    const proved = await s.prove({ note, amountZat: 400_000_000n, mintAmount: 100n * ZSD, recipient });
    return on.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "100",
        recipient,
      }),
    );
  }

  async function verifiedProof(note: Note, recipient: `0x${string}` = alice.address) {
    const response = await submitProof(note, recipient);
    expect(response.status).toBe(201);
    return ((await response.json()) as { proofId: string }).proofId;
  }

  const mint = (proofId: string, recipient: `0x${string}` = alice.address, on: RunningApi = api) =>
    on.call("/v1/mint", json({ amount: "100", collateralType: "ZEC", proofId, recipient }));

  const proof = async (proofId: string, on: RunningApi = api) =>
    (await (await on.call(`/v1/proofs/${proofId}`)).json()) as {
      status: string;
      mintId: string | null;
      rejectionReason: string | null;
    };

  /** Moves the deposit tree on and lets the current root grow older than the minter allows. */
  async function expireCurrentRoot() {
    await s.deposit(createNote(), 400_000_000n);
    await s.increaseTime(MAX_ROOT_AGE + 1);
  }

  it("a mint that fails gives its proof back, and the same proof mints once the cause is gone", async () => {
    const note = createNote();
    await deposit(note);
    const proofId = await verifiedProof(note);
    // Queued before the pause (a mint refused at once would queue nothing): the relay meets it.
    const first = await mint(proofId);
    expect(first.status).toBe(202);
    await s.receipt(await s.as(pauser).minter.write.pause());
    api.worker!.start();
    try {
      const { mintId } = (await first.json()) as { mintId: string };
      expect(await settledMint(api, mintId)).toMatchObject({ status: "failed", failureCode: "enforced_pause" });
      expect(await proof(proofId)).toMatchObject({ status: "verified", mintId: null });
    } finally {
      await s.receipt(await s.as(pauser).minter.write.unpause());
    }
    const again = await mint(proofId);
    expect(again.status).toBe(202);
    const { mintId } = (await again.json()) as { mintId: string };
    expect(await settledMint(api, mintId)).toMatchObject({ status: "confirmed" });
    expect(await proof(proofId)).toMatchObject({ status: "consumed", mintId });
  });

  it("a mint that fails because another proof minted the deposit rejects its proof (it can never mint)", async () => {
    await api.worker!.stop();
    const note = createNote();
    await deposit(note);
    const proofId = await verifiedProof(note);
    const { mintId } = (await (await mint(proofId)).json()) as { mintId: string };
    const other = await s.prove({ note, amountZat: 400_000_000n, mintAmount: 10n * ZSD, recipient: bob.address });
    await s.receipt(await s.as(bob).minter.write.mint([other.proof, other.request]));
    api.worker!.start();
    expect(await settledMint(api, mintId)).toMatchObject({
      status: "failed",
      failureReason: expect.stringMatching(/already minted by another proof/),
    });
    expect(await proof(proofId)).toMatchObject({
      status: "rejected",
      mintId,
      rejectionReason: expect.stringMatching(/already minted/),
    });
    expect((await mint(proofId)).status).toBe(409);
  });

  it("a proof whose mint failed after its root expired is rejected, and a new proof of the deposit goes through", async () => {
    await api.worker!.stop();
    const note = createNote();
    await deposit(note);
    const proofId = await verifiedProof(note);
    const { mintId } = (await (await mint(proofId)).json()) as { mintId: string };
    await expireCurrentRoot();
    api.worker!.start();
    expect(await settledMint(api, mintId)).toMatchObject({ status: "failed" });
    expect(await proof(proofId)).toMatchObject({
      status: "rejected",
      rejectionReason: expect.stringMatching(/root/),
    });
    const fresh = await verifiedProof(note);
    const queued = await mint(fresh);
    expect(queued.status).toBe(202);
    expect(await settledMint(api, ((await queued.json()) as { mintId: string }).mintId)).toMatchObject({
      status: "confirmed",
    });
  });

  it("a verified proof whose root expired is refused at mint time and gives way to a new proof of its deposit", async () => {
    const note = createNote();
    await deposit(note);
    const stale = await verifiedProof(note);
    await expireCurrentRoot();
    const refused = await mint(stale);
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ code: "root_expired" });
    expect(await db.query("SELECT id FROM mints WHERE proof_id = $1", [stale])).toHaveLength(0);

    // An idle proof with an expired root does not hold its deposit either.
    const idleNote = createNote();
    await deposit(idleNote);
    const idle = await verifiedProof(idleNote);
    await expireCurrentRoot();
    const replacement = await submitProof(idleNote);
    expect(replacement.status).toBe(201);
    expect(await proof(idle)).toMatchObject({ status: "rejected", rejectionReason: expect.stringMatching(/root/) });

    const fresh = await verifiedProof(note);
    expect((await mint(fresh)).status).toBe(202);
  });

  it("a proof left consumed by a mint that failed before this release is given back when the worker starts", async () => {
    await api.worker!.stop();
    const note = createNote();
    await deposit(note);
    const proofId = await verifiedProof(note);
    const { mintId } = (await (await mint(proofId)).json()) as { mintId: string };
    // What a failed mint used to leave: the mint failed, its proof still consumed.
    await db.query("UPDATE mints SET status = 'failed', failure_reason = 'paused' WHERE id = $1", [mintId]);
    const restarted = await startRelayApi(s, db, { RATE_LIMIT_SANDBOX: "100000" });
    try {
      restarted.worker!.start();
      await eventually(
        () => proof(proofId),
        (p) => p.status === "verified",
        "the proof to be given back",
      );
    } finally {
      await restarted.close();
    }
    expect((await mint(proofId)).status).toBe(202);
  });

  it("a mint request the chain cannot serve answers 503 and leaves no mint behind, the proof still usable", async () => {
    await api.worker!.stop();
    const rpc = await switchableRpc(s.rpcUrl);
    const viaProxy = await startRelayApi(s, db, { RPC_URL: rpc.url, RATE_LIMIT_SANDBOX: "100000" });
    try {
      const note = createNote();
      await deposit(note);
      const response = await submitProof(note, alice.address, viaProxy);
      expect(response.status).toBe(201);
      const { proofId } = (await response.json()) as { proofId: string };
      rpc.state.down = true;
      const refused = await mint(proofId, alice.address, viaProxy);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ code: "upstream_unavailable" });
      expect(await db.query("SELECT id FROM mints WHERE proof_id = $1", [proofId])).toHaveLength(0);
      expect(await proof(proofId, viaProxy)).toMatchObject({ status: "verified", mintId: null });

      rpc.state.down = false;
      const queued = await mint(proofId, alice.address, viaProxy);
      expect(queued.status).toBe(202);
      const { mintId } = (await queued.json()) as { mintId: string };
      api.worker!.start();
      expect(await settledMint(viaProxy, mintId)).toMatchObject({ status: "confirmed" });
    } finally {
      await viaProxy.close();
      await rpc.close();
    }
  });

  // The mints above (confirmed, failed on-chain, refused) logged no recipient's address.
  it("logs no address of the run: no recipient", () => {
    expect(logs.lines.length).toBeGreaterThan(10);
    expect(addressesIn(logs.lines.join(""), [alice.address, bob.address])).toEqual([]);
  });
});
