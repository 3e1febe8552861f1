// The Zcash side as npm start lays it out: the simulated node and each attestor in its own process.
// A deposit paid into the node is recorded under the signatures those processes give. An attestor
// whose chain node is on another chain than its deployment file names refuses to start.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNote, noteCommitment } from "@zsd/sdk/notes";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { AttestorQuorum } from "../../../api/src/adapters/custody/attestation.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { ZcashdClient } from "../../../api/src/adapters/custody/zcashd.ts";
import { depositMemoHex } from "../../../api/src/adapters/custody/index.ts";
import { LOCAL_ATTESTORS, hardhatAccount, hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type ZcashProcesses, startZcashProcesses } from "../../../scripts/lib/zcash-processes.ts";
import { ROOT } from "../../../scripts/lib/paths.ts";
import { type System, ZEC, deploySystem } from "../../helpers/fixtures.ts";

describe("the Zcash side as processes", () => {
  let s: System;
  let zcash: ZcashProcesses;
  const dir = mkdtempSync(join(tmpdir(), "zsd-zcash-processes-"));

  beforeAll(async () => {
    s = await deploySystem();
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    zcash = await startZcashProcesses({
      deploymentFile,
      rpcUrl: s.rpcUrl,
      attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
      blockMs: 100,
    });
  });
  afterAll(async () => {
    await zcash?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs each attestor with its own key and records a paid deposit under 2 of their signatures", async () => {
    const signers = await Promise.all(
      zcash.attestorUrls.map(
        async (url) => ((await (await fetch(`${url}/v1/health`)).json()) as { signer: string }).signer,
      ),
    );
    expect(signers).toEqual(LOCAL_ATTESTORS.accounts.map((i) => hardhatAccount(i).address));
    const custody = new ZcashdClient(zcash.env.ZCASHD_RPC_URL!, {
      user: zcash.env.ZCASHD_RPC_USER!,
      password: zcash.env.ZCASHD_RPC_PASSWORD!,
    });
    const commitment = noteCommitment(createNote());
    const txid = await custody.call<string>("zsd_receive", [
      zcash.custodyAddress,
      (2n * ZEC).toString(),
      depositMemoHex(commitment),
    ]);
    // Mined within a block interval.
    for (let i = 0; i < 100; i++) {
      const notes = await custody.call<{ txid: string; confirmations: number }[]>("z_listreceivedbyaddress", [
        zcash.custodyAddress,
        1,
      ]);
      if (notes.some((n) => n.txid === txid)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const chain = new Chain(s.deployment, s.rpcUrl, 5_000);
    const calls = new CustodyCalls(
      chain,
      hardhatPrivateKey(1),
      undefined,
      new AttestorQuorum(chain, zcash.attestorUrls),
    );
    const before = await s.read.registry.read.totalDepositedZat();
    await calls.recordDeposits([
      { noteCommitment: commitment, amountZat: 2n * ZEC, zcashTxId: zcashTxIdFromDisplay(txid) },
    ]);
    expect(await s.read.registry.read.totalDepositedZat()).toBe(before + 2n * ZEC);
  });

  it("names to the API the address its node refuses every payment to, which the dashboard's Sandbox page shows", async () => {
    const failing = zcash.env.SANDBOX_FAILING_PAYOUT_ADDRESS;
    expect(failing).toMatch(/^ztestsapling1/);
    const custody = new ZcashdClient(zcash.env.ZCASHD_RPC_URL!, {
      user: zcash.env.ZCASHD_RPC_USER!,
      password: zcash.env.ZCASHD_RPC_PASSWORD!,
    });
    await expect(
      custody.call("z_sendmany", [zcash.custodyAddress, [{ address: failing, amount: 0.001 }], 1, null]),
    ).rejects.toThrow(`refuses every payment to ${failing}`);
  });

  it("refuses to start an attestor whose chain node is on another chain than its deployment file", async () => {
    const start = (deploymentFile: string) =>
      new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "api/src/attestor/main.ts"], {
          cwd: ROOT,
          env: {
            ...process.env,
            ATTESTOR_PRIVATE_KEY: hardhatPrivateKey(LOCAL_ATTESTORS.accounts[0]!),
            ZCASHD_RPC_URL: zcash.env.ZCASHD_RPC_URL!,
            ZCASHD_RPC_USER: zcash.env.ZCASHD_RPC_USER!,
            ZCASHD_RPC_PASSWORD: zcash.env.ZCASHD_RPC_PASSWORD!,
            CUSTODY_ADDRESS: zcash.custodyAddress,
            RPC_URL: s.rpcUrl,
            DEPLOYMENT_FILE: deploymentFile,
            PORT: "0",
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString();
          // Started: stop it, the point is made.
          if (/listening on/.test(stdout)) child.kill("SIGTERM");
        });
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.once("exit", (code) => resolve({ code, stderr, stdout }));
      });
    // The same deployment claimed for chain 1 (mainnet), against this node (a local chain).
    const elsewhere = join(dir, "deployment-chain-1.json");
    writeFileSync(elsewhere, JSON.stringify({ ...s.deployment, chainId: 1 }));
    const refused = await start(elsewhere);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`is on chain ${s.chainId}, but ${elsewhere} is for chain 1; refusing to start`);
    expect(refused.stdout).not.toMatch(/listening on/);
    // Its own deployment file on the same node: it starts.
    const started = await start(join(dir, "deployment.json"));
    expect(started.stdout).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
  });
});
