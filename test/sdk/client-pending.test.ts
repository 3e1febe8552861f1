// A change note between its spend and the tree, or a note released
// from a closed position (queued the same way since queueNote): the registry queues
// its leaf, which has no path until an insertion takes it. The SDK and the CLI,
// against the real stack (chain, indexer, API), find such a leaf in the queue
// (GET /v1/deposits/pending) and wait for it with progress instead of failing
// after the few seconds an unindexed deposit gets; past their patience they fail
// with `leaf_pending`. A leaf neither in the tree nor queued fails as before.
// The relay's worker is not started: the tests insert the queue themselves.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MintStep, Zsd } from "@zsd/sdk/client";
import { parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { closeTypedData } from "@zsd/sdk";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk/abis";
import {
  type Note,
  changeNote,
  createNote,
  encodeNote,
  noteCommitment,
  positionOwnerKey,
  releaseProver,
} from "@zsd/sdk/notes";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../scripts/lib/indexer-process.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { type RunningApi, openStorage, startRelayApi } from "../api/helpers.ts";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";

const { alice, bob } = accounts;
const CLI = join(ROOT, "sdk", "js", "bin", "zsd.js");

describe("a change note queued for the tree, on the real stack", () => {
  let s: System;
  let indexer: RunningIndexer;
  let indexerDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let dir: string;
  let zsd: Zsd;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-pending-"));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    indexer = await startIndexer({
      rpcUrl: s.rpcUrl,
      deploymentFile,
      databaseUrl: (indexerDb = await createTestDatabase("zsd_indexer")).url,
      schema: "zsd_pending",
    });
    storage = await openStorage("postgres");
    api = await startRelayApi(s, storage.db, { INDEXER_URL: indexer.url });
    zsd = new Zsd(api.secret, { baseUrl: api.url });
  });
  afterAll(async () => {
    await api?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  /** A 4 ZEC note minted at a 3 ZEC floor: its change note (1 ZEC) is queued, not in the tree. */
  async function queuedChange(): Promise<Note> {
    const note = createNote();
    await s.depositAndMint({
      note,
      amountZat: 4n * ZEC,
      collateralFloorZat: 3n * ZEC,
      mintAmount: 50n * ZSD,
      recipient: bob.address,
    });
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
    return changeNote(note);
  }

  /** Every queued leaf into the tree, passed as the API lists the queue (the registry takes no other leaves at those sequences). */
  async function insertQueue() {
    const queue = (await zsd.ledger.pendingLeaves()).data;
    await s.receipt(
      await s
        .as(bob)
        .registry.write.insertPendingLeaves([BigInt(queue[0]!.sequence), queue.map((d) => BigInt(d.leaf))]),
    );
  }

  it("waits for a queued change leaf with progress, then proves it once an insertion takes it", async () => {
    const note = await queuedChange();
    const queue = await zsd.ledger.pendingLeaves();
    expect(queue.data).toHaveLength(1);
    const steps: MintStep[] = [];
    let inserting: Promise<void> | undefined;
    const started = Date.now();
    const body = await zsd.prove({
      note,
      noteAmount: "1",
      amount: "10",
      recipient: alice.address,
      onProgress: (step) => {
        steps.push(step);
        // Inserted only once the SDK said it waits: it must not have failed before.
        if (step.step === "pending" && !inserting) {
          inserting = new Promise((r) => setTimeout(r, 2_500)).then(insertQueue);
        }
      },
    });
    await inserting;
    const pending = steps.filter((step) => step.step === "pending");
    // Polled about once a second for the 2.5 s the test held the insertion back.
    expect(pending.length).toBeGreaterThanOrEqual(2);
    expect(pending[0]).toEqual({ step: "pending", sequence: queue.data[0]!.sequence, queuedFor: expect.any(Number) });
    const waited = pending.map((step) => (step as { queuedFor: number }).queuedFor);
    expect(waited[0]).toBeGreaterThanOrEqual(0);
    expect(waited.at(-1)!).toBeGreaterThan(waited[0]!);
    // Then the tree again, with the leaf in it, and the proof.
    const after = steps.slice(steps.lastIndexOf(pending.at(-1)!) + 1).map((step) => step.step);
    expect(after).toEqual(expect.arrayContaining(["tree", "proving"]));
    expect(Date.now() - started).toBeGreaterThan(2_500);
    // The API verifies it against a root the chain knows: the leaf really was in the tree it proved against.
    const verified = await zsd.proofs.submit(body);
    expect(verified).toMatchObject({ status: "verified" });
  });

  it("waits the same way for a note released from a closed position: queued too, its amount public", async () => {
    const opened = createNote();
    const minted = await s.depositAndMint({
      note: opened,
      amountZat: 3n * ZEC,
      mintAmount: 50n * ZSD,
      recipient: bob.address,
    });
    const [position] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    const id = position!.args.positionId;
    await s.receipt(await s.as(bob).minter.write.repay([id, 50n * ZSD, 0n]));
    // The owner closes into a new note: signed with the key the opening note derives, sent by anyone.
    const next = createNote();
    const to = { sealedAddress: "0x" as const, noteCommitment: noteCommitment(next) };
    const owner = privateKeyToAccount(positionOwnerKey(opened));
    const deadline = (await s.publicClient.getBlock()).timestamp + 3600n;
    const signature = await owner.signTypedData(
      closeTypedData(
        { chainId: s.chainId, verifyingContract: s.read.minter.address },
        {
          positionId: id,
          maxDebt: 0n,
          minZatOut: 0n,
          ...to,
          nonce: await s.read.minter.read.nonces([owner.address]),
          deadline,
        },
      ),
    );
    const receipt = await s.receipt(await s.as(bob).minter.write.closeWithSig([id, 0n, 0n, to, deadline, signature]));
    const [released] = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "CollateralReleased" });
    await waitForBlock(indexer.url, receipt.blockNumber, { nudge: () => s.mineBlocks(1) });
    const [queued] = (await zsd.ledger.pendingLeaves()).data;
    expect(queued).toMatchObject({ sequence: Number(released!.args.noteSequence) });
    const steps: MintStep[] = [];
    let inserting: Promise<void> | undefined;
    const body = await zsd.prove({
      note: next,
      noteAmount: "3",
      amount: "10",
      recipient: alice.address,
      onProgress: (step) => {
        steps.push(step);
        if (step.step === "pending" && !inserting) inserting = insertQueue();
      },
    });
    await inserting;
    expect(steps.find((step) => step.step === "pending")).toEqual({
      step: "pending",
      sequence: Number(released!.args.noteSequence),
      queuedFor: expect.any(Number),
    });
    expect(await zsd.proofs.submit(body)).toMatchObject({ status: "verified" });
  });

  it("fails with leaf_pending once its patience is over, while the leaf still waits", async () => {
    const note = await queuedChange();
    const steps: MintStep[] = [];
    const started = Date.now();
    const failure = await zsd
      .prove({
        note,
        noteAmount: "1",
        amount: "10",
        recipient: alice.address,
        pendingTimeoutMs: 1_500,
        onProgress: (step) => steps.push(step),
      })
      .catch((error: unknown) => error);
    const elapsed = Date.now() - started;
    expect(failure).toMatchObject({ code: "leaf_pending", message: expect.stringMatching(/queue/) });
    expect(elapsed).toBeGreaterThanOrEqual(1_500);
    // Well under the 10 s an unknown leaf gets: the queue answers at once.
    expect(elapsed).toBeLessThan(8_000);
    expect(steps.some((step) => step.step === "pending")).toBe(true);
    expect(steps.some((step) => step.step === "proving")).toBe(false);
    expect((await zsd.ledger.pendingLeaves()).data).toHaveLength(1);
    await insertQueue();
  });

  it("keeps today's answer for a leaf neither in the tree nor queued: deposit_not_found, no pending step", async () => {
    const note = await queuedChange();
    await insertQueue();
    const steps: MintStep[] = [];
    // The wrong amount: another leaf, which no one queued or inserted.
    const failure = await zsd
      .prove({
        note,
        noteAmount: "0.5",
        amount: "10",
        recipient: alice.address,
        onProgress: (step) => steps.push(step),
      })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "deposit_not_found" });
    expect(steps.map((step) => step.step)).not.toContain("pending");
  });

  it("the CLI says it waits for the tree, and proves once the leaf is inserted", async () => {
    const note = await queuedChange();
    const [queued] = (await zsd.ledger.pendingLeaves()).data;
    const child = spawn(
      process.execPath,
      [CLI, "prove", "--note-amount", "1", "--amount", "10", "--recipient", alice.address, "--json"],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          ZSD_API_KEY: api.secret,
          ZSD_BASE_URL: api.url,
          ZSD_NOTE: encodeNote(note),
          ZSD_PROGRESS: "1",
        },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    const told = new Promise<void>((resolve) =>
      child.stderr.on("data", (d: Buffer) => {
        stderr += d;
        if (/waiting for the tree/.test(stderr)) resolve();
      }),
    );
    const exited = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)));
    await Promise.race([told, exited]);
    expect(stderr).toMatch(
      new RegExp(`waiting for the tree: the note's leaf is number ${queued!.sequence} in the registry's queue`),
    );
    await insertQueue();
    expect(await exited, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ recipient: alice.address, publicSignals: expect.any(Array) });
  });
});
