// The Ponder indexer against a real Hardhat node, real contracts and real
// proofs, on embedded PGlite and on PostgreSQL: after a scripted sequence every
// derived figure equals what the chain says, also after a shallow revert and
// after its head subscription would have gone silent; positions follow their
// own events; failed payouts are held until their owners redirect them, and
// positions under 100% are redistributed, with every total still the
// contracts'. It is internal: no SQL over HTTP, no CORS, no internals in its
// errors.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  type Address,
  type Hex,
  type TransactionReceipt,
  encodeAbiParameters,
  keccak256,
  parseEventLogs,
  toHex,
  zeroAddress,
} from "viem";
import { DEV_SEAL_KEY, sealBytes } from "@zsd/sdk/seal";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, positionManagerAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { usdValueOfZat } from "@zsd/sdk/units";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIndexer, startIndexer, waitForBlock } from "../../scripts/lib/indexer-process.ts";
import {
  DepositTree,
  changeNote,
  createNote,
  depositLeaf,
  noteCommitment,
  positionOwner,
  positionOwnerKey,
  releaseProver,
} from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type ChainProxy, startChainProxy } from "./chain-proxy.ts";

const { alice, bob, carol, relayer, custody, deployer } = accounts;
const STATES = ["pending", "active", "canceled", "defeated", "succeeded", "queued", "expired", "executed"];
const SAPLING = "ztestsapling1indexertest";
const SAPLING_2 = "ztestsapling1indexerredirect";
/** PositionManager's PositionStatus, by value. */
const POSITION_STATUS = ["none", "open", "liquidated", "closed"];
/** Redemptions' Status, by value, as the indexer names them. */
const REDEMPTION_STATUS = ["none", "requested", "paid", "failed", "redirected"];
// The contracts check an envelope's shape and key, not whom it opens for: the indexer never opens one.
const toAddress = (zcashAddress: string) => ({
  sealedAddress: sealBytes(
    DEV_SEAL_KEY,
    { chainId: 31337, redemptions: zeroAddress, owner: zeroAddress },
    new TextEncoder().encode(zcashAddress),
  ),
  noteCommitment: 0n,
});
const toNewNote = () => ({ sealedAddress: "0x" as Hex, noteCommitment: noteCommitment(createNote()) });

interface IndexedPosition {
  id: string;
  owner: string;
  status: string;
  collateralZat: string;
  debt: string;
  openedAtBlock: string;
  updatedAtBlock: string;
  lastTxHash: string;
}
type PositionPage = { positions: IndexedPosition[]; hasMore: boolean };

async function get<T = Record<string, unknown>>(indexer: RunningIndexer, path: string): Promise<T> {
  const response = await fetch(`${indexer.url}${path}`);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

interface PendingLeaves {
  pending: {
    sequence: string;
    leaf: string;
    amountZat: string;
    blockNumber: string;
    timestamp: string;
    txHash: string;
  }[];
  queuedCount: string;
}

const LOW_192 = (1n << 192n) - 1n;
/** The registry's queue chain folded over `leaves` from `h`: each link the low 192 bits of keccak256(abi.encode(h, leaf)). */
function chainOver(h: Hex, leaves: readonly bigint[]): Hex {
  for (const leaf of leaves) {
    const link = BigInt(keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [h, leaf])));
    h = toHex(link & LOW_192, { size: 32 });
  }
  return h;
}

describe.each(["pglite", "postgres"] as const)("indexer on %s", (database) => {
  // PGlite (the default store) runs the sequences that exercise the store: writes, a revert, the routes.
  const full = database === "postgres";
  let s: System;
  let indexer: RunningIndexer;
  let proxy: ChainProxy;
  let databaseUrl: string | undefined;
  const cleanup: (() => Promise<void> | void)[] = [];
  const holders = [alice, bob, carol, relayer].map((a) => a.address);
  let proposal: { id: bigint; targets: Address[]; values: bigint[]; calldatas: Hex[]; descriptionHash: Hex };

  /** Waits until the indexer has processed the chain head. */
  async function caughtUp() {
    await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { nudge: () => s.mineBlocks(1) });
  }

  /**
   * Inserts the first `count` queued leaves (all by default; at least one must wait), passing them and their first
   * sequence as the indexer lists them: the registry refuses other leaves at those sequences, so this also checks the
   * route. Returns the receipt.
   */
  async function insertPending(count?: number) {
    await caughtUp();
    const { pending } = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(pending.length, "leaves queued").toBeGreaterThan(0);
    const leaves = pending.slice(0, count ?? pending.length).map((p) => BigInt(p.leaf));
    return s.receipt(await s.as(bob).registry.write.insertPendingLeaves([BigInt(pending[0]!.sequence), leaves]));
  }

  /**
   * Every figure the indexer derives, checked against the contracts. The
   * indexer is eventually consistent (after a reorg its status can move on a
   * moment before the rolled-back rows are visible), so the comparison is
   * retried for a few seconds; a wrong figure still fails.
   */
  async function expectMatchesChain() {
    await caughtUp();
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await compareWithChain();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Every page of `/positions?<query>`, 100 at a time. */
  async function indexedPositions(query = ""): Promise<IndexedPosition[]> {
    const all: IndexedPosition[] = [];
    for (;;) {
      const params = new URLSearchParams(query);
      params.set("limit", "100");
      if (all.length > 0) params.set("startingAfter", all.at(-1)!.id);
      const page = await get<PositionPage>(indexer, `/positions?${params}`);
      all.push(...page.positions);
      if (!page.hasMore) return all;
    }
  }

  async function compareWithChain() {
    const r = s.read;
    const supply = await get<{ circulating: string; minted: string; burned: string; holders: number }>(
      indexer,
      "/supply",
    );
    const totalSupply = await r.token.read.totalSupply();
    expect(BigInt(supply.circulating)).toBe(totalSupply);
    expect(BigInt(supply.minted) - BigInt(supply.burned)).toBe(totalSupply);
    let nonZero = 0;
    for (const address of holders) {
      const balance = await r.token.read.balanceOf([address]);
      if (balance > 0n) nonZero++;
      expect(BigInt((await get<{ balance: string }>(indexer, `/accounts/${address}`)).balance), address).toBe(balance);
    }
    expect(supply.holders).toBe(nonZero);

    const collateral = await get<Record<string, string>>(indexer, "/collateral");
    expect(BigInt(collateral.outstandingZat!)).toBe(await r.registry.read.totalCollateralZat());
    expect(BigInt(collateral.depositedZat!)).toBe(await r.registry.read.totalDepositedZat());
    expect(BigInt(collateral.paidOutZat!)).toBe(await r.registry.read.totalPaidOutZat());
    expect(BigInt(collateral.pendingRedemptionZat!)).toBe(await r.redemptions.read.pendingZatDue());
    expect(BigInt(collateral.unmintedZat!)).toBe(await r.registry.read.unmintedZat());

    // Every payout record: its owner, amount and state; the failed ones are the ZEC held.
    let held = 0n;
    const redemptionCount = await r.redemptions.read.payoutCount();
    for (let id = 1n; id <= redemptionCount; id++) {
      const live = await r.redemptions.read.getPayout([id]);
      const row = await get<Record<string, string>>(indexer, `/redemptions/${id}`);
      expect([row.owner, row.amount, row.zatDue, row.status], `payout ${id}`).toEqual([
        live.owner,
        String(live.amount),
        String(live.zatDue),
        REDEMPTION_STATUS[live.status],
      ]);
      if (live.status === 3) held += live.zatDue;
    }
    expect(BigInt(collateral.heldPayoutZat!)).toBe(held);
    const [, answer] = await r.oracle.read.latestRoundData();
    expect(BigInt(collateral.price!)).toBe(answer);
    const value = usdValueOfZat(await r.registry.read.totalCollateralZat(), answer);
    expect(BigInt(collateral.valueUsd!)).toBe(value);
    if (totalSupply > 0n) expect(BigInt(collateral.collateralRatioBps!)).toBe((value * 10_000n) / totalSupply);

    // Positions: every one the position manager has, its owner and status; and its
    // amounts too once it has no debt (redemptions only move positions with debt).
    expect(BigInt(collateral.positionCollateralZat!)).toBe(await r.positions.read.totalPositionCollateralZat());
    expect(BigInt(collateral.backingCollateralZat!)).toBe(await r.positions.read.backingCollateralZat());
    expect(BigInt(collateral.freeCollateralZat!)).toBe(await r.positions.read.freeCollateralZat());
    const count = await r.positions.read.positionCount();
    const positions = await indexedPositions();
    expect(positions.map((p) => p.id)).toEqual(Array.from({ length: Number(count) }, (_, i) => String(i + 1)));
    for (const p of positions) {
      const live = await r.positions.read.getPosition([BigInt(p.id)]);
      expect([p.owner, p.status], `position ${p.id}`).toEqual([live.owner, POSITION_STATUS[live.status]]);
      if (p.status !== "open" || p.debt === "0") {
        expect([BigInt(p.collateralZat), BigInt(p.debt)], `position ${p.id}`).toEqual([live.collateralZat, live.debt]);
      }
    }
    expect((await indexedPositions("status=open")).map((p) => p.id)).toEqual(
      positions.filter((p) => p.status === "open").map((p) => p.id),
    );

    // The queue: every leaf still pending, in order (the chain from the head's checkpoint over them ends at the
    // registry's last checkpoint), and the count ever queued.
    const queue = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queue.pending).toHaveLength(Number(await r.registry.read.pendingCount()));
    const [inserted, queued] = await Promise.all([r.registry.read.insertedCount(), r.registry.read.queuedCount()]);
    expect(
      chainOver(
        await r.registry.read.chainAt([inserted]),
        queue.pending.map((p) => BigInt(p.leaf)),
      ),
    ).toBe(await r.registry.read.chainAt([queued]));
    expect(BigInt(queue.queuedCount)).toBe(queued);
    const sequences = queue.pending.map((p) => BigInt(p.sequence));
    expect(sequences).toEqual(sequences.map((_, i) => BigInt(queue.queuedCount) - BigInt(sequences.length - i)));

    const { deposits } = await get<{ deposits: { leaf: string }[] }>(indexer, "/deposits?from=0&limit=5000");
    expect(deposits).toHaveLength(Number(await r.registry.read.size()));
    expect(new DepositTree(deposits.map((d) => BigInt(d.leaf))).root).toBe(await r.registry.read.root());

    if (proposal) {
      const p = await get<Record<string, string>>(indexer, `/proposals/${proposal.id}`);
      const [against, forVotes, abstain] = await r.governor.read.proposalVotes([proposal.id]);
      expect([BigInt(p.againstVotes!), BigInt(p.forVotes!), BigInt(p.abstainVotes!)]).toEqual([
        against,
        forVotes,
        abstain,
      ]);
      expect(p.state).toBe(STATES[await r.governor.read.state([proposal.id])]);
    }
  }

  beforeAll(async () => {
    s = await deploySystem();
    const dir = mkdtempSync(join(tmpdir(), "zsd-indexer-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    if (database === "postgres") {
      const db = await createTestDatabase("zsd_indexer");
      cleanup.push(db.drop);
      databaseUrl = db.url;
    }
    // The indexer reaches the node through a proxy that can silence WebSockets.
    proxy = await startChainProxy(s.rpcUrl);
    cleanup.unshift(() => proxy.close());
    indexer = await startIndexer({
      rpcUrl: proxy.url,
      deploymentFile,
      databaseUrl,
      pgliteDirectory: join(dir, "pglite"),
      schema: "zsd_test",
    });
    cleanup.unshift(() => indexer.stop());
  });

  afterAll(async () => {
    for (const step of cleanup) await step();
    await releaseProver();
  });

  it("derives supply, balances, collateral, mints and redemptions from a scripted sequence", async () => {
    await s.depositAndMint({
      amountZat: 6n * ZEC,
      mintAmount: 150n * ZSD,
      recipient: alice.address,
      relayer: relayer.address,
      fee: 2n * ZSD,
    });
    const bobMint = await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 80n * ZSD, recipient: bob.address });
    await s.deposit(createNote(), 1n * ZEC + 7n);
    // Leaves in batches: three deposits published with their total only, then
    // two relayed mints whose change leaves (1 ZEC each) are queued and enter the tree together.
    const firstBatchIndex = Number(await s.read.registry.read.size());
    const batchLeaves = [2n * ZEC, 3n * ZEC, ZEC + 1n].map((a) => depositLeaf(a, noteCommitment(createNote())));
    await s.receipt(await s.sendDeposits(batchLeaves, 6n * ZEC + 1n));
    const batchNotes = [createNote(), createNote()];
    for (const note of batchNotes) await s.deposit(note, 4n * ZEC);
    const batchMints: Awaited<ReturnType<System["prove"]>>[] = [];
    for (const note of batchNotes) {
      batchMints.push(
        await s.prove({
          note,
          amountZat: 4n * ZEC,
          collateralFloorZat: 3n * ZEC,
          mintAmount: 60n * ZSD,
          recipient: carol.address,
        }),
      );
    }
    await s.receipt(
      await s.as(relayer).minter.write.mintBatch([batchMints.map((m) => m.proof), batchMints.map((m) => m.request)]),
    );
    await insertPending();
    await s.receipt(await s.as(alice).token.write.transfer([carol.address, 20n * ZSD]));
    await s.setPrice(48_50000000n);

    // Alice redeems (paid); Bob redeems through a relayer with a signature (failed: held for him).
    // Addresses go sealed to custody's key: the indexer keeps only the envelope's hash.
    const aliceSealed = s.seal(SAPLING, alice.address);
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, aliceSealed]));
    const bobSealed = s.seal(SAPLING, bob.address);
    const sig = await s.signedRedeem(bob, 30n * ZSD, bobSealed);
    await s.receipt(
      await s
        .as(relayer)
        .redemptions.write.redeemWithPermit([bob.address, 30n * ZSD, 0n, bobSealed, sig.deadline, sig.v, sig.r, sig.s]),
    );
    const txid = `0x${"cd".repeat(32)}` as Hex;
    await s.receipt(await s.as(custody).redemptions.write.completePayout([1n, txid]));
    await s.receipt(await s.as(custody).redemptions.write.failPayout([2n, "custody rejected the address"]));

    await expectMatchesChain();

    const batched = await get<{ deposits: Record<string, unknown>[] }>(
      indexer,
      `/deposits?from=${firstBatchIndex}&limit=7`,
    );
    const root = String(await s.read.registry.read.root());
    // Every deposit is a batch's (the two of 4 ZEC alone, each a batch of one): the amount private, its bound
    // the batch's total less a zatoshi for each other leaf (exact for a batch of one); change unbounded.
    expect(batched.deposits.map((d) => [d.index, d.kind, d.amountZat, d.maxAmountZat])).toEqual([
      [firstBatchIndex, "batch-deposit", "0", String(6n * ZEC - 1n)],
      [firstBatchIndex + 1, "batch-deposit", "0", String(6n * ZEC - 1n)],
      [firstBatchIndex + 2, "batch-deposit", "0", String(6n * ZEC - 1n)],
      [firstBatchIndex + 3, "batch-deposit", "0", String(4n * ZEC)],
      [firstBatchIndex + 4, "batch-deposit", "0", String(4n * ZEC)],
      [firstBatchIndex + 5, "change", "0", "0"],
      [firstBatchIndex + 6, "change", "0", "0"],
    ]);
    // Only a batch's last leaf has a root: the registry never had one between its leaves (nor between the
    // leaves of one insertion of the queue).
    expect(batched.deposits.slice(5).map((d) => [d.leaf, d.root])).toEqual([
      [String(batchMints[0]!.request.changeLeaf), "0"],
      [String(batchMints[1]!.request.changeLeaf), root],
    ]);
    expect(batched.deposits.slice(0, 3).map((d) => d.root === "0")).toEqual([true, true, false]);
    // A batched deposit's amount is private, bounded by its batch's total (less a zatoshi for each other
    // leaf), and counted with the change leaves, which are never candidates.
    const all = (
      await get<{ deposits: { kind: string; amountZat: string; maxAmountZat: string }[] }>(
        indexer,
        "/deposits?limit=5000",
      )
    ).deposits;
    expect(all.filter((d) => d.kind === "batch-deposit").every((d) => d.amountZat === "0")).toBe(true);
    // Candidates from the events: a note whose amount reaches the floor, and of a batch of n leaves and
    // total T whose bound reaches it, min(n, floor(T / floor)): no more of them can hold it at once.
    const events = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      fromBlock: 0n,
    });
    // A note's amount is public from its LeafQueued; it counts once its leaf is in the tree.
    const noteAmounts = new Map(
      events.flatMap((e) =>
        e.eventName === "LeafQueued" && e.args.amountZat! > 0n ? [[e.args.leaf!, e.args.amountZat!] as const] : [],
      ),
    );
    const candidatesAt = (floor: bigint) =>
      events.reduce((n, e) => {
        if (e.eventName === "PendingLeavesInserted") {
          return n + e.args.leaves!.filter((leaf) => (noteAmounts.get(leaf) ?? 0n) >= floor).length;
        }
        if (e.eventName !== "DepositsRecorded") return n;
        const size = BigInt(e.args.leaves!.length);
        const total = e.args.totalZat!;
        if (total - (size - 1n) < floor) return n;
        return n + Number(total / floor < size ? total / floor : size);
      }, 0);
    // At 3 ZEC the batch of three (6 ZEC and a zatoshi) holds two such deposits at most, though each
    // leaf's bound (6 ZEC less a zatoshi) reaches it; at 6 ZEC less a zatoshi, one.
    const leafBound = (floor: bigint) =>
      all.filter((d) => d.kind !== "change" && BigInt(d.maxAmountZat) >= floor).length;
    expect(candidatesAt(3n * ZEC)).toBe(leafBound(3n * ZEC) - 1);
    expect(candidatesAt(6n * ZEC - 1n)).toBe(leafBound(6n * ZEC - 1n) - 2);
    for (const floor of [1n, ZEC, 3n * ZEC, 4n * ZEC + 1n, 6n * ZEC - 1n, 6n * ZEC, 7n * ZEC]) {
      const anonymity = await get<Record<string, number>>(indexer, `/anonymity?floorZat=${floor}`);
      expect(anonymity, `floor ${floor}`).toMatchObject({
        candidates: candidatesAt(floor),
        hiddenAmountLeaves: all.filter((d) => d.kind === "change" || d.kind === "batch-deposit").length,
        leaves: all.length,
      });
    }
    // A floor of 0: every leaf of private amount holds a zatoshi at least, so each batch counts whole.
    const anonymity = await get<Record<string, number>>(indexer, "/anonymity?floorZat=0");
    expect(anonymity.candidates).toBe(candidatesAt(1n));
    expect(anonymity.hiddenAmountLeaves).toBeGreaterThanOrEqual(5);

    const mint = await get<Record<string, string>>(indexer, `/mints/${bobMint.request.nullifierHash}`);
    expect(mint).toMatchObject({
      recipient: bob.address,
      amount: String(80n * ZSD),
      fee: "0",
      txHash: bobMint.receipt.transactionHash,
    });
    const paid = await get<Record<string, string>>(indexer, "/redemptions/1");
    expect(paid).toMatchObject({
      status: "paid",
      owner: alice.address,
      zcashTxId: txid,
      sealedAddressHash: keccak256(aliceSealed),
    });
    expect(paid).not.toHaveProperty("withdrawAddress");
    const failed = await get<Record<string, string>>(indexer, "/redemptions/2");
    expect(failed).toMatchObject({
      status: "failed",
      owner: bob.address,
      failureReason: "custody rejected the address",
      redirectedToId: null,
    });
    // Nothing came back: the ZEC stays owed (pending) and held for Bob.
    const held = BigInt(failed.zatDue!);
    let totals = await get<Record<string, string>>(indexer, "/collateral");
    expect(BigInt(totals.heldPayoutZat!)).toBe(held);
    expect(BigInt(totals.pendingRedemptionZat!)).toBe(held);

    // Carol's redemption fails too. Bob redirects his to another address (a new
    // payout, which custody pays), Carol hers into a note.
    await s.receipt(await s.as(carol).redemptions.write.redeem([10n * ZSD, s.seal(SAPLING, carol.address)]));
    await s.receipt(await s.as(custody).redemptions.write.failPayout([3n, "address unreachable"]));
    await expectMatchesChain();
    const carolZat = (await s.read.redemptions.read.getPayout([3n])).zatDue;
    totals = await get<Record<string, string>>(indexer, "/collateral");
    expect(BigInt(totals.heldPayoutZat!)).toBe(held + carolZat);
    const unmintedBefore = BigInt(totals.unmintedZat!);

    const bobSealed2 = s.seal(SAPLING_2, bob.address);
    const toAddress2 = await s.receipt(await s.as(bob).redemptions.write.redirect([2n, bobSealed2, 0n]));
    const carolCommitment = noteCommitment(createNote());
    const toNote = await s.receipt(await s.as(carol).redemptions.write.redirect([3n, "0x", carolCommitment]));
    const [{ args: redirect }] = parseEventLogs({
      abi: redemptionsAbi,
      logs: toNote.logs,
      eventName: "PayoutRedirected",
    });
    await expectMatchesChain();
    totals = await get<Record<string, string>>(indexer, "/collateral");
    expect([BigInt(totals.heldPayoutZat!), BigInt(totals.pendingRedemptionZat!)]).toEqual([0n, held]);
    expect(BigInt(totals.unmintedZat!)).toBe(unmintedBefore + carolZat);
    expect(await get(indexer, "/redemptions/2")).toMatchObject({
      status: "redirected",
      failureReason: "custody rejected the address",
      redirectedToId: "4",
      redirectNoteSequence: null,
      redirectTxHash: toAddress2.transactionHash,
    });
    expect(await get(indexer, "/redemptions/4")).toMatchObject({
      status: "requested",
      owner: bob.address,
      amount: "0",
      zatDue: String(held),
      sealedAddressHash: keccak256(bobSealed2),
      redirectedFromId: "2",
      requestTxHash: toAddress2.transactionHash,
    });
    expect(redirect).toMatchObject({ id: 3n, newId: 0n });
    expect(await get(indexer, "/redemptions/3")).toMatchObject({
      status: "redirected",
      owner: carol.address,
      redirectedToId: null,
      redirectNoteSequence: String(redirect.noteSequence),
      redirectTxHash: toNote.transactionHash,
    });
    // Carol's note is queued, its amount public (and unminted already, above); no leaf in the tree yet.
    const carolLeaf = depositLeaf(carolZat, carolCommitment);
    const queued = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queued.pending.map((p) => [p.sequence, p.leaf, p.amountZat])).toEqual([
      [String(redirect.noteSequence), String(carolLeaf), String(carolZat)],
    ]);
    const noteRow = async () =>
      (await get<{ deposits: Record<string, unknown>[] }>(indexer, "/deposits?limit=5000")).deposits.find(
        (d) => d.leaf === String(carolLeaf),
      );
    expect(await noteRow()).toBeUndefined();
    // A public amount makes it a candidate for floors up to it, once in the tree.
    const candidates = async () =>
      (await get<{ candidates: number }>(indexer, `/anonymity?floorZat=${carolZat}`)).candidates;
    const candidatesQueued = await candidates();
    // Inserted, it is a note with its amount; the unminted ZEC counted it once, when queued.
    await insertPending();
    await expectMatchesChain();
    expect(await candidates()).toBe(candidatesQueued + 1);
    expect(await noteRow()).toMatchObject({
      kind: "note",
      amountZat: String(carolZat),
      maxAmountZat: String(carolZat),
      root: String(await s.read.registry.read.root()),
    });
    expect(BigInt((await get<Record<string, string>>(indexer, "/collateral")).unmintedZat!)).toBe(
      unmintedBefore + carolZat,
    );

    // Custody pays the redirected payout: nothing is owed any more.
    await s.receipt(await s.as(custody).redemptions.write.completePayout([4n, `0x${"ef".repeat(32)}`]));
    await expectMatchesChain();
    expect(await get(indexer, "/redemptions/4")).toMatchObject({ status: "paid", redirectedFromId: "2" });
    totals = await get<Record<string, string>>(indexer, "/collateral");
    expect([BigInt(totals.heldPayoutZat!), BigInt(totals.pendingRedemptionZat!)]).toEqual([0n, 0n]);
    expect((await fetch(`${indexer.url}/redemptions/99`)).status).toBe(404);
    expect((await fetch(`${indexer.url}/accounts/0x1234`)).status).toBe(400);
    const page = await get<{ deposits: { index: number }[]; next: number | null }>(indexer, "/deposits?from=1&limit=1");
    expect(page).toEqual({ deposits: [expect.objectContaining({ index: 1 })], next: 2 });
  });

  it("follows the queue of change leaves: queued, inserted in part, a duplicate dropped", async () => {
    const mints = [];
    for (let i = 0; i < 3; i++) {
      // A floor below the note's amount: the rest is change, queued.
      mints.push(
        await s.depositAndMint({
          amountZat: 2n * ZEC,
          collateralFloorZat: ZEC,
          mintAmount: 20n * ZSD,
          recipient: carol.address,
        }),
      );
    }
    const [a, b, c] = mints.map((m) => m.request.changeLeaf);
    const rows = async (from: number) =>
      (await get<{ deposits: Record<string, unknown>[] }>(indexer, `/deposits?from=${from}`)).deposits;
    await expectMatchesChain();
    let queue = await get<PendingLeaves>(indexer, "/pending-leaves");
    const first = BigInt(queue.queuedCount) - 3n;
    // Each leaf where and when its mint queued it.
    expect(queue.pending).toEqual(
      await Promise.all(
        mints.map(async (m, i) => ({
          sequence: String(first + BigInt(i)),
          leaf: String(m.request.changeLeaf),
          amountZat: "0",
          blockNumber: String(m.receipt.blockNumber),
          timestamp: String((await s.publicClient.getBlock({ blockNumber: m.receipt.blockNumber })).timestamp),
          txHash: m.receipt.transactionHash,
        })),
      ),
    );
    // Queued is not in the tree: no row among the deposits yet.
    const size = Number(await s.read.registry.read.size());
    expect(await rows(size)).toEqual([]);

    // One of three enters the tree; two wait.
    await insertPending(1);
    await expectMatchesChain();
    queue = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queue.pending.map((p) => [p.sequence, p.leaf])).toEqual([
      [String(first + 1n), String(b)],
      [String(first + 2n), String(c)],
    ]);
    const root = String(await s.read.registry.read.root());
    expect((await rows(size)).map((d) => [d.index, d.leaf, d.kind, d.amountZat, d.root])).toEqual([
      [size, String(a), "change", "0", root],
    ]);

    // b's leaf recorded as a deposit meanwhile: the insertion drops it (the tree holds it) and keeps c.
    await s.receipt(await s.sendDeposits([b], ZEC));
    const inserted = await insertPending(2);
    const logs = parseEventLogs({ abi: collateralRegistryAbi, logs: inserted.logs });
    expect(logs.map((l) => l.eventName)).toEqual(["PendingLeafDropped", "PendingLeavesInserted"]);
    await expectMatchesChain();
    queue = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queue).toEqual({ pending: [], queuedCount: String(first + 3n) });
    expect((await rows(size)).map((d) => [d.index, d.leaf, d.kind])).toEqual([
      [size, String(a), "change"],
      [size + 1, String(b), "batch-deposit"],
      [size + 2, String(c), "change"],
    ]);
  });

  const setPrice = async (answer: bigint) => s.setPrice(answer);
  /** A position from a fresh note (ZSD to alice), its owner funded with gas to act itself. */
  async function open(amountZat: bigint, floorZat: bigint, mintAmount: bigint) {
    const note = createNote();
    await s.deposit(note, amountZat);
    const proved = await s.prove({
      note,
      amountZat,
      collateralFloorZat: floorZat,
      mintAmount,
      recipient: alice.address,
    });
    const receipt = await s.receipt(await s.as(relayer).minter.write.mint([proved.proof, proved.request]));
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    const owner = privateKeyToAccount(positionOwnerKey(note));
    await s.testClient.setBalance({ address: owner.address, value: 10n ** 18n });
    return { id: opened!.args.positionId, owner, minter: s.as(owner).minter.write, receipt };
  }
  const row = async (id: bigint) => (await indexedPositions()).find((p) => p.id === String(id));

  /** The position events of `ids` in chain order, read from PostgreSQL (no route serves them). */
  async function positionEvents(ids: bigint[]): Promise<Record<string, string | null>[]> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const events = await client.query<Record<string, string | null>>(
        `SELECT position_id, kind, account, amount, amount_zat, nullifier_hash, payout_id, note_sequence, price,
                reward_zat, debt, collateral_zat
           FROM zsd_test.position_event WHERE position_id = ANY($1) ORDER BY id`,
        [ids.map(String)],
      );
      return events.rows;
    } finally {
      await client.end();
    }
  }

  it("inserts a released note with change from the queue: kinds, public amounts, one root", async () => {
    // The opening queues its change (1 ZEC of a 5 ZEC note over a 4 ZEC floor).
    const p = await open(5n * ZEC, 4n * ZEC, 60n * ZSD);
    const registryLogs = (receipt: TransactionReceipt) =>
      parseEventLogs({
        abi: collateralRegistryAbi,
        logs: receipt.logs.filter((l) => l.address.toLowerCase() === s.read.registry.address.toLowerCase()),
      });
    const [opened] = registryLogs(p.receipt).filter((l) => l.eventName === "LeafQueued");
    const change = opened!.args as { sequence: bigint; leaf: bigint; amountZat: bigint };
    expect(change.amountZat).toBe(0n);
    await expectMatchesChain();
    const unminted = async () => BigInt((await get<Record<string, string>>(indexer, "/collateral")).unmintedZat!);
    const unmintedBefore = await unminted();

    // Half a ZEC released into a new note: queued, its amount public and unminted now.
    const commitment = noteCommitment(createNote());
    const noteLeaf = depositLeaf(ZEC / 2n, commitment);
    const withdrawn = await s.receipt(
      await p.minter.withdrawCollateral([p.id, ZEC / 2n, { sealedAddress: "0x", noteCommitment: commitment }, 0n]),
    );
    const [{ args: released }] = parseEventLogs({
      abi: stableMinterAbi,
      logs: withdrawn.logs,
      eventName: "CollateralReleased",
    });
    expect(released.payoutId).toBe(0n);
    // Then a mint queues its change after the note.
    const minted = await s.depositAndMint({
      amountZat: 2n * ZEC,
      collateralFloorZat: ZEC,
      mintAmount: 20n * ZSD,
      recipient: carol.address,
    });
    await expectMatchesChain();
    expect(await unminted()).toBe(unmintedBefore + ZEC / 2n + ZEC);
    const queue = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queue.pending.map((q) => [q.sequence, q.leaf, q.amountZat])).toEqual([
      [String(change.sequence), String(change.leaf), "0"],
      [String(released.noteSequence), String(noteLeaf), String(ZEC / 2n)],
      [String(released.noteSequence + 1n), String(minted.request.changeLeaf), "0"],
    ]);

    // The opening's change recorded as a deposit meanwhile: one insertion drops it and puts the note and
    // the mint's change in, so the note's amount must follow its own leaf, not its place among the consumed.
    await s.receipt(await s.sendDeposits([change.leaf], ZEC));
    const recordedRoot = String(await s.read.registry.read.root());
    const size = Number(await s.read.registry.read.size());
    const inserted = await insertPending();
    expect(registryLogs(inserted).map((l) => l.eventName)).toEqual(["PendingLeafDropped", "PendingLeavesInserted"]);
    await expectMatchesChain();
    expect(await unminted()).toBe(unmintedBefore + ZEC / 2n + 2n * ZEC);
    const root = String(await s.read.registry.read.root());
    const rows = (await get<{ deposits: Record<string, unknown>[] }>(indexer, `/deposits?from=${size - 1}`)).deposits;
    expect(rows.map((d) => [d.index, d.leaf, d.kind, d.amountZat, d.maxAmountZat, d.root])).toEqual([
      [size - 1, String(change.leaf), "batch-deposit", "0", String(ZEC), recordedRoot],
      [size, String(noteLeaf), "note", String(ZEC / 2n), String(ZEC / 2n), "0"],
      [size + 1, String(minted.request.changeLeaf), "change", "0", "0", root],
    ]);
    expect((await get<PendingLeaves>(indexer, "/pending-leaves")).pending).toEqual([]);
  });

  // Handlers alone, the same on either database: once, on the faster one.
  it.runIf(full)(
    "derives positions from their own events: open, top up, repay, withdraw, liquidate, close, note withdrawal",
    async () => {
      const minter = s.read.minter;
      const binding = { chainId: BigInt(s.chainId), minter: minter.address };
      const [first] = await indexedPositions();

      const a = await open(5n * ZEC, 4n * ZEC, 100n * ZSD);
      const b = await open(3n * ZEC, 3n * ZEC, 60n * ZSD);
      const c = await open(2n * ZEC, 2n * ZEC, 60n * ZSD);
      await expectMatchesChain();
      expect(await row(a.id)).toEqual({
        id: String(a.id),
        owner: a.owner.address,
        status: "open",
        collateralZat: String(4n * ZEC),
        debt: String(100n * ZSD),
        openedAtBlock: String(a.receipt.blockNumber),
        updatedAtBlock: String(a.receipt.blockNumber),
        lastTxHash: a.receipt.transactionHash,
      });

      // a: topped up with 2 ZEC of a 3 ZEC note, repaid by alice, 1 ZEC out to a Zcash address.
      const note = createNote();
      await s.deposit(note, 3n * ZEC);
      const topUp = await s.proveSpend({
        note,
        amountZat: 3n * ZEC,
        collateralFloorZat: 2n * ZEC,
        binding: { ...binding, positionId: a.id },
      });
      await s.receipt(await s.as(relayer).minter.write.topUp([topUp.proof, topUp.spend, a.id, 0n]));
      await s.receipt(await s.as(alice).minter.write.repay([a.id, 30n * ZSD, 0n]));
      const withdrawn = await s.receipt(await a.minter.withdrawCollateral([a.id, ZEC, toAddress(SAPLING), 0n]));
      // b: half a ZEC out to a note, then closed by its owner (with ZSD from alice) to a Zcash address.
      const bWithdrawn = await s.receipt(await b.minter.withdrawCollateral([b.id, ZEC / 2n, toNewNote(), 0n]));
      const [{ args: bReleased }] = parseEventLogs({
        abi: stableMinterAbi,
        logs: bWithdrawn.logs,
        eventName: "CollateralReleased",
      });
      await s.receipt(await s.as(alice).token.write.transfer([b.owner.address, 60n * ZSD]));
      await s.receipt(await b.minter.close([b.id, toAddress(SAPLING)]));
      // The top-up note's 1 ZEC of change leaves without a position, sent by bob
      // for the note's owner key, whose payout it is.
      // Its change is spendable once inserted from the queue.
      await insertPending();
      const outOwner = positionOwner(changeNote(note));
      const outSealed = s.seal(SAPLING, outOwner);
      const out = await s.proveWithdraw({
        note: changeNote(note),
        amountZat: ZEC,
        collateralFloorZat: ZEC,
        sealedAddress: outSealed,
        owner: outOwner,
      });
      const noteOut = await s.receipt(
        await s.as(bob).minter.write.withdrawNote([out.proof, out.spend, outSealed, outOwner]),
      );
      await expectMatchesChain();
      const live = await s.read.positions.read.getPosition([a.id]);
      expect([live.collateralZat, live.debt]).toEqual([5n * ZEC, 70n * ZSD]);
      expect(await row(a.id)).toMatchObject({
        status: "open",
        collateralZat: String(5n * ZEC),
        debt: String(70n * ZSD),
        updatedAtBlock: String(withdrawn.blockNumber),
        lastTxHash: withdrawn.transactionHash,
      });
      expect(await row(b.id)).toMatchObject({ status: "closed", collateralZat: "0", debt: "0" });

      // c: under 120% at $35 (2 ZEC = $70 for $60), liquidated by alice: 1.8 ZEC seized, 0.2 ZEC the owner's.
      await setPrice(35_00000000n);
      await s.receipt(
        await s
          .as(alice)
          .minter.write.liquidate([
            c.id,
            { maxDebt: 60n * ZSD, minSeizedZat: 18n * (ZEC / 10n), minSeizedValue: 60n * ZSD },
            toAddress(SAPLING),
          ]),
      );
      await setPrice(48_50000000n);
      await expectMatchesChain();
      expect(await row(c.id)).toMatchObject({ status: "liquidated", collateralZat: String(ZEC / 5n), debt: "0" });
      await s.receipt(await c.minter.close([c.id, toNewNote()]));
      await expectMatchesChain();
      expect(await row(c.id)).toMatchObject({ status: "closed", collateralZat: "0", debt: "0" });

      // A position opened before the redemptions of the first test keeps the values of its own
      // last event (here its opening); the position manager applies the redemptions since.
      expect(first).toMatchObject({ id: "1", collateralZat: String(6n * ZEC), debt: String(150n * ZSD) });
      expect((await s.read.positions.read.getPosition([1n])).debt).toBeLessThan(150n * ZSD);

      // What a liquidation keeper lists: the open ones by id, page by page.
      const openIds = (await indexedPositions("status=open")).map((p) => p.id);
      expect(openIds).toContain(String(a.id));
      expect(openIds).not.toContain(String(b.id));
      expect(openIds).not.toContain(String(c.id));
      expect(openIds.length).toBeGreaterThan(2);
      const page1 = await get<PositionPage>(indexer, "/positions?status=open&limit=2");
      expect([page1.positions.map((p) => p.id), page1.hasMore]).toEqual([openIds.slice(0, 2), true]);
      const page2 = await get<PositionPage>(indexer, `/positions?status=open&limit=100&startingAfter=${openIds[1]}`);
      expect([page2.positions.map((p) => p.id), page2.hasMore]).toEqual([openIds.slice(2), false]);
      const liquidated = await get<PositionPage>(indexer, "/positions?status=liquidated");
      expect(liquidated).toEqual({ positions: [], hasMore: false });
      for (const query of ["status=pending", "limit=0", "limit=101", "startingAfter=one"]) {
        const response = await fetch(`${indexer.url}/positions?${query}`);
        expect.soft(response.status, query).toBe(400);
        expect.soft(await response.text(), query).toMatch(/^\{"error":"invalid_query"/);
      }

      // The note withdrawal's payout belongs to the owner the proof binds, not to its sender.
      const [{ args: withdrawal }] = parseEventLogs({
        abi: stableMinterAbi,
        logs: noteOut.logs,
        eventName: "NoteWithdrawn",
      });
      expect(await get(indexer, `/redemptions/${withdrawal.payoutId}`)).toMatchObject({
        owner: outOwner,
        amount: "0",
        zatDue: String(ZEC),
        status: "requested",
      });

      // One event row per position event, in chain order (read from PostgreSQL: no route serves them).
      if (databaseUrl) {
        const rows = await positionEvents([a.id, b.id, c.id]);
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        try {
          const ev = (e: Record<string, string | null>) =>
            [e.position_id, e.kind, e.amount, e.amount_zat, e.debt, e.collateral_zat].join(" ");
          const [A, B, C] = [a.id, b.id, c.id];
          expect(rows.map(ev)).toEqual([
            `${A} opened ${100n * ZSD} ${4n * ZEC} ${100n * ZSD} ${4n * ZEC}`,
            `${B} opened ${60n * ZSD} ${3n * ZEC} ${60n * ZSD} ${3n * ZEC}`,
            `${C} opened ${60n * ZSD} ${2n * ZEC} ${60n * ZSD} ${2n * ZEC}`,
            `${A} toppedUp  ${2n * ZEC} ${100n * ZSD} ${6n * ZEC}`,
            `${A} repaid ${30n * ZSD}  ${70n * ZSD} ${6n * ZEC}`,
            `${A} released  ${ZEC} ${70n * ZSD} ${5n * ZEC}`,
            `${B} released  ${ZEC / 2n} ${60n * ZSD} ${(5n * ZEC) / 2n}`,
            `${B} closed ${60n * ZSD} ${(5n * ZEC) / 2n} 0 0`,
            `${B} released  ${(5n * ZEC) / 2n} 0 0`,
            `${C} liquidated ${60n * ZSD} ${(9n * ZEC) / 5n} 0 ${ZEC / 5n}`,
            `${C} released  ${(9n * ZEC) / 5n} 0 ${ZEC / 5n}`,
            `${C} closed 0 ${ZEC / 5n} 0 0`,
            `${C} released  ${ZEC / 5n} 0 0`,
          ]);
          expect(rows[0]!.account).toBe(a.owner.address.toLowerCase());
          expect(rows[3]!.nullifier_hash).toBe(String(topUp.spend.nullifierHash));
          expect(rows[4]!.account).toBe(alice.address.toLowerCase());
          // Released to a Zcash address: a payout; to a note: its place in the registry's queue.
          expect([rows[5]!.payout_id !== null, rows[5]!.note_sequence]).toEqual([true, null]);
          expect([rows[6]!.payout_id, rows[6]!.note_sequence]).toEqual([null, String(bReleased.noteSequence)]);
          expect([rows[9]!.account, rows[9]!.price]).toEqual([alice.address.toLowerCase(), String(35_00000000n)]);
          const withdrawals = await client.query<Record<string, string>>(
            "SELECT nullifier_hash, amount_zat, payout_id, owner, tx_hash FROM zsd_test.note_withdrawal",
          );
          expect(withdrawals.rows).toEqual([
            {
              nullifier_hash: String(out.spend.nullifierHash),
              amount_zat: String(ZEC),
              payout_id: String(withdrawal.payoutId),
              owner: outOwner.toLowerCase(),
              tx_hash: noteOut.transactionHash,
            },
          ]);
        } finally {
          await client.end();
        }
      }
    },
  );

  // Handlers alone, the same on either database: once, on the faster one.
  it.runIf(full)(
    "redistributes positions under 100%: by a keeper for a reward, and inline before a par redemption",
    async () => {
      const positions = s.read.positions;
      const d = await open(2n * ZEC, 2n * ZEC, 60n * ZSD);
      const e = await open(2n * ZEC, 2n * ZEC, 60n * ZSD);
      // At $28 both are worth $56 for $60 of debt; every other position stays above 100%.
      await setPrice(28_00000000n);
      await expectMatchesChain();
      const before = await get<Record<string, string>>(indexer, "/collateral");
      const reward = (2n * ZEC * (await positions.read.redistributionRewardBps())) / 10_000n;
      expect(reward).toBeGreaterThan(0n);

      // Carol redistributes d, for a reward paid to her Zcash address.
      const keeper = await s.receipt(await s.as(carol).minter.write.redistribute([d.id, toAddress(SAPLING)]));
      const [{ args: released }] = parseEventLogs({
        abi: stableMinterAbi,
        logs: keeper.logs,
        eventName: "CollateralReleased",
      });
      expect([released.positionId, released.amountZat]).toEqual([d.id, reward]);
      await expectMatchesChain();
      expect(await row(d.id)).toMatchObject({
        status: "liquidated",
        collateralZat: "0",
        debt: "0",
        lastTxHash: keeper.transactionHash,
      });
      // d's collateral less the reward went into the other positions: only the
      // reward left them, owed to Carol now; custody holds the same ZEC.
      const after = await get<Record<string, string>>(indexer, "/collateral");
      const moved = (key: string) => BigInt(after[key]!) - BigInt(before[key]!);
      expect(
        [
          "positionCollateralZat",
          "backingCollateralZat",
          "freeCollateralZat",
          "pendingRedemptionZat",
          "outstandingZat",
        ].map(moved),
      ).toEqual([-reward, -reward, 0n, reward, 0n]);
      expect(await get(indexer, `/redemptions/${released.payoutId}`)).toMatchObject({
        owner: carol.address,
        amount: "0",
        zatDue: String(reward),
        status: "requested",
      });

      // e took its share of d and is still under 100%: a par redemption redistributes it first, without a reward.
      const live = await positions.read.getPosition([e.id]);
      expect(usdValueOfZat(live.collateralZat, 28_00000000n)).toBeLessThan(live.debt);
      const redeemed = await s.receipt(
        await s.as(alice).redemptions.write.redeem([10n * ZSD, s.seal(SAPLING, alice.address)]),
      );
      const positionLogs = parseEventLogs({
        abi: positionManagerAbi,
        logs: redeemed.logs.filter((l) => l.address.toLowerCase() === positions.address.toLowerCase()),
      });
      expect(positionLogs.map((l) => l.eventName)).toEqual(["PositionRedistributed", "RedeemedFromPositions"]);
      await expectMatchesChain();
      expect(await row(e.id)).toMatchObject({ status: "liquidated", collateralZat: "0", debt: "0" });
      await setPrice(48_50000000n);
      await expectMatchesChain();

      if (databaseUrl) {
        const ev = (x: Record<string, string | null>) =>
          [x.position_id, x.kind, x.account, x.amount, x.amount_zat, x.reward_zat, x.debt, x.collateral_zat].join(" ");
        const [D, E] = [d.id, e.id];
        const [dOwner, eOwner] = [d.owner.address.toLowerCase(), e.owner.address.toLowerCase()];
        const redemptions = s.read.redemptions.address.toLowerCase();
        const rows = await positionEvents([d.id, e.id]);
        expect(rows.map(ev)).toEqual([
          `${D} opened ${dOwner} ${60n * ZSD} ${2n * ZEC}  ${60n * ZSD} ${2n * ZEC}`,
          `${E} opened ${eOwner} ${60n * ZSD} ${2n * ZEC}  ${60n * ZSD} ${2n * ZEC}`,
          `${D} redistributed ${carol.address.toLowerCase()} ${60n * ZSD} ${2n * ZEC} ${reward} 0 0`,
          `${D} released   ${reward}  0 0`,
          `${E} redistributed ${redemptions} ${live.debt} ${live.collateralZat} 0 0 0`,
        ]);
        expect(rows[3]!.payout_id).toBe(String(released.payoutId));
      }
    },
  );

  // Handlers alone, the same on either database: once, on the faster one.
  it.runIf(full)(
    "follows a proposal through vote, queue and execution with the governor's tallies and state",
    async () => {
      const g = s.as(deployer).governor;
      await s.receipt(await s.as(deployer).governanceToken.write.delegate([deployer.address]));
      await s.receipt(await s.as(deployer).governanceToken.write.transfer([alice.address, 100_000n * ZSD]));
      await s.receipt(await s.as(alice).governanceToken.write.delegate([alice.address]));
      await s.mineBlocks(1);
      const description = "Lower the redemption fee to 0.3%";
      const { encodeFunctionData } = await import("viem");
      const targets = [s.read.redemptions.address];
      const values = [0n];
      const calldatas = [
        encodeFunctionData({ abi: s.read.redemptions.abi, functionName: "setRedemptionFee", args: [30n] }),
      ];
      const descriptionHash = keccak256(toHex(description));
      await s.receipt(await g.write.propose([targets, values, calldatas, description]));
      proposal = {
        id: await g.read.hashProposal([targets, values, calldatas, descriptionHash]),
        targets,
        values,
        calldatas,
        descriptionHash,
      };
      await expectMatchesChain(); // pending

      await s.mineBlocks(Number(await g.read.votingDelay()) + 1);
      await expectMatchesChain(); // active
      await s.receipt(await g.write.castVote([proposal.id, 1]));
      await s.receipt(await s.as(alice).governor.write.castVoteWithReason([proposal.id, 0, "fees fund custody"]));
      await expectMatchesChain();

      await s.mineBlocks(Number(await g.read.votingPeriod()));
      await expectMatchesChain(); // succeeded
      await s.receipt(await g.write.queue([targets, values, calldatas, descriptionHash]));
      await expectMatchesChain(); // queued
      await s.increaseTime(Number(await s.read.timelock.read.getMinDelay()) + 1);
      await s.receipt(await g.write.execute([targets, values, calldatas, descriptionHash]));
      await expectMatchesChain(); // executed

      const p = await get<{ state: string; description: string }>(indexer, `/proposals/${proposal.id}`);
      expect(p.state).toBe("executed");
      expect(p.description).toBe(description);
      type Votes = { votes: { voter: string; support: number; reason: string }[]; hasMore: boolean };
      const all = await get<Votes>(indexer, `/proposals/${proposal.id}/votes`);
      expect(all.votes.map((v) => [v.voter, v.support, v.reason])).toEqual([
        [deployer.address, 1, ""],
        [alice.address, 0, "fees fund custody"],
      ]);
      // Pages of one, each after the last voter of the page before.
      const first = await get<Votes>(indexer, `/proposals/${proposal.id}/votes?limit=1`);
      expect([first.votes.map((v) => v.voter), first.hasMore]).toEqual([[deployer.address], true]);
      const second = await get<Votes>(
        indexer,
        `/proposals/${proposal.id}/votes?limit=1&startingAfter=${deployer.address}`,
      );
      expect([second.votes.map((v) => v.voter), second.hasMore]).toEqual([[alice.address], false]);
      const listed = await get<{ proposals: { id: string; state: string }[] }>(indexer, "/proposals?state=executed");
      expect(listed.proposals.map((x) => x.id)).toContain(proposal.id.toString());
      expect(await s.read.redemptions.read.redemptionFeeBps()).toBe(30n);
    },
  );

  it("rolls back a shallow revert (evm_snapshot / evm_revert) and matches the chain again", async () => {
    // A leaf waits in the queue across the revert: the rolled-back insertion must give it back.
    await s.depositAndMint({
      amountZat: 3n * ZEC,
      collateralFloorZat: 2n * ZEC,
      mintAmount: 40n * ZSD,
      recipient: bob.address,
    });
    await expectMatchesChain();
    const before = await get<Record<string, unknown>>(indexer, "/supply");
    const queueBefore = await get<PendingLeaves>(indexer, "/pending-leaves");
    expect(queueBefore.pending.length).toBeGreaterThan(0);
    const snapshot = await s.snapshot();
    const headBefore = await s.publicClient.getBlockNumber();

    await s.depositAndMint({
      amountZat: 4n * ZEC,
      collateralFloorZat: 3n * ZEC,
      mintAmount: 90n * ZSD,
      recipient: carol.address,
    });
    await s.receipt(await s.as(carol).token.write.transfer([bob.address, 10n * ZSD]));
    await insertPending();
    await expectMatchesChain();
    expect((await get<PendingLeaves>(indexer, "/pending-leaves")).pending).toEqual([]);
    expect(await get(indexer, "/supply")).not.toEqual(before);
    const headAfter = await s.publicClient.getBlockNumber();

    await s.revert(snapshot);
    // New blocks on the old fork, one past the abandoned head, so that the
    // indexer sees the other branch win.
    await s.mineBlocks(Number(headAfter - headBefore) + 1);
    await expectMatchesChain();
    const after = await get<Record<string, unknown>>(indexer, "/supply");
    expect({ ...after, updatedAtBlock: null }).toEqual({ ...before, updatedAtBlock: null });
    expect(await get(indexer, "/pending-leaves")).toEqual(queueBefore);
  });

  // The transport does not depend on the database: once, on the faster one.
  it.runIf(full)(
    "keeps following the chain when a head subscription goes silent, 400 blocks on (past block 341)",
    async () => {
      await caughtUp();
      // Hardhat 2 silences a newHeads subscription after five minutes; here at once.
      proxy.silence();
      await s.mineBlocks(400);
      // No nudge: the newest block is indexed without waiting for another.
      await waitForBlock(indexer.url, await s.publicClient.getBlockNumber(), { timeoutMs: 30_000 });
      await s.depositAndMint({ amountZat: 2n * ZEC, mintAmount: 40n * ZSD, recipient: bob.address });
      await expectMatchesChain();
    },
  );

  it("is internal: JSON routes only, no CORS headers, errors without internals", async () => {
    const origin = "https://attacker.example";
    for (const path of ["/supply", "/status", "/ready", "/health", "/metrics", "/nothing-here"]) {
      const response = await fetch(`${indexer.url}${path}`, { headers: { origin } });
      expect.soft(response.headers.get("access-control-allow-origin"), path).toBeNull();
      await response.arrayBuffer();
    }
    const preflight = await fetch(`${indexer.url}/supply`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "GET" },
    });
    expect.soft([...preflight.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([]);

    // No SQL over HTTP.
    for (const path of ["/sql/db", "/sql/live", `/sql/db?sql=${encodeURIComponent('{"json":{"sql":"select 1"}}')}`]) {
      const response = await fetch(`${indexer.url}${path}`);
      expect.soft(response.status, path).toBe(404);
      expect.soft(await response.text()).toBe(JSON.stringify({ error: "not_found", detail: "no such route" }));
    }
    // A value the database would refuse (index is a 32-bit column) is the client's error.
    const deposits = await fetch(`${indexer.url}/deposits?from=3000000000`);
    expect.soft(deposits.status).toBe(400);
    expect.soft(await deposits.text()).toMatch(/^\{"error":"invalid_query"/);
  });
});
