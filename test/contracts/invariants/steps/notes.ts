// Steps on notes: deposits (one by one or batched under the attestors' quorum), note withdrawals, top-ups and
// withdrawals spent in one batch, and change and released notes inserted from the queue by anyone.
import { parseEventLogs, zeroAddress } from "viem";
import { expect } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import { DepositTree, createNote, depositLeaf, noteCommitment, registryLeaves } from "@zsd/sdk";
import { STATUS, carol, relayer } from "../constants.ts";
import { expectOutcome, pauseError, send } from "../chain.ts";
import { type Expected, type Model, released } from "../model.ts";
import { count } from "../stats.ts";
import { Step, type World } from "../world.ts";

export interface DepositOptions {
  /** The note's amount, in zatoshi. */
  amountZat: bigint;
}

/** A note deposited and recorded on its own: unminted ZEC, held. */
export class Deposit extends Step<DepositOptions> {
  toString() {
    const { amountZat } = this.options;
    return `Deposit(${amountZat})`;
  }
  async run(m: Model, w: World) {
    const { amountZat } = this.options;
    const { s } = w.ctx;
    await w.step(m, this.toString(), async () => {
      await s.deposit(createNote(), amountZat);
      count("Deposit: ok");
      m.held += amountZat;
      m.unminted += amountZat;
      return new Map();
    });
  }
}

export interface DepositBatchOptions {
  /** The notes' amounts, in zatoshi. */
  amountsZat: bigint[];
  /** The batch holds its first leaf twice. */
  repeat: boolean;
}

/**
 * The attestors' quorum records deposits in one batch (recordDeposits: the total only).
 * With `repeat`, the batch holds its first leaf twice: refused as a second
 * claim on the same ZEC, and nothing moves.
 */
export class DepositBatch extends Step<DepositBatchOptions> {
  toString() {
    const { amountsZat, repeat } = this.options;
    return `DepositBatch(${amountsZat.join(", ")}${repeat ? ", repeated" : ""})`;
  }
  async run(m: Model, w: World) {
    const { amountsZat, repeat } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async () => {
      const leaves = amountsZat.map((a) => depositLeaf(a, noteCommitment(createNote())));
      if (repeat) leaves.push(leaves[0]!);
      const total = amountsZat.reduce((a, b) => a + b, 0n) + (repeat ? amountsZat[0]! : 0n);
      const outcome = await send(ctx, () => s.sendDeposits(leaves, total));
      if (!expectOutcome(this.toString(), outcome, repeat ? "DepositAlreadyRecorded" : null)) {
        return new Map();
      }
      m.held += total;
      m.unminted += total;
      return new Map();
    });
  }
}

export interface WithdrawNoteOptions {
  /** Which of the note withdrawals proved at set-up (context.ts's `withdrawals`). */
  k: number;
  /** Sent naming another owner than the one its proof binds (refused: InvalidProof). */
  wrongOwner: boolean;
}

/** A note's ZEC withdrawn to its owner's sealed address (a payout), its change queued. */
export class WithdrawNote extends Step<WithdrawNoteOptions> {
  toString() {
    const { k, wrongOwner } = this.options;
    return `WithdrawNote(${k}${wrongOwner ? ", wrong owner" : ""})`;
  }
  async run(m: Model, w: World) {
    const { k, wrongOwner } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const p = ctx.withdrawals[k]!;
      const owner = wrongOwner ? carol.address : p.owner.address;
      let expected: string | null = null;
      if (m.spent.has(`withdraw${k}`)) expected = "NullifierAlreadySpent";
      else if (wrongOwner) expected = "InvalidProof";
      expected = pauseError(c, "pausable") ?? expected;
      const outcome = await send(ctx, () =>
        s.as(relayer).minter.write.withdrawNote([p.proof, p.spend, p.sealedAddress, owner]),
      );
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      m.spent.add(`withdraw${k}`);
      m.unminted -= p.floorZat;
      if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
      released(ctx, m, p.owner.address, p.floorZat, { sealedAddress: p.sealedAddress, noteCommitment: 0n });
      return new Map();
    });
  }
}

/** One item of a spend batch: a top-up of position k + 1 (context.ts's `topUps[k]`), or note withdrawal k. */
export interface SpendPick {
  topUp: boolean;
  k: number;
}
export interface SpendBatchOptions {
  /** The items, in the order sent. */
  picks: SpendPick[];
}

/**
 * Top-ups and note withdrawals sent together (spendBatch): refused for a nullifier spent before
 * or earlier in the batch, else for a top-up of a position not open; else each item moves the
 * books as its single call would, change queued in item order.
 */
export class SpendBatch extends Step<SpendBatchOptions> {
  toString() {
    const { picks } = this.options;
    return `SpendBatch(${picks.map((p) => `${p.topUp ? "topUp" : "withdraw"}${p.k}`).join(", ")})`;
  }
  async run(m: Model, w: World) {
    const { picks } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const items = picks.map(({ topUp, k }) => {
        const p = topUp ? ctx.topUps[k]! : ctx.withdrawals[k]!;
        const key = `${topUp ? "topUp" : "withdraw"}${k}`;
        const positionId = topUp ? BigInt(k + 1) : 0n;
        return { p, key, positionId, owner: topUp ? zeroAddress : p.owner.address };
      });
      // Every nullifier is spent (and every proof checked) before PositionManager.topUp looks at a position.
      let expected: string | null = null;
      const seen = new Set<string>();
      for (const { key } of items) {
        if (m.spent.has(key) || seen.has(key)) expected = "NullifierAlreadySpent";
        if (expected) break;
        seen.add(key);
      }
      const closed = items.some(
        ({ positionId }) => positionId !== 0n && c.positions[Number(positionId) - 1]?.status !== STATUS.Open,
      );
      if (closed && expected) count("SpendBatch: spent and a position not open (NullifierAlreadySpent first)");
      if (closed && !expected) expected = "PositionNotOpen";
      expected = pauseError(c, "pausable") ?? expected;
      const outcome = await send(ctx, () =>
        s.as(relayer).minter.write.spendBatch([
          items.map(({ p }) => p.proof),
          items.map(({ p, positionId, owner }) => ({
            spend: p.spend,
            positionId,
            sealedAddress: positionId === 0n ? p.sealedAddress : "0x",
            owner,
            hint: 0n,
          })),
        ]),
      );
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      const changes = new Map<bigint, Expected>();
      for (const { p, key, positionId } of items) {
        m.spent.add(key);
        m.unminted -= p.floorZat;
        if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
        if (positionId === 0n) {
          released(ctx, m, p.owner.address, p.floorZat, { sealedAddress: p.sealedAddress, noteCommitment: 0n });
          continue;
        }
        const position = c.positions[Number(positionId) - 1]!;
        changes.set(positionId, {
          status: STATUS.Open,
          collateral: position.collateralZat + p.floorZat,
          debt: position.debt,
        });
      }
      return changes;
    });
  }
}

export type Tamper = "none" | "stale" | "leaf" | "gap" | "empty";
export interface InsertPendingOptions {
  /** The share of the leaves waiting in the queue that the walk inserts, in bps (at least one leaf). */
  shareBps: bigint;
  /** What is wrong with the stretch sent, if anything. */
  tamper: Tamper;
}

/**
 * Anyone inserts the first `shareBps` of the queued change leaves (at least
 * one) with one walk: the root becomes the reference LeanIMT's over every
 * leaf the registry's events name, the rest stays queued, and no total
 * moves. A stretch read before an earlier insertion ("stale": it starts two
 * below the head) goes through, skipping what went in; leaves that are not
 * the queued ones, a stretch starting past the head, or none at all are
 * refused, and nothing moves.
 */
export class InsertPending extends Step<InsertPendingOptions> {
  toString() {
    const { shareBps, tamper } = this.options;
    return `InsertPending(${shareBps}${tamper === "none" ? "" : `, ${tamper}`})`;
  }
  async run(m: Model, w: World) {
    const { shareBps, tamper } = this.options;
    const ctx = w.ctx;
    const { s } = ctx;
    await w.step(m, this.toString(), async (c) => {
      const head = m.head;
      const pending = m.queued.length - head;
      const n = Math.max(1, Math.ceil((pending * Number(shareBps)) / 10_000));
      const end = Math.min(head + n, m.queued.length);
      let from = head;
      if (tamper === "stale") from = Math.max(0, head - 2);
      if (tamper === "gap") from = head + 1;
      let list = m.queued.slice(from, Math.max(from, end));
      if (tamper === "empty") list = [];
      if (tamper === "leaf" && list.length > 0) list[list.length - 1] = list.at(-1)! + 1n;
      let expected: string | null = null;
      if (from > head || from + list.length <= head) expected = "InvalidPendingRange";
      else if (tamper === "leaf") expected = "PendingLeavesMismatch";
      const outcome = await send(ctx, () => s.as(carol).registry.write.insertPendingLeaves([BigInt(from), list]));
      if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
      const inserted = m.queued.slice(head, from + list.length);
      m.head = from + list.length;
      const [event] = parseEventLogs({
        abi: collateralRegistryAbi,
        logs: outcome.receipt.logs,
        eventName: "PendingLeavesInserted",
      });
      // Change and released notes are fresh notes: none is in the tree already, so none is dropped.
      expect(event?.args, `${this.toString()}: event`).toMatchObject({
        firstIndex: c.treeSize,
        leaves: inserted,
        consumed: BigInt(inserted.length),
      });
      const events = await s.publicClient.getContractEvents({
        address: s.read.registry.address,
        abi: collateralRegistryAbi,
        fromBlock: 0n,
      });
      const tree = new DepositTree(registryLeaves(events));
      expect(await s.read.registry.read.root(), `${this.toString()}: root`).toBe(tree.root);
      expect(event?.args.root, `${this.toString()}: event root`).toBe(tree.root);
      return new Map();
    });
  }
}
