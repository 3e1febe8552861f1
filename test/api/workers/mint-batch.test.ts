// How the relay packs queued mints into mintBatch transactions: a fixed gas
// budget per item, every batch under the per-transaction cap; and what a
// batch that reverts costs the other customers' mints in it.
import { type Address, type Hex, decodeFunctionData, keccak256, parseTransaction, serializeTransaction } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { stableMinterAbi } from "@zsd/sdk";
import type { Chain } from "../../../api/src/adapters/chain.ts";
import { CHANGE_QUEUE_GAS, TX_GAS_CAP, WALK_HEADROOM } from "../../../api/src/adapters/gas.ts";
import { ContractRevertError } from "../../../api/src/domain/errors.ts";
import { mintBatchGas, mintBatchSimulationGas, packBatches } from "../../../api/src/workers/relay/mint-batch.ts";
import { MintRelay } from "../../../api/src/workers/relay/mint-relay.ts";
import { TransactionSender } from "../../../api/src/workers/relay/sender.ts";
import { openStorage } from "../helpers.ts";
import { OWNER, queuedMint } from "../relay-stand-ins.ts";

const MINTER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const RELAYER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const withChange = (n: number) => Array.from({ length: n }, (_, i) => ({ change_leaf: String(i + 1), i }));
const withoutChange = (n: number) => Array.from({ length: n }, (_, i) => ({ change_leaf: "0", i }));

describe("mint batches", () => {
  it("gives an item with a change leaf its leaf's queueing on top of its own budget (no tree walk), and a batch the walk's headroom", () => {
    expect(mintBatchGas(withoutChange(1))).toBe(950_000n);
    expect(mintBatchGas(withChange(1))).toBe(950_000n + CHANGE_QUEUE_GAS);
    expect(mintBatchGas(withChange(2)) - mintBatchSimulationGas(withChange(2))).toBe(WALK_HEADROOM);
    // The minter's largest batch, every item with change, fits one transaction.
    expect(mintBatchGas(withChange(32))).toBe(12_170_000n);
    expect(mintBatchGas(withChange(32))).toBeLessThanOrEqual(TX_GAS_CAP);
  });

  it("splits in order at the batch size, and before the gas cap", () => {
    expect(packBatches(withoutChange(40), 16).map((b) => b.length)).toEqual([16, 16, 8]);
    expect(packBatches(withoutChange(32), 32).map((b) => b.length)).toEqual([32]);
    // With change too, 32 fit under 2^24 (12.17M with the walk's headroom): change is only queued.
    const packed = packBatches(withChange(40), 32);
    expect(packed.map((b) => b.length)).toEqual([32, 8]);
    for (const batch of packed) expect(mintBatchGas(batch)).toBeLessThanOrEqual(TX_GAS_CAP);
    expect(packed.flat().map((item) => item.i)).toEqual([...Array(40).keys()]);
    expect(packBatches([], 16)).toEqual([]);
  });
});

// The relay's batches against an attacker's item, on a stand-in chain: a batch
// that holds the attacker's item reverts when mined; the attacker queues a new
// item every round. A fresh relay each pass, as after a restart or a lease
// failover, and one dies right after it followed the reverted batch.
async function attacked(refusedAtFollow: boolean) {
  const storage = await openStorage("postgres");
  closers.push(storage.close);
  const db = storage.db;
  await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk'), ('acct_2', 'attacker')");
  await queuedMint(db, "mnt_1", "prf_1", "11");
  await queuedMint(db, "mnt_2", "prf_2", "12");
  await queuedMint(db, "atk_1", "prf_a1", "101", "acct_2");
  const attacker = (nullifier: bigint) => nullifier > 100n;
  const nullifiersOf = (data: Hex): bigint[] => {
    const { functionName, args } = decodeFunctionData({ abi: stableMinterAbi, data });
    const requests = (functionName === "mintBatch" ? args[1] : [args[1]]) as { nullifierHash: bigint }[];
    return requests.map((request) => request.nullifierHash);
  };
  const sent: { hash: Hex; nullifiers: bigint[] }[] = [];
  let sends = 0;
  const chain = {
    minter: MINTER,
    read: <T>(read: () => Promise<T>) => read(),
    isSpent: async () => false,
    isValidRoot: async () => false,
    maxRootAge: async () => 3600n,
    rootSupersededAt: async () => 0n, // The current root: no mint is sent alone for its root's age.
    deployment: { contracts: { StableMinter: { startBlock: 0 } } },
    client: {
      // Every item passes its run at the head, and so does every batch: the revert comes when mined.
      call: async () => ({ data: "0x" }),
      estimateGas: async ({ data }: { data: Hex }) => {
        // Its root expired by the time the batch was mined (or, refusedAtFollow false, a topUp on its
        // nullifier that only a batch meets): refused when simulated again, or not at all.
        if (refusedAtFollow && nullifiersOf(data).some(attacker))
          throw new ContractRevertError("RootExpired", [1n, 1n, 3600n]);
        return 100_000n;
      },
      getBlock: async () => ({ timestamp: 10_000n }),
      getBlockNumber: async () => 5n,
      getTransactionReceipt: async () => ({ logs: [] }),
      getContractEvents: async () => [],
    },
  } as unknown as Chain;
  const sender = {
    address: RELAYER,
    send: async (to: Address, data: Hex, _gas: bigint, record: (sent: unknown) => Promise<boolean>) => {
      // The process dies as it signs the first send after the revert was followed: the next pass is a new one's.
      if (++sends === 2) throw new Error("the worker's process died");
      const nonce = sent.length;
      const raw = serializeTransaction({ chainId: 1, to, data, nonce, gas: 1n, maxFeePerGas: 1n });
      const hash = keccak256(raw);
      if (await record({ tx_hash: hash, raw_tx: raw, nonce, submitted_at: new Date() }))
        sent.push({ hash, nullifiers: nullifiersOf(data) });
    },
    // A transaction holding the attacker's item reverts, unless it went alone.
    receipt: async (hash: Hex) => {
      const tx = sent.find((s) => s.hash === hash)!;
      const reverts = tx.nullifiers.length > 1 && tx.nullifiers.some(attacker);
      return { status: reverts ? "reverted" : "success", blockNumber: 5n, logs: [] };
    },
  } as unknown as TransactionSender;
  const options = { confirmations: 1, maxAttempts: 3, mintBatchMax: 3, mintBatchWaitMs: 0 };
  for (let round = 2; round <= 4; round++) {
    await new MintRelay(db, chain, sender, options).pass().catch((error: Error) => {
      if (!error.message.includes("process died")) throw error;
    });
    await queuedMint(db, `atk_${round}`, `prf_a${round}`, String(100 + round), "acct_2");
  }
  await new MintRelay(db, chain, sender, options).pass();
  const honest = await db.query<{ id: string; status: string }>(
    "SELECT id, status FROM mints WHERE account_id = 'acct_1' ORDER BY id",
  );
  // Reverted batches that carried an honest mint (the attacker's own items may revert together).
  const reverted = sent.filter(
    (tx) => tx.nullifiers.length > 1 && tx.nullifiers.some(attacker) && !tx.nullifiers.every(attacker),
  );
  return { honest, reverted, sent };
}

describe("a batch an attacker's item makes revert", () => {
  it("costs the others one reverted batch: its refused item failed, the survivors go again together, with no newcomer", async () => {
    const { honest, reverted, sent } = await attacked(true);
    expect(reverted.length).toBe(1);
    expect(honest).toEqual([
      { id: "mnt_1", status: "confirmed" },
      { id: "mnt_2", status: "confirmed" },
    ]);
    // The survivors' second batch holds them alone.
    expect(sent[1]!.nullifiers).toEqual([11n, 12n]);
  });

  it("costs the others one reverted batch when no item is refused alone: each then goes alone", async () => {
    const { honest, reverted, sent } = await attacked(false);
    expect(reverted.length).toBe(1);
    expect(honest).toEqual([
      { id: "mnt_1", status: "confirmed" },
      { id: "mnt_2", status: "confirmed" },
    ]);
    expect(sent.slice(1, 3).map((tx) => tx.nullifiers)).toEqual([[11n], [12n]]);
  });
});

describe("the relay's checks before and after a batch", () => {
  it("takes a verifier's throw for no verdict, and reconciles a mint its own proof made before any verdict", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    // 21: the verifier throws, its own proof minted it already (sent, then back in the queue after "nonce taken").
    // 22: the verifier throws, not minted. 23: the proof no longer verifies, but its own proof minted it already.
    for (const n of [1, 2, 3]) await queuedMint(db, `mnt_${n}`, `prf_${n}`, String(20 + n));
    const spent = new Set([21n, 23n]);
    const chain = {
      minter: MINTER,
      read: <T>(read: () => Promise<T>) => read(),
      isSpent: async (nullifier: bigint) => spent.has(nullifier),
      deployment: { contracts: { StableMinter: { startBlock: 0 } } },
      client: {
        call: async () => ({ data: "0x" }),
        estimateGas: async () => 100_000n,
        getContractEvents: async ({ args }: { args: { nullifierHash: bigint } }) =>
          spent.has(args.nullifierHash)
            ? [
                {
                  args: { ...args, recipient: OWNER, mintAmount: 10n ** 18n },
                  transactionHash: "0xaa",
                  blockNumber: 3n,
                },
              ]
            : [],
        getTransactionReceipt: async () => ({ logs: [] }),
      },
    } as unknown as Chain;
    const sender = {
      address: RELAYER,
      send: async (_to: Address, _data: Hex, _gas: bigint, record: (sent: unknown) => Promise<boolean>) => {
        await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 0, submitted_at: new Date() });
      },
    } as unknown as TransactionSender;
    const verifyProof = async (_proof: unknown, signals: string[]) => {
      if (signals[2] === "23") return false;
      throw new Error("snarkjs: worker terminated");
    };
    const options = { confirmations: 1, maxAttempts: 3, mintBatchMax: 3, mintBatchWaitMs: 0, verifyProof };

    await new MintRelay(db, chain, sender, options).pass();

    const rows = await db.query<{ id: string; status: string; tx_hash: string | null }>(
      "SELECT id, status, tx_hash FROM mints ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "mnt_1", status: "confirmed", tx_hash: "0xaa" },
      { id: "mnt_2", status: "submitted", tx_hash: "0x01" },
      { id: "mnt_3", status: "confirmed", tx_hash: "0xaa" },
    ]);
    const rejected = await db.query("SELECT id FROM proofs WHERE status = 'rejected'");
    expect(rejected).toEqual([]);
  });

  it("does not write a replacement over a batch another worker replaced first, nor broadcast it", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    await queuedMint(db, "mnt_1", "prf_1", "31");
    await queuedMint(db, "mnt_2", "prf_2", "32");
    await db.query("UPDATE mints SET status = 'submitted', tx_hash = '0xold', raw_tx = '0x02', nonce = 0");
    const chain = { minter: MINTER, isSpent: async () => false } as unknown as Chain;
    const broadcast: boolean[] = [];
    const sender = {
      address: RELAYER,
      receipt: async () => undefined,
      // The other worker's replacement lands while this one signs its own at the same nonce.
      advance: async (_tx: unknown, record: (sent: unknown) => Promise<boolean>) => {
        await db.query("UPDATE mints SET tx_hash = '0xother', attempts = attempts + 1");
        broadcast.push(await record({ tx_hash: "0xmine", raw_tx: "0x03", nonce: 0, submitted_at: new Date() }));
        return "waiting";
      },
    } as unknown as TransactionSender;

    await new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, mintBatchMax: 3 }).pass();

    expect(broadcast).toEqual([false]);
    const rows = await db.query<{ tx_hash: string }>("SELECT tx_hash FROM mints ORDER BY id");
    expect(rows.map((row) => row.tx_hash)).toEqual(["0xother", "0xother"]);
  });

  it("simulates a batch WALK_HEADROOM under the limit it sends it with: room for positions filed before its block", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    for (const n of [1, 2]) await queuedMint(db, `mnt_${n}`, `prf_${n}`, String(50 + n));
    const simulated: bigint[] = [];
    const chain = {
      minter: MINTER,
      isSpent: async () => false,
      maxRootAge: async () => 3600n,
      rootSupersededAt: async () => 0n,
      client: {
        call: async ({ data, gas }: { data: Hex; gas?: bigint }) => {
          if (decodeFunctionData({ abi: stableMinterAbi, data }).functionName === "mintBatch") simulated.push(gas!);
          return { data: "0x" };
        },
        estimateGas: async () => 100_000n,
        getBlock: async () => ({ timestamp: 10_000n }),
      },
    } as unknown as Chain;
    const limits: bigint[] = [];
    const sender = {
      address: RELAYER,
      send: async (_to: Address, _data: Hex, gas: bigint, record: (sent: unknown) => Promise<boolean>) => {
        limits.push(gas);
        await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 1, submitted_at: new Date() });
      },
    } as unknown as TransactionSender;

    await new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, mintBatchMax: 2 }).pass();

    expect(limits).toHaveLength(1);
    expect(simulated).toEqual([limits[0]! - WALK_HEADROOM]);
  });

  it("sends alone a mint whose root is about to expire, and batches the others", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    for (const n of [1, 2, 3]) await queuedMint(db, `mnt_${n}`, `prf_${n}`, String(40 + n));
    await db.query("UPDATE proofs SET root = '7' WHERE id = 'prf_3'");
    // Root 7 was superseded 3,540 s ago; the minter takes it for 3,600 s: 60 s left, under the margin.
    const chain = {
      minter: MINTER,
      isSpent: async () => false,
      maxRootAge: async () => 3600n,
      rootSupersededAt: async (root: bigint) => (root === 7n ? 6460n : 0n),
      client: {
        call: async () => ({ data: "0x" }),
        estimateGas: async () => 100_000n,
        getBlock: async () => ({ timestamp: 10_000n }),
      },
    } as unknown as Chain;
    const sent: bigint[][] = [];
    const sender = {
      address: RELAYER,
      send: async (_to: Address, data: Hex, _gas: bigint, record: (sent: unknown) => Promise<boolean>) => {
        const { functionName, args } = decodeFunctionData({ abi: stableMinterAbi, data });
        const requests = (functionName === "mintBatch" ? args[1] : [args[1]]) as { nullifierHash: bigint }[];
        sent.push(requests.map((request) => request.nullifierHash));
        await record({ tx_hash: `0x0${sent.length}`, raw_tx: "0x02", nonce: sent.length, submitted_at: new Date() });
      },
    } as unknown as TransactionSender;

    await new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, mintBatchMax: 3 }).pass();

    expect(sent).toEqual([[43n], [41n, 42n]]);
  });

  it("fails a mint whose batches reverted as many times as the relay tries one, its proof given back", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    await queuedMint(db, "mnt_1", "prf_1", "51");
    await queuedMint(db, "mnt_2", "prf_2", "52");
    // Its third send: a batch that reverted, with no item refused when run again.
    await db.query(
      "UPDATE mints SET status = 'submitted', tx_hash = '0xold', raw_tx = '0x02', nonce = 0, attempts = 3",
    );
    await db.query("UPDATE mints SET attempts = 1 WHERE id = 'mnt_2'");
    const chain = {
      minter: MINTER,
      isSpent: async () => false,
      isValidRoot: async () => true,
      maxRootAge: async () => 3600n,
      client: { estimateGas: async () => 100_000n },
    } as unknown as Chain;
    const sender = {
      address: RELAYER,
      receipt: async () => ({ status: "reverted", blockNumber: 9n, logs: [] }),
    } as unknown as TransactionSender;

    // No mint is queued after the follow: nothing is sent (the stand-in sender has no send).
    await new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, mintBatchMax: 3 })
      .pass()
      .catch(() => undefined);

    const rows = await db.query("SELECT id, status, failure_code, alone FROM mints ORDER BY id");
    expect(rows).toEqual([
      { id: "mnt_1", status: "failed", failure_code: "transaction_reverted", alone: false },
      { id: "mnt_2", status: "queued", failure_code: null, alone: true },
    ]);
    const [proof] = await db.query("SELECT status FROM proofs WHERE id = 'prf_1'");
    expect(proof).toEqual({ status: "verified" });
  });

  it("replaces a stuck batch one of whose items was minted meanwhile with a batch of the others only", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    for (const n of [1, 2, 3]) await queuedMint(db, `mnt_${n}`, `prf_${n}`, String(60 + n));
    const spent = new Set<bigint>();
    const broadcast: Hex[] = [];
    const chain = {
      minter: MINTER,
      read: <T>(read: () => Promise<T>) => read(),
      isSpent: async (nullifier: bigint) => spent.has(nullifier),
      deployment: { contracts: { StableMinter: { startBlock: 0 } } },
      wallet: (key: Hex) => {
        const account = privateKeyToAccount(key);
        return {
          account,
          signTransaction: (tx: object) => account.signTransaction({ ...tx, chainId: 31337, type: "eip1559" }),
        };
      },
      client: {
        call: async () => ({ data: "0x" }),
        getTransactionCount: async () => 0,
        estimateFeesPerGas: async () => ({ maxFeePerGas: 10n, maxPriorityFeePerGas: 1n }),
        sendRawTransaction: async ({ serializedTransaction }: { serializedTransaction: Hex }) => {
          broadcast.push(serializedTransaction);
        },
        // The batch waits in the pool, never mined; the copy that spent 62 was.
        getTransaction: async () => ({}),
        getTransactionReceipt: async ({ hash }: { hash: Hex }) => {
          if (hash !== "0xaa") throw new Error("not mined");
          return { logs: [] };
        },
        getContractEvents: async ({ args }: { args: { nullifierHash: bigint } }) =>
          spent.has(args.nullifierHash)
            ? [
                {
                  args: { ...args, recipient: OWNER, mintAmount: 10n ** 18n },
                  transactionHash: "0xaa",
                  blockNumber: 3n,
                },
              ]
            : [],
      },
    } as unknown as Chain;
    // Stuck as soon as it is sent.
    const sender = new TransactionSender(chain, generatePrivateKey(), -1);
    const options = { confirmations: 1, maxAttempts: 3, mintBatchMax: 3, mintBatchWaitMs: 0 };
    const nullifiers = (raw: Hex) => {
      const { args } = decodeFunctionData({ abi: stableMinterAbi, data: parseTransaction(raw).data! });
      return (args[1] as readonly { nullifierHash: bigint }[]).map((request) => request.nullifierHash);
    };

    await new MintRelay(db, chain, sender, options).pass();
    expect(nullifiers(broadcast[0]!)).toEqual([61n, 62n, 63n]);
    // A copy of mnt_2's proof, sent by someone else, is mined while the batch waits.
    spent.add(62n);
    await new MintRelay(db, chain, sender, options).pass();

    expect(broadcast.length).toBe(2);
    expect(nullifiers(broadcast[1]!)).toEqual([61n, 63n]);
    expect(parseTransaction(broadcast[1]!).nonce).toBe(parseTransaction(broadcast[0]!).nonce);
    const rows = await db.query<{ id: string; status: string; tx_hash: string }>(
      "SELECT id, status, tx_hash FROM mints ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "mnt_1", status: "submitted", tx_hash: keccak256(broadcast[1]!) },
      { id: "mnt_2", status: "confirmed", tx_hash: "0xaa" },
      { id: "mnt_3", status: "submitted", tx_hash: keccak256(broadcast[1]!) },
    ]);
  });

  it("counts an item that left a waiting batch (minted by a copy of its proof) as the culprit when the batch reverts: the others go on together", async () => {
    const storage = await openStorage("postgres");
    closers.push(storage.close);
    const db = storage.db;
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
    for (const n of [1, 2, 3]) await queuedMint(db, `mnt_${n}`, `prf_${n}`, String(70 + n));
    const spent = new Set<bigint>();
    const chain = {
      minter: MINTER,
      read: <T>(read: () => Promise<T>) => read(),
      isSpent: async (nullifier: bigint) => spent.has(nullifier),
      deployment: { contracts: { StableMinter: { startBlock: 0 } } },
      client: {
        call: async () => ({ data: "0x" }),
        estimateGas: async () => 100_000n,
        getTransactionReceipt: async () => ({ logs: [] }),
        getContractEvents: async ({ args }: { args: { nullifierHash: bigint } }) =>
          spent.has(args.nullifierHash)
            ? [
                {
                  args: { ...args, recipient: OWNER, mintAmount: 10n ** 18n },
                  transactionHash: "0xaa",
                  blockNumber: 3n,
                },
              ]
            : [],
      },
    } as unknown as Chain;
    const sent: bigint[][] = [];
    let mined = false;
    const sender = {
      address: RELAYER,
      send: async (to: Address, data: Hex, _gas: bigint, record: (sent: unknown) => Promise<boolean>) => {
        const { functionName, args } = decodeFunctionData({ abi: stableMinterAbi, data });
        const requests = (functionName === "mintBatch" ? args[1] : [args[1]]) as readonly { nullifierHash: bigint }[];
        sent.push(requests.map((request) => request.nullifierHash));
        const raw = serializeTransaction({ chainId: 1, to, data, nonce: sent.length, gas: 1n, maxFeePerGas: 1n });
        await record({ tx_hash: keccak256(raw), raw_tx: raw, nonce: sent.length, submitted_at: new Date() });
      },
      // The first batch: seen waiting once, then reverted (a copy of mnt_2's proof was mined first).
      receipt: async () => (mined ? { status: "reverted", blockNumber: 5n, logs: [] } : undefined),
      advance: async () => "waiting",
    } as unknown as TransactionSender;
    const options = { confirmations: 1, maxAttempts: 3, mintBatchMax: 3, mintBatchWaitMs: 0 };

    await new MintRelay(db, chain, sender, options).pass();
    spent.add(72n);
    await new MintRelay(db, chain, sender, options).pass();
    mined = true;
    await new MintRelay(db, chain, sender, options).pass();

    expect(sent).toEqual([
      [71n, 72n, 73n],
      [71n, 73n],
    ]);
  });
});
