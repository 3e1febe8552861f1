// POST /v1/proofs/submit and GET /v1/proofs/{id} with real proofs on a live node.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../scripts/lib/paths.ts";
import {
  DepositTree,
  createNote,
  depositLeaf,
  noteCommitment,
  proveCollateral,
  publicSignalsToArray,
} from "@zsd/sdk/notes";
import { PROVING_ARTIFACTS, type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, json, startApi, startRelayApi, useRelayApi } from "../helpers.ts";

const { alice, bob, relayer } = accounts;

describe("proofs", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  useRelayApi({}, (stack) => ({ s, api, db } = stack));

  /** A deposit and a proof for it, as the SDK would send them. */
  async function provedBody(recipient = alice.address) {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({
      note,
      amountZat: 4n * ZEC,
      mintAmount: 100n * ZSD,
      recipient,
      relayer: relayer.address,
      fee: ZSD,
    });
    return {
      note,
      proved,
      body: {
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "100",
        recipient,
        relayer: relayer.address,
        fee: "1",
      },
    };
  }

  async function problemCode(response: Response) {
    expect(response.headers.get("content-type")).toMatch(/problem\+json/);
    return ((await response.json()) as { code: string }).code;
  }

  it("tells a client the relay's terms and serves the circuit it proves with", async () => {
    const response = await api.call("/v1/relay", { key: null });
    expect(response.status).toBe(200);
    const relay = (await response.json()) as {
      relayer: string;
      chainId: number;
      contracts: Record<string, { address: string }>;
      fee: { minimum: string };
      circuit: Record<"wasm" | "zkey", { url: string; sha256: string }> & { verificationKeySha256: string };
    };
    expect(relay).toMatchObject({
      object: "relay",
      environment: "sandbox",
      relayer: api.worker!.address,
      chainId: s.deployment.chainId,
      fee: { minimum: "0" },
      confirmations: { mint: 1, payout: 1 },
      // A proof for less is refused at submission (PositionManager.minDebt()).
      minting: { minimumAmount: "1" },
    });
    expect(relay.contracts.StableMinter!.address).toBe(s.deployment.contracts.StableMinter!.address);
    const manifest = JSON.parse(readFileSync(join(ROOT, "circuits", "build", "manifest.json"), "utf8"));
    expect(relay.circuit.verificationKeySha256).toBe(manifest.verificationKeySha256);
    for (const name of ["wasm", "zkey"] as const) {
      const artifact = await api.call(relay.circuit[name].url, { key: null });
      expect(artifact.status).toBe(200);
      const bytes = Buffer.from(await artifact.arrayBuffer());
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(manifest[`${name}Sha256`]);
      expect(relay.circuit[name].sha256).toBe(manifest[`${name}Sha256`]);
    }
  });

  it("refuses at once a proof that pays another relayer, or less than the relay's minimum fee", async () => {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({
      note,
      amountZat: 4n * ZEC,
      mintAmount: 100n * ZSD,
      recipient: alice.address,
      relayer: bob.address,
      fee: ZSD,
    });
    const body = {
      proof: proved.raw.proof,
      publicSignals: publicSignalsToArray(proved.raw.publicSignals),
      owner: proved.binding.owner,
      mintAmount: "100",
      recipient: alice.address,
      relayer: bob.address,
      fee: "1",
    };
    const other = await api.call("/v1/proofs/submit", json(body));
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({
      code: "relayer_mismatch",
      expected: { relayer: api.worker!.address, minimumFee: "0" },
    });

    const dearer = await startRelayApi(s, db, { RELAY_MIN_FEE: "2" });
    try {
      const cheap = await dearer.call("/v1/proofs/submit", json((await provedBody()).body));
      expect(cheap.status).toBe(422);
      expect(await cheap.json()).toMatchObject({
        code: "fee_below_minimum",
        expected: { relayer: dearer.worker!.address, minimumFee: "2" },
      });
      expect((await (await dearer.call("/v1/relay", { key: null })).json()).fee).toEqual({ minimum: "2" });
    } finally {
      await dearer.close();
    }
  });

  it("refuses at once a proof that mints less than a position's least debt, naming the least", async () => {
    // The mint would revert DebtBelowMinimum on-chain; before, the proof was stored and only the mint refused it.
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({
      note,
      amountZat: 4n * ZEC,
      mintAmount: ZSD / 2n,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 0n,
    });
    const response = await api.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "0.5",
        recipient: alice.address,
        relayer: relayer.address,
        fee: "0",
      }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toMatch(/problem\+json/);
    const problem = (await response.json()) as { code: string; errors: { field: string; message: string }[] };
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors).toEqual([
      { field: "body.mintAmount", message: expect.stringMatching(/^must be at least 1 ZSD, the least debt/) },
    ]);
    const stored = await db.query("SELECT 1 FROM proofs WHERE nullifier_hash = $1", [
      BigInt(proved.raw.publicSignals.nullifierHash).toString(),
    ]);
    expect(stored).toHaveLength(0);
  });

  it("verifies a proof, stores it, and shows it to its account only", async () => {
    const { body, proved } = await provedBody();
    const response = await api.call("/v1/proofs/submit", json(body));
    expect(response.status).toBe(201);
    const record = (await response.json()) as Record<string, unknown> & { proofId: string };
    expect(record).toMatchObject({
      object: "proof",
      status: "verified",
      proofHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      publicInputs: {
        root: proved.request.root.toString(),
        nullifierHash: proved.request.nullifierHash.toString(),
        collateralFloorZat: (4n * ZEC).toString(),
        bindingHash: proved.raw.publicSignals.bindingHash.toString(),
      },
      mintAmount: "100",
      fee: "1",
      recipient: alice.address,
      relayer: relayer.address,
      mintId: null,
    });
    expect(await (await api.call(`/v1/proofs/${record.proofId}`)).json()).toEqual(record);

    const other = await api.keys.createAccount("someone else");
    const { secret } = await api.keys.create(other.id, "sandbox", "theirs");
    expect((await api.call(`/v1/proofs/${record.proofId}`, { key: secret })).status).toBe(404);

    // The same proof again, and another proof for the same deposit.
    const again = await api.call("/v1/proofs/submit", json(body));
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "proof_already_submitted", proofId: record.proofId });
  });

  it("refuses a second live claim on the same deposit", async () => {
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const submit = async (recipient: `0x${string}`) => {
      const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 50n * ZSD, recipient });
      return api.call(
        "/v1/proofs/submit",
        json({
          proof: proved.raw.proof,
          publicSignals: publicSignalsToArray(proved.raw.publicSignals),
          owner: proved.binding.owner,
          mintAmount: "50",
          recipient,
        }),
      );
    };
    expect((await submit(alice.address)).status).toBe(201);
    const second = await submit(bob.address);
    expect(second.status).toBe(409);
    expect(await problemCode(second)).toBe("nullifier_claimed");
  });

  it("refuses a proof bound to other values, a forged proof and malformed fields", async () => {
    const { body } = await provedBody();
    const otherRecipient = await api.call("/v1/proofs/submit", json({ ...body, recipient: bob.address }));
    expect(otherRecipient.status).toBe(422);
    expect(await problemCode(otherRecipient)).toBe("binding_mismatch");
    const otherFee = await api.call("/v1/proofs/submit", json({ ...body, fee: "2" }));
    expect(await problemCode(otherFee)).toBe("binding_mismatch");

    const forged = { ...body.proof, pi_a: [body.proof.pi_c[0], body.proof.pi_c[1], "1"] };
    const invalid = await api.call("/v1/proofs/submit", json({ ...body, proof: forged }));
    expect(invalid.status).toBe(422);
    expect(await problemCode(invalid)).toBe("invalid_proof");

    const short = await api.call("/v1/proofs/submit", json({ ...body, publicSignals: body.publicSignals.slice(0, 3) }));
    expect(short.status).toBe(400);
    expect(((await short.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toContain(
      "body.publicSignals",
    );
    const badAmount = await api.call("/v1/proofs/submit", json({ ...body, mintAmount: "1e3" }));
    expect(badAmount.status).toBe(400);
  });

  it("refuses a proof against a root the registry never had", async () => {
    const note = createNote();
    const leaf = depositLeaf(4n * ZEC, noteCommitment(note));
    const binding = {
      chainId: BigInt(s.chainId),
      minter: s.read.minter.address,
      recipient: alice.address,
      relayer: relayer.address,
      fee: ZSD,
      mintAmount: 100n * ZSD,
      owner: alice.address,
    };
    const raw = await proveCollateral(
      {
        note,
        amountZat: 4n * ZEC,
        path: new DepositTree([leaf, 123n]).path({ leaf }),
        collateralFloorZat: 4n * ZEC,
        binding,
      },
      PROVING_ARTIFACTS,
    );
    const response = await api.call(
      "/v1/proofs/submit",
      json({
        proof: raw.proof,
        publicSignals: publicSignalsToArray(raw.publicSignals),
        owner: binding.owner,
        mintAmount: "100",
        recipient: alice.address,
        relayer: relayer.address,
        fee: "1",
      }),
    );
    expect(response.status).toBe(422);
    expect(await problemCode(response)).toBe("unknown_root");
  });

  it("refuses a deposit whose nullifier is already spent on-chain", async () => {
    const { body, proved } = await provedBody();
    await s.receipt(await s.as(relayer).minter.write.mint([proved.proof, proved.request]));
    const response = await api.call("/v1/proofs/submit", json(body));
    expect(response.status).toBe(409);
    expect(await problemCode(response)).toBe("nullifier_spent");
  });

  it("refuses a proof whose root was replaced longer ago than the minter allows", async () => {
    const { body } = await provedBody();
    await s.deposit(createNote(), ZEC);
    await s.increaseTime(Number(await s.read.minter.read.maxRootAge()) + 1);
    const response = await api.call("/v1/proofs/submit", json(body));
    expect(response.status).toBe(422);
    expect(await problemCode(response)).toBe("root_expired");
  });

  it("answers 503 when no deployment is configured", async () => {
    const bare = await startApi(db);
    try {
      const proof = {
        pi_a: ["1", "2", "1"],
        pi_b: [
          ["1", "2"],
          ["3", "4"],
          ["1", "0"],
        ],
        pi_c: ["1", "2", "1"],
        protocol: "groth16",
        curve: "bn128",
      };
      const response = await bare.call(
        "/v1/proofs/submit",
        json({
          proof,
          publicSignals: ["0", "1", "2", "3", "4"],
          mintAmount: "1",
          recipient: alice.address,
          owner: alice.address,
        }),
      );
      expect(response.status).toBe(503);
    } finally {
      await bare.close();
    }
  });
});
