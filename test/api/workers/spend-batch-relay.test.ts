// Note spends through the relay in batches: top-ups and note
// withdrawals queued together go out in one StableMinter.spendBatch, each
// simulated alone first; one whose note was spent by another call fails alone
// with its reason, and a batch that reverts anyway (a note spent in the same
// block, ahead of it) is taken apart: the refused spend fails, the others go
// again, each alone.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { type Hex, decodeFunctionData, parseEventLogs } from "viem";
import { describe, expect, it } from "vitest";
import {
  type Note,
  createNote,
  positionManagerAbi,
  positionOwner,
  publicSignalsToArray,
  stableMinterAbi,
} from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, eventually, json, useRelayApi } from "../helpers.ts";

const { alice, bob } = accounts;
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

interface Row {
  id: string;
  action: string;
  status: string;
  tx_hash: string | null;
  failure_code: string | null;
  payout_id: string | null;
  nullifier_hash: string | null;
}

// The worker rests whenever a test deposits: its payouts sign with the attestor's key, as the
// testkit's deposits do, and two senders of one key would race for its nonce.
describe("note spends relayed in batches", () => {
  let s: System;
  let api: RunningApi;
  let db: Database;

  useRelayApi({}, (stack) => ({ s, api, db } = stack));

  const post = async (path: string, body: unknown) => {
    const response = await api.call(path, json(body));
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const binding = () => ({ chainId: BigInt(s.chainId), minter: s.read.minter.address });

  async function open(amountZat: bigint, mint: bigint) {
    const minted = await s.depositAndMint({ amountZat, mintAmount: mint, recipient: alice.address });
    const [opened] = parseEventLogs({
      abi: positionManagerAbi,
      logs: minted.receipt.logs,
      eventName: "PositionOpened",
    });
    return opened!.args.positionId;
  }
  /** A deposited note and a top-up of `positionId` proven from it (1 ZEC of 1.5: change left). */
  async function topUp(positionId: bigint, note = createNote()) {
    await s.deposit(note, 15n * (ZEC / 10n));
    const spent = await s.proveSpend({
      note,
      amountZat: 15n * (ZEC / 10n),
      collateralFloorZat: ZEC,
      binding: { ...binding(), positionId },
    });
    const body = { proof: spent.raw.proof, publicSignals: publicSignalsToArray(spent.raw.publicSignals) };
    return { note, owner: positionOwner(note), spent, queue: () => post(`/v1/positions/${positionId}/top-up`, body) };
  }
  /** A deposited note and its whole 2 ZEC withdrawn to a shielded address, owned by the note's derived owner. */
  async function withdrawal(note: Note = createNote(), deposited = false) {
    if (!deposited) await s.deposit(note, 2n * ZEC);
    const owner = positionOwner(note);
    const sealedAddress = s.seal(SAPLING, owner);
    const spent = await s.proveWithdraw({
      note,
      amountZat: 2n * ZEC,
      collateralFloorZat: 2n * ZEC,
      sealedAddress,
      owner,
    });
    const body = {
      proof: spent.raw.proof,
      publicSignals: publicSignalsToArray(spent.raw.publicSignals),
      sealedAddress,
      owner,
    };
    return { note, owner, spent, queue: () => post("/v1/withdrawals", body) };
  }
  const rows = () =>
    db.query<Row>(
      "SELECT id, action, status, tx_hash, failure_code, payout_id, nullifier_hash FROM position_actions ORDER BY created_at",
    );
  const settled = (count: number) =>
    eventually(
      rows,
      (all) => all.length === count && all.every((r) => r.status === "confirmed" || r.status === "failed"),
      "every spend settled",
      60_000,
    );
  const selector = async (hash: string) => {
    const tx = await s.publicClient.getTransaction({ hash: hash as Hex });
    return decodeFunctionData({ abi: stableMinterAbi, data: tx.input }).functionName;
  };

  it("sends the spends queued together in one spendBatch; one whose note went meanwhile fails alone", async () => {
    const [first, second] = [await open(4n * ZEC, 100n * ZSD), await open(5n * ZEC, 100n * ZSD)];
    const spends = [await topUp(first), await withdrawal(), await topUp(second), await withdrawal()];
    // The culprit: its note queued for a withdrawal, then spent by its owner's own top-up first.
    const culpritNote = createNote();
    await s.deposit(culpritNote, 2n * ZEC);
    const culprit = await withdrawal(culpritNote, true);
    const direct = await s.proveSpend({
      note: culpritNote,
      amountZat: 2n * ZEC,
      collateralFloorZat: 2n * ZEC,
      binding: { ...binding(), positionId: first },
    });
    for (const spend of [...spends, culprit]) expect((await spend.queue()).status).toBe(202);
    await s.receipt(await s.as(bob).minter.write.topUp([direct.proof, direct.spend, first, 0n]));
    const collateralBefore = await Promise.all([first, second].map((id) => s.read.positions.read.getPosition([id])));

    api.worker!.start();
    const all = await settled(5);
    const culpritRow = all.find((r) => r.nullifier_hash === String(culprit.spent.spend.nullifierHash))!;
    expect([culpritRow.status, culpritRow.failure_code]).toEqual(["failed", "nullifier_spent"]);
    const good = all.filter((r) => r !== culpritRow);
    expect(good.map((r) => r.status)).toEqual(["confirmed", "confirmed", "confirmed", "confirmed"]);
    // One transaction carried the four, a spendBatch.
    expect(new Set(good.map((r) => r.tx_hash)).size).toBe(1);
    expect(await selector(good[0]!.tx_hash!)).toBe("spendBatch");
    // Each withdrawal names its own payout, owned by its own owner; each top-up added to its own position.
    for (const [i, spend] of [spends[1]!, spends[3]!].entries()) {
      const row = good.find((r) => r.nullifier_hash === String(spend.spent.spend.nullifierHash))!;
      expect(row.action).toBe("withdraw_note");
      const payout = await s.read.redemptions.read.getPayout([BigInt(row.payout_id!)]);
      expect([payout.owner, payout.zatDue], `withdrawal ${i}`).toEqual([spend.owner, 2n * ZEC]);
    }
    expect(new Set(good.flatMap((r) => (r.payout_id ? [r.payout_id] : []))).size).toBe(2);
    const after = await Promise.all([first, second].map((id) => s.read.positions.read.getPosition([id])));
    expect(after.map((p, i) => p.collateralZat - collateralBefore[i]!.collateralZat)).toEqual([ZEC, ZEC]);
  }, 120_000);

  /**
   * Blocks again on every transaction, and one now: the API's workers go on sending while blocks wait
   * (a payout's settlement, a leaf insertion), and a transaction sent between the test's last block and
   * automine's return would wait for a block no one mines, holding the worker's pass that waits on it.
   * A chain that keeps making blocks mines it; this one is told to.
   */
  async function resumeBlocks() {
    await s.testClient.setAutomine(true);
    await s.testClient.mine({ blocks: 1 });
  }

  it("takes apart a batch that reverts when mined: the spend whose note went ahead of it fails, the others go alone", async () => {
    await api.worker!.stop();
    const position = await open(4n * ZEC, 100n * ZSD);
    const spends = [await topUp(position), await withdrawal(), await withdrawal()];
    const before = new Set((await rows()).map((r) => r.id));
    const target = spends[1]!;
    // The same note proven again, for a top-up its owner sends in the batch's block, ahead of it.
    const ahead = await s.proveSpend({
      note: target.note,
      amountZat: 2n * ZEC,
      collateralFloorZat: 2n * ZEC,
      binding: { ...binding(), positionId: position },
    });
    // Queued while the worker rests, so that one pass finds all three.
    await s.testClient.setAutomine(false);
    try {
      for (const spend of spends) expect((await spend.queue()).status).toBe(202);
      api.worker!.start();
      const ours = () => rows().then((all) => all.filter((r) => !before.has(r.id)));
      const sent = await eventually(
        ours,
        (r) => r.length === 3 && r.every((row) => row.status === "submitted"),
        "the batch sent",
        30_000,
      );
      expect(new Set(sent.map((r) => r.tx_hash)).size).toBe(1);
      const batchHash = sent[0]!.tx_hash as Hex;
      const fees = await s.publicClient.estimateFeesPerGas();
      // A set limit: the node estimates on the pending block, where the batch already spent the note.
      await s.as(bob).minter.write.topUp([ahead.proof, ahead.spend, position, 0n], {
        gas: 1_000_000n,
        maxFeePerGas: fees.maxFeePerGas * 10n,
        maxPriorityFeePerGas: fees.maxFeePerGas * 5n,
      });
      await s.testClient.mine({ blocks: 1 });
      expect((await s.publicClient.getTransactionReceipt({ hash: batchHash })).status).toBe("reverted");
    } finally {
      await resumeBlocks();
    }
    const all = (await settled((await rows()).length)).filter((r) => !before.has(r.id));
    const refused = all.find((r) => r.nullifier_hash === String(target.spent.spend.nullifierHash))!;
    expect([refused.status, refused.failure_code]).toEqual(["failed", "nullifier_spent"]);
    const others = all.filter((r) => r !== refused);
    expect(others.map((r) => r.status)).toEqual(["confirmed", "confirmed"]);
    // Each went again alone, in its own call.
    expect(new Set(others.map((r) => r.tx_hash)).size).toBe(2);
    expect(await Promise.all(others.map((r) => selector(r.tx_hash!)))).toEqual(["topUp", "withdrawNote"]);
  }, 120_000);

  it("confirms a spend its batch carried though the row was sent back to the queue meanwhile, with its own payout", async () => {
    // The race a review found: the batch is mined between a pass's checks and its nonce's reuse, so the
    // rows went back to the queue; the next pass finds each nullifier spent, by a spendBatch.
    // The earlier cases' payouts are settled first: a settlement sent while blocks wait would never be
    // mined, and the worker's pass would wait on it.
    await eventually(
      () =>
        db.query<{ n: string }>(
          "SELECT count(*) AS n FROM payouts WHERE status NOT IN ('completed', 'refunded', 'review')",
        ),
      ([row]) => row?.n === "0",
      "earlier payouts settled",
      60_000,
    );
    await api.worker!.stop();
    const spends = [await withdrawal(), await withdrawal()];
    const before = new Set((await rows()).map((r) => r.id));
    const ours = () => rows().then((all) => all.filter((r) => !before.has(r.id)));
    await s.testClient.setAutomine(false);
    let batchHash: Hex;
    try {
      for (const spend of spends) expect((await spend.queue()).status).toBe(202);
      api.worker!.start();
      const sent = await eventually(
        ours,
        (r) => r.length === 2 && r.every((row) => row.status === "submitted"),
        "sent",
        30_000,
      );
      batchHash = sent[0]!.tx_hash as Hex;
      await api.worker!.stop();
      await s.testClient.mine({ blocks: 1 });
    } finally {
      await resumeBlocks();
    }
    await db.query(
      `UPDATE position_actions SET status = 'queued', tx_hash = NULL, raw_tx = NULL, nonce = NULL WHERE id = ANY($1)`,
      [(await ours()).map((r) => r.id)],
    );
    api.worker!.start();
    const all = (await settled((await rows()).length)).filter((r) => !before.has(r.id));
    const receipt = await s.publicClient.getTransactionReceipt({ hash: batchHash });
    const withdrawn = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "NoteWithdrawn" });
    for (const spend of spends) {
      const row = all.find((r) => r.nullifier_hash === String(spend.spent.spend.nullifierHash))!;
      const own = withdrawn.find((e) => e.args.nullifierHash === spend.spent.spend.nullifierHash)!;
      expect([row.status, row.tx_hash, row.payout_id]).toEqual(["confirmed", batchHash, String(own.args.payoutId)]);
    }
  }, 120_000);

  // Last: it moves the chain's clock most of a day on.
  it("sends alone a spend whose root is about to expire: mined past its expiry, it would revert a batch", async () => {
    // The worker rests while the attestor's key deposits here: its payouts sign with the same key.
    await api.worker!.stop();
    const early = await withdrawal();
    // Its root superseded by a deposit, then nearly a day (maxRootAge) old: five minutes left.
    await s.deposit(createNote(), ZEC);
    await s.increaseTime(86_400 - 300);
    const fresh = [await withdrawal(), await withdrawal()];
    const before = new Set((await rows()).map((r) => r.id));
    for (const spend of [early, ...fresh]) expect((await spend.queue()).status).toBe(202);
    api.worker!.start();
    const all = (await settled((await rows()).length)).filter((r) => !before.has(r.id));
    expect(all.map((r) => r.status)).toEqual(["confirmed", "confirmed", "confirmed"]);
    // The early one alone; the two fresh ones together.
    expect(await Promise.all(all.map((r) => selector(r.tx_hash!)))).toEqual([
      "withdrawNote",
      "spendBatch",
      "spendBatch",
    ]);
    expect(all[1]!.tx_hash).toBe(all[2]!.tx_hash);
  }, 120_000);
});
