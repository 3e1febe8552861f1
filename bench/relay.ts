// Queued mints confirmed per second through the relay, with proofs made
// beforehand, and the time of each stage. Writes bench/results/relay.json.
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

const MINTS = Number(process.env.RELAY_MINTS ?? 60);
const TARGET_PER_SECOND = 10;

const node = await startHardhatNode();
const dir = mkdtempSync(join(tmpdir(), "zsd-bench-relay-"));
try {
  const s = await createSystem(node.rpcUrl);
  writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
  const db = await openDatabase({});
  const config = loadConfig({
    LOG_LEVEL: "silent",
    DEPLOYMENT_FILE: join(dir, "deployment.json"),
    RPC_URL: node.rpcUrl,
    RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
    RELAY_POLL_MS: "5",
    RATE_LIMIT_SANDBOX: "1000000",
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

  // Proofs beforehand (not timed): one deposit each, then every proof against the final tree.
  const notes = Array.from({ length: MINTS }, () => createNote());
  for (const note of notes) await s.deposit(note, 3n * ZEC);
  console.log(`proving ${MINTS} mints…`);
  const proofs = [];
  for (const note of notes) {
    proofs.push(await s.prove({ note, amountZat: 3n * ZEC, mintAmount: 10n * ZSD, recipient: accounts.carol.address }));
  }

  const verifyMs: number[] = [];
  const queueMs: number[] = [];
  const mintIds: string[] = [];
  for (const proved of proofs) {
    let t = performance.now();
    const submitted = await post("/v1/proofs/submit", {
      proof: proved.raw.proof,
      publicSignals: publicSignalsToArray(proved.raw.publicSignals),
      owner: proved.binding.owner,
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
    mintIds.push(((await queued.json()) as { mintId: string }).mintId);
    queueMs.push(performance.now() - t);
  }

  // The worker starts with all mints queued: confirmed per second from here.
  const started = performance.now();
  worker!.start();
  for (;;) {
    const [{ done }] = await db.query<{ done: number }>(
      "SELECT count(*)::int AS done FROM mints WHERE status IN ('confirmed', 'failed')",
    );
    if (Number(done) >= MINTS) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const seconds = (performance.now() - started) / 1000;
  await worker!.stop();
  const rows = await db.query<{ status: string; created_at: Date; submitted_at: Date; settled_at: Date }>(
    "SELECT status, created_at, submitted_at, settled_at FROM mints",
  );
  const failed = rows.filter((r) => r.status !== "confirmed").length;
  const confirmMs = rows.map((r) => new Date(r.settled_at).getTime() - new Date(r.submitted_at).getTime());
  const supply = await s.read.token.read.totalSupply();
  if (supply !== BigInt(MINTS) * 10n * ZSD) throw new Error(`supply ${supply} after ${MINTS} mints`);

  const results = {
    measuredAt: new Date().toISOString(),
    machine: "2 cores, Hardhat automine, PGlite; noisy",
    mints: MINTS,
    failed,
    confirmedPerSecond: Math.round((MINTS / seconds) * 10) / 10,
    drainSeconds: Math.round(seconds * 100) / 100,
    stagesMs: {
      verify: summarize(verifyMs),
      queue: summarize(queueMs),
      submitToConfirmed: summarize(confirmMs),
      submitPerMint: Math.round((seconds * 1000 * 10) / MINTS) / 10,
    },
    target: { confirmedPerSecond: TARGET_PER_SECOND },
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "relay.json"), JSON.stringify(results, null, 2) + "\n");
  console.log(
    `\n${MINTS} queued mints confirmed in ${results.drainSeconds} s: ${results.confirmedPerSecond}/s (target >= ${TARGET_PER_SECOND}), ${failed} failed`,
  );
  console.log(`verify (POST /v1/proofs/submit) median ${results.stagesMs.verify.median} ms`);
  console.log(`queue (POST /v1/mint) median ${results.stagesMs.queue.median} ms`);
  console.log(
    `submit → confirmed median ${results.stagesMs.submitToConfirmed.median} ms; worker time per mint ${results.stagesMs.submitPerMint} ms`,
  );
  console.log("\nwrote bench/results/relay.json");
  server.close();
  await db.close();
} finally {
  await releaseProver();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
}
