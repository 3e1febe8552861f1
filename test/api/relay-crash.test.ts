// The relay survives being killed: the API process is SIGKILLed right after
// accepting mints (while its worker signs, records and sends), restarted, and
// every mint a client was told is queued ends confirmed exactly once.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../api/src/adapters/db/index.ts";
import { KeyService } from "../../api/src/domain/keys.ts";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { freePort } from "../../scripts/lib/hardhat-node.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";

const MINTS = 3;

describe("relay worker across crashes", () => {
  let s: System;
  let dir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let secret: string;
  let port: number;
  let child: ChildProcess | undefined;

  async function start() {
    child = spawn(process.execPath, ["--import", "tsx", "api/src/index.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: database.url,
        DEPLOYMENT_FILE: join(dir, "deployment.json"),
        RPC_URL: s.rpcUrl,
        ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(1),
        RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
        RELAY_POLL_MS: "10",
        // The restarted process is the same replica: it takes its lease back without waiting for it to expire.
        RELAY_WORKER_ID: "crash-test-replica",
        LOG_LEVEL: "silent",
      },
      stdio: "ignore",
    });
    for (let i = 0; i < 150; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/v1/health`)).ok) return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error("the API did not start");
  }

  async function kill() {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    // The API itself is gone (no wrapper process left serving).
    await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow();
  }

  const call = (path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: body ? "POST" : "GET",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: body ? JSON.stringify(body) : undefined,
    });

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-relay-crash-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    database = await createTestDatabase("zsd_relay_crash");
    const db = await openDatabase({ url: database.url });
    const keys = new KeyService(db);
    secret = (await keys.create((await keys.createAccount("crash test")).id, "sandbox", "crash")).secret;
    await db.close();
    port = await freePort();
  });

  afterAll(async () => {
    await kill();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("confirms every accepted mint exactly once after SIGKILLs", async () => {
    const supply = await s.read.token.read.totalSupply();
    const mintIds: string[] = [];
    for (let i = 0; i < MINTS; i++) {
      await start();
      const note = createNote();
      expect(
        (await call("/v1/sandbox/deposits", { amount: "3", noteCommitment: noteCommitment(note).toString() })).status,
      ).toBe(201);
      const proved = await s.prove({
        note,
        amountZat: 300_000_000n,
        mintAmount: 10n * ZSD,
        recipient: accounts.carol.address,
      });
      const proof = (await (
        await call("/v1/proofs/submit", {
          proof: proved.raw.proof,
          publicSignals: publicSignalsToArray(proved.raw.publicSignals),
          mintAmount: "10",
          recipient: accounts.carol.address,
        })
      ).json()) as { proofId: string };
      const queued = await call("/v1/mint", {
        amount: "10",
        collateralType: "ZEC",
        proofId: proof.proofId,
        recipient: accounts.carol.address,
      });
      expect(queued.status).toBe(202);
      mintIds.push(((await queued.json()) as { mintId: string }).mintId);
      // Killed while the worker picks the mint up: before, during or after it sends.
      await new Promise((r) => setTimeout(r, [0, 15, 40][i]));
      await kill();
    }

    await start();
    for (const mintId of mintIds) {
      let mint: { status: string; txHash: string } | undefined;
      for (let i = 0; i < 300 && mint?.status !== "confirmed"; i++) {
        mint = (await (await call(`/v1/mints/${mintId}`)).json()) as { status: string; txHash: string };
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
