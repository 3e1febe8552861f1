// The relay survives being killed: the API process is SIGKILLed right after
// accepting mints (while its worker signs, records and sends), restarted, and
// every mint a client was told is queued ends confirmed exactly once.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../api/src/adapters/db/index.ts";
import { KeyService } from "../../api/src/domain/keys.ts";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type ApiProcess, apiProcess } from "./helpers.ts";

const MINTS = 3;

describe("relay worker across crashes", () => {
  let s: System;
  let dir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let secret: string;
  let api: ApiProcess;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-relay-crash-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    database = await createTestDatabase("zsd_relay_crash");
    const db = await openDatabase({ url: database.url });
    const keys = new KeyService(db);
    secret = (await keys.create((await keys.createAccount("crash test")).id, "sandbox", "crash")).secret;
    await db.close();
    api = await apiProcess(secret, {
      DATABASE_URL: database.url,
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: s.rpcUrl,
      ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(1),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RELAY_POLL_MS: "10",
      // The restarted process is the same replica: it takes its lease back without waiting for it to expire.
      RELAY_WORKER_ID: "crash-test-replica",
    });
  });

  afterAll(async () => {
    await api.kill();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("confirms every accepted mint exactly once after SIGKILLs", async () => {
    const supply = await s.read.token.read.totalSupply();
    const mintIds: string[] = [];
    for (let i = 0; i < MINTS; i++) {
      await api.start();
      const note = createNote();
      expect(
        (await api.call("/v1/sandbox/deposits", { amount: "3", noteCommitment: noteCommitment(note).toString() }))
          .status,
      ).toBe(201);
      const proved = await s.prove({
        note,
        amountZat: 300_000_000n,
        mintAmount: 10n * ZSD,
        recipient: accounts.carol.address,
      });
      const proof = (await (
        await api.call("/v1/proofs/submit", {
          proof: proved.raw.proof,
          publicSignals: publicSignalsToArray(proved.raw.publicSignals),
          owner: proved.binding.owner,
          mintAmount: "10",
          recipient: accounts.carol.address,
        })
      ).json()) as { proofId: string };
      const queued = await api.call("/v1/mint", {
        amount: "10",
        collateralType: "ZEC",
        proofId: proof.proofId,
        recipient: accounts.carol.address,
      });
      expect(queued.status).toBe(202);
      mintIds.push(((await queued.json()) as { mintId: string }).mintId);
      // Killed while the worker picks the mint up: before, during or after it sends.
      await new Promise((r) => setTimeout(r, [0, 15, 40][i]));
      await api.kill();
    }

    await api.start();
    for (const mintId of mintIds) {
      let mint: { status: string; txHash: string } | undefined;
      for (let i = 0; i < 300 && mint?.status !== "confirmed"; i++) {
        mint = (await (await api.call(`/v1/mints/${mintId}`)).json()) as { status: string; txHash: string };
        if (mint.status === "failed") throw new Error(`mint ${mintId} failed: ${JSON.stringify(mint)}`);
        if (mint.status !== "confirmed") await new Promise((r) => setTimeout(r, 50));
      }
      expect(mint).toMatchObject({ status: "confirmed", txHash: expect.stringMatching(/^0x/) });
    }
    expect(await s.read.token.read.totalSupply()).toBe(supply + BigInt(MINTS) * 10n * ZSD);
    const minted = await s.publicClient.getContractEvents({
      address: s.read.minter.address,
      abi: s.read.minter.abi,
      eventName: "Minted",
      args: { recipient: accounts.carol.address },
      fromBlock: BigInt(s.deployment.contracts.StableMinter.startBlock),
    });
    expect(minted).toHaveLength(MINTS);
  });
});
