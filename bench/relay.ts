// Queued mints confirmed per second through the relay, with proofs made
// beforehand, and the time of each stage: the same number of mints relayed
// one a transaction, then in batches (mintBatch, up to 16), in the same run.
// Writes bench/results/relay.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, loadConfig, openDatabase } from "@zsd/api";
import { hardhatPrivateKey } from "../scripts/lib/accounts.ts";
import { startHardhatNode } from "../scripts/lib/hardhat-node.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { createNote, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { ZEC, ZSD, accounts, createSystem } from "@zsd/testkit";
import { summarize } from "./stats.ts";

const MINTS = Number(process.env.RELAY_MINTS ?? 48);
const TARGET_PER_SECOND = 60;
/** Batched over unbatched, measured in the same run. */
const TARGET_SPEEDUP = 3;
const BATCH = 16;

const node = await startHardhatNode();
const dir = mkdtempSync(join(tmpdir(), "zsd-bench-relay-"));
try {
  const s = await createSystem(node.rpcUrl);
  writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));

  // Proofs beforehand (not timed): one deposit each, then every proof against the final tree.
  const notes = Array.from({ length: 2 * MINTS }, () => createNote());
  for (const note of notes) await s.deposit(note, 3n * ZEC);
  console.log(`proving ${2 * MINTS} mints…`);
  const proofs: Awaited<ReturnType<typeof s.prove>>[] = [];
  for (const note of notes) {
    proofs.push(await s.prove({ note, amountZat: 3n * ZEC, mintAmount: 10n * ZSD, recipient: accounts.carol.address }));
  }

  /** Queues `proved` through a fresh API (its own database) relaying up to `batchMax` mints a transaction, then drains the queue. */
  async function round(batchMax: number, proved: typeof proofs) {
    const db = await openDatabase({});
    const config = loadConfig({
      LOG_LEVEL: "silent",
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: node.rpcUrl,
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RELAY_POLL_MS: "5",
      RATE_LIMIT_SANDBOX: "1000000",
      RELAY_MINT_BATCH_MAX: String(batchMax),
      RELAY_MINT_BATCH_WAIT_MS: "0",
    });
    const { app, keys, worker } = createApp({ config, db });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { secret } = await keys.create((await keys.createAccount("bench")).id, "sandbox", "bench");
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    const verifyMs: number[] = [];
    const queueMs: number[] = [];
    for (const p of proved) {
      let t = performance.now();
      const submitted = await post("/v1/proofs/submit", {
        proof: p.raw.proof,
        publicSignals: publicSignalsToArray(p.raw.publicSignals),
        owner: p.binding.owner,
        mintAmount: "10",
        recipient: accounts.carol.address,
      });
      if (submitted.status !== 201) throw new Error(`submit: ${await submitted.text()}`);
      const { proofId } = (await submitted.json()) as { proofId: string };
      verifyMs.push(performance.now() - t);
      t = performance.now();
      const queued = await post("/v1/mint", {
        amount: "10",
        collateralType: "ZEC",
        proofId,
        recipient: accounts.carol.address,
      });
      if (queued.status !== 202) throw new Error(`mint: ${await queued.text()}`);
      queueMs.push(performance.now() - t);
    }

    // The worker starts with all mints queued: confirmed per second from here.
    const supplyBefore = await s.read.token.read.totalSupply();
    const started = performance.now();
    worker!.start();
    for (;;) {
      const [{ done }] = await db.query<{ done: number }>(
        "SELECT count(*)::int AS done FROM mints WHERE status IN ('confirmed', 'failed')",
      );
      if (Number(done) >= proved.length) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const seconds = (performance.now() - started) / 1000;
    await worker!.stop();
    const rows = await db.query<{ status: string; submitted_at: Date; settled_at: Date; tx_hash: string }>(
      "SELECT status, submitted_at, settled_at, tx_hash FROM mints",
    );
    const failed = rows.filter((r) => r.status !== "confirmed").length;
    const confirmMs = rows.map((r) => new Date(r.settled_at).getTime() - new Date(r.submitted_at).getTime());
    const supply = (await s.read.token.read.totalSupply()) - supplyBefore;
    if (supply !== BigInt(proved.length) * 10n * ZSD) throw new Error(`supply +${supply} after ${proved.length} mints`);
    server.close();
    await db.close();
    return {
      batchMax,
      mints: proved.length,
      failed,
      transactions: new Set(rows.map((r) => r.tx_hash)).size,
      confirmedPerSecond: Math.round((proved.length / seconds) * 10) / 10,
      drainSeconds: Math.round(seconds * 100) / 100,
      stagesMs: {
        verify: summarize(verifyMs),
        queue: summarize(queueMs),
        submitToConfirmed: summarize(confirmMs),
        submitPerMint: Math.round((seconds * 1000 * 10) / proved.length) / 10,
      },
    };
  }

  const unbatched = await round(1, proofs.slice(0, MINTS));
  const batched = await round(BATCH, proofs.slice(MINTS));
  const speedup = Math.round((batched.confirmedPerSecond / unbatched.confirmedPerSecond) * 10) / 10;

  const results = {
    measuredAt: new Date().toISOString(),
    machine: "2 cores, Hardhat automine, PGlite; noisy",
    mints: MINTS,
    unbatched,
    batched,
    speedup,
    target: { confirmedPerSecond: TARGET_PER_SECOND, speedup: TARGET_SPEEDUP },
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "relay.json"), JSON.stringify(results, null, 2) + "\n");
  for (const r of [unbatched, batched]) {
    console.log(
      `\n${r.batchMax === 1 ? "unbatched" : `batched (up to ${r.batchMax})`}: ${r.mints} queued mints confirmed in ${r.drainSeconds} s, ${r.transactions} transactions: ${r.confirmedPerSecond}/s, ${r.failed} failed`,
    );
    console.log(`  verify (POST /v1/proofs/submit) median ${r.stagesMs.verify.median} ms`);
    console.log(`  queue (POST /v1/mint) median ${r.stagesMs.queue.median} ms`);
    console.log(
      `  submit → confirmed median ${r.stagesMs.submitToConfirmed.median} ms; worker time per mint ${r.stagesMs.submitPerMint} ms`,
    );
  }
  console.log(
    `\nbatched ${batched.confirmedPerSecond}/s (target >= ${TARGET_PER_SECOND}), ${speedup}x unbatched (target >= ${TARGET_SPEEDUP}x)`,
  );
  console.log("\nwrote bench/results/relay.json");
} finally {
  await releaseProver();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
}
