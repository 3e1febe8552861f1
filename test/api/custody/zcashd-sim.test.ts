// The simulated zcashd on its own: the ledger's arithmetic, each wallet's view
// of it, its answers to bad requests, and its process entry. The custody
// adapter's own tests (zcashd.test.ts, zcashd-api.test.ts) run against it too.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZcashdClient, ZcashdError } from "../../../api/src/adapters/custody/zcashd.ts";
import { textMemoHex } from "../../../api/src/adapters/custody/index.ts";
import {
  RpcError,
  type SimulatedZcashd,
  startSimulatedZcashd,
  zatFromAmount,
} from "../../../api/src/sandbox/zcashd-sim/server.ts";
import { NO_MEMO_HEX } from "../../../api/src/sandbox/zcashd-sim/ledger.ts";
import { SANDBOX_REFUSED_ADDRESS } from "../../../api/src/sandbox/refused-address.ts";
import { parseZec } from "@zsd/sdk/units";
import { parseShieldedAddress } from "@zsd/sdk/zcash";

const FEE = 10_000n;

interface Received {
  txid: string;
  amount: number;
  amountZat: number;
  memo: string;
  memoStr?: string;
  outindex: number;
  confirmations: number;
  change: boolean;
}
interface OperationStatus {
  id: string;
  status: string;
  result?: { txid: string };
  error?: { code: number; message: string };
}

describe("simulated zcashd", () => {
  let sim: SimulatedZcashd;
  let custody: ZcashdClient;
  let auditor: ZcashdClient;
  let funder: ZcashdClient;
  let custodyAddress: string;

  const client = (user: string) => {
    const { url, password } = sim.wallet(user);
    return new ZcashdClient(url, { user, password });
  };
  /** Polls an operation until it is done, as the custody adapter does. */
  async function settle(wallet: ZcashdClient, opid: string): Promise<OperationStatus> {
    for (let i = 0; i < 10; i++) {
      const [op] = await wallet.call<OperationStatus[]>("z_getoperationstatus", [[opid]]);
      if (op && op.status !== "queued" && op.status !== "executing") return op;
    }
    throw new Error(`operation ${opid} never finished`);
  }
  const received = (wallet: ZcashdClient, address: string, minconf = 1) =>
    wallet.call<Received[]>("z_listreceivedbyaddress", [address, minconf]);
  const unspentZat = (address: string) => sim.ledger.unspent(address, 0).reduce((sum, n) => sum + n.amountZat, 0n);

  beforeAll(async () => {
    sim = await startSimulatedZcashd({
      wallets: [{ user: "custody" }, { user: "auditor" }, { user: "funder", funding: true }],
      blockIntervalMs: 0,
      feeZat: FEE,
    });
    custody = client("custody");
    auditor = client("auditor");
    funder = client("funder");
    custodyAddress = await custody.call<string>("z_getnewaddress", ["sapling"]);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("makes addresses any wallet can pay, and counts confirmations from the tip", async () => {
    expect(parseShieldedAddress(custodyAddress, "testnet").kind).toBe("sapling");
    const start = await custody.call<number>("getblockcount");
    const memo = textMemoHex("zsd-note:0x" + "ab".repeat(32));
    const txid = await funder.call<string>("zsd_receive", [custodyAddress, 250_000_000, memo]);
    expect(txid).toMatch(/^[0-9a-f]{64}$/);
    // In the mempool: 0 confirmations, seen only with minconf 0, not in the confirmed balance.
    expect(await received(custody, custodyAddress)).toEqual([]);
    expect(await received(custody, custodyAddress, 0)).toMatchObject([{ txid, confirmations: 0 }]);
    expect(await custody.call("z_getbalance", [custodyAddress, 1])).toBe(0);
    expect(await custody.call("z_getbalance", [custodyAddress, 0])).toBe(2.5);

    expect(await custody.call<string[]>("generate", [3])).toHaveLength(3);
    expect(await custody.call<number>("getblockcount")).toBe(start + 3);
    const [note] = await received(custody, custodyAddress);
    expect(note).toMatchObject({
      txid,
      amount: 2.5,
      amountZat: 250_000_000,
      memo,
      memoStr: "zsd-note:0x" + "ab".repeat(32),
      outindex: 0,
      confirmations: 3,
      change: false,
    });
    expect(await received(custody, custodyAddress, 4)).toEqual([]);
    expect(await custody.call("z_getbalance", [custodyAddress, 3])).toBe(2.5);
    expect(await custody.call("z_getbalance", [custodyAddress, 3, true])).toBe(250_000_000);
    expect(await custody.call("z_gettotalbalance", [1])).toEqual({
      transparent: "0.00000000",
      private: "2.50000000",
      total: "2.50000000",
    });
    // A note without a memo carries ZIP 302's "no memo".
    await funder.call("zsd_receive", [custodyAddress, 1]);
    await custody.call("generate", [1]);
    expect((await received(custody, custodyAddress)).at(-1)).toMatchObject({ memo: NO_MEMO_HEX, amountZat: 1 });
    expect((await received(custody, custodyAddress)).at(-1)!.memoStr).toBeUndefined();
  });

  it("mines blocks on its own when given an interval", async () => {
    const ticking = await startSimulatedZcashd({ wallets: [{ user: "w" }], blockIntervalMs: 20 });
    try {
      const start = ticking.ledger.tip;
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(ticking.ledger.tip).toBeGreaterThan(start + 2);
      // Held: the timer mines nothing, `generate` still does; released: it mines again.
      ticking.blocksHeld = true;
      const held = ticking.ledger.tip;
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(ticking.ledger.tip).toBe(held);
      ticking.generate(1);
      expect(ticking.ledger.tip).toBe(held + 1);
      ticking.blocksHeld = false;
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(ticking.ledger.tip).toBeGreaterThan(held + 3);
    } finally {
      await ticking.close();
    }
  });

  it("shows a wallet without the viewing key nothing, and with it exactly the address's notes, without spending them", async () => {
    await expect(received(auditor, custodyAddress, 0)).rejects.toMatchObject({ code: -5 });
    await expect(auditor.call("z_getbalance", [custodyAddress])).rejects.toMatchObject({ code: -5 });
    // Another address of the same wallet, which the auditor is not given.
    const other = await custody.call<string>("z_getnewaddress", []);
    await funder.call("zsd_receive", [other, 7_000_000]);
    await custody.call("generate", [1]);

    const key = await custody.call<string>("z_exportviewingkey", [custodyAddress]);
    expect(key).toMatch(/^zxviewtestsapling1[02-9ac-hj-np-z]+$/);
    expect(await custody.call("z_exportviewingkey", [custodyAddress])).toBe(key);
    expect(await custody.call("z_exportviewingkey", [other])).not.toBe(key);
    // Only the wallet that holds the address can export its key.
    await expect(auditor.call("z_exportviewingkey", [custodyAddress])).rejects.toMatchObject({ code: -5 });

    expect(await auditor.call("z_importviewingkey", [key, "yes", 0])).toEqual({
      type: "sapling",
      address: custodyAddress,
    });
    expect(await received(auditor, custodyAddress, 0)).toEqual(await received(custody, custodyAddress, 0));
    expect(await auditor.call("z_getbalance", [custodyAddress, 1])).toBe(
      await custody.call("z_getbalance", [custodyAddress, 1]),
    );
    await expect(received(auditor, other, 0)).rejects.toMatchObject({ code: -5 });
    // Watch-only: not in its spendable total, and z_sendmany from it is refused before any operation.
    expect(await auditor.call("z_gettotalbalance", [1])).toMatchObject({ private: "0.00000000" });
    expect(await auditor.call("z_listaddresses", [true])).toEqual([custodyAddress]);
    const sends = sim.sends.length;
    await expect(
      auditor.call("z_sendmany", [custodyAddress, [{ address: other, amount: 0.01 }], 1, null, "FullPrivacy"]),
    ).rejects.toMatchObject({ code: -5, message: expect.stringMatching(/no payment source/) });
    expect(sim.sends).toHaveLength(sends);

    // A later payment to the address shows in the auditor's view too: one ledger, two views.
    const later = await funder.call<string>("zsd_receive", [custodyAddress, 12_345]);
    expect((await received(auditor, custodyAddress, 0)).map((n) => n.txid)).toContain(later);
    await custody.call("generate", [1]);
  });

  it("imports a viewing key without a rescan: only notes from then on", async () => {
    const watcher = await startSimulatedZcashd({ wallets: [{ user: "a" }, { user: "b", funding: true }] });
    try {
      const a = new ZcashdClient(watcher.url, { user: "a", password: watcher.wallet("a").password });
      const b = new ZcashdClient(watcher.url, { user: "b", password: watcher.wallet("b").password });
      const address = await a.call<string>("z_getnewaddress");
      await b.call("zsd_receive", [address, 1000]);
      await b.call("generate", [2]);
      const key = await a.call<string>("z_exportviewingkey", [address]);
      await expect(b.call("z_importviewingkey", ["zxviewtestsapling1qqqq", "yes", 0])).rejects.toMatchObject({
        code: -5,
        message: "Invalid viewing key",
      });
      await expect(b.call("z_importviewingkey", [key, "yes", 999])).rejects.toMatchObject({ code: -8 });
      await b.call("z_importviewingkey", [key, "no"]);
      expect(await b.call("z_listreceivedbyaddress", [address, 0])).toEqual([]);
      await b.call("zsd_receive", [address, 2000]);
      expect(await b.call<Received[]>("z_listreceivedbyaddress", [address, 0])).toMatchObject([{ amountZat: 2000 }]);
      // A rescan from the start finds the earlier note as well.
      await b.call("z_importviewingkey", [key, "yes", 0]);
      expect(await b.call<Received[]>("z_listreceivedbyaddress", [address, 0])).toHaveLength(2);
    } finally {
      await watcher.close();
    }
  });

  it("fails the operation of a send its confirmed notes cannot cover, fee included, and spends nothing", async () => {
    const balance = await custody.call<number>("z_getbalance", [custodyAddress, 1, true]);
    const unspent = unspentZat(custodyAddress);
    const opid = await custody.call<string>("z_sendmany", [
      custodyAddress,
      // Exactly the balance: the fee is what is missing.
      [{ address: sim.wallet("auditor").newAddress(), amount: balance / 1e8 }],
      1,
      null,
      "FullPrivacy",
    ]);
    const op = await settle(custody, opid);
    expect(op).toMatchObject({ status: "failed", error: { code: -6 } });
    expect(op.error!.message).toMatch(/^Insufficient funds: have 2\.50012346, need 2\.50022346/);
    expect(unspentZat(custodyAddress)).toBe(unspent);
    // Notes still in the mempool do not count at minconf 1.
    await funder.call("zsd_receive", [custodyAddress, 100_000_000]);
    const short = await custody.call<string>("z_sendmany", [
      custodyAddress,
      [{ address: sim.wallet("auditor").newAddress(), amount: 3 }],
      1,
    ]);
    expect(await settle(custody, short)).toMatchObject({ status: "failed" });
    await custody.call("generate", [1]);
  });

  it("charges the fee to the sender and returns its change: unspent = received − sent − fees, to the zatoshi", async () => {
    const wallets = await startSimulatedZcashd({
      wallets: [{ user: "a" }, { user: "b" }, { user: "f", funding: true }],
      feeZat: 12_345n,
    });
    try {
      const a = new ZcashdClient(wallets.url, { user: "a", password: wallets.wallet("a").password });
      const b = new ZcashdClient(wallets.url, { user: "b", password: wallets.wallet("b").password });
      const f = new ZcashdClient(wallets.url, { user: "f", password: wallets.wallet("f").password });
      const from = await a.call<string>("z_getnewaddress");
      const to = await b.call<string>("z_getnewaddress");
      const deposits = [123_456_789, 1, 98_765_432, 50_000_000];
      for (const zat of deposits) await f.call("zsd_receive", [from, zat]);
      await a.call("generate", [1]);
      // Amounts whose doubles are not the decimal (0.1 + 0.2 ≠ 0.3): read exactly as written.
      const payments = ["0.29999999", "1.23456788", "0.00000001", "0.1"];
      let fees = 0n;
      for (const amount of payments) {
        const opid = await a.call<string>("z_sendmany", [from, [{ address: to, amount: Number(amount) }], 1, null]);
        const op = await settle(a, opid);
        expect(op.status).toBe("success");
        const tx = wallets.ledger.transaction(op.result!.txid)!;
        expect(tx.find((n) => n.address === to)!.amountZat).toBe(parseZec(amount));
        // The change is the sender's own, marked as such.
        const change = tx.find((n) => n.address === from);
        if (change) expect(change.change).toBe(true);
        fees += 12_345n;
        await a.call("generate", [1]);
      }
      const received = deposits.reduce((s, z) => s + BigInt(z), 0n);
      const sent = payments.reduce((s, p) => s + parseZec(p), 0n);
      expect(wallets.ledger.balance(from, 0)).toBe(received - sent - fees);
      expect(BigInt(await a.call<number>("z_getbalance", [from, 1, true]))).toBe(received - sent - fees);
      expect(wallets.ledger.balance(to, 0)).toBe(sent);
      // What the sender sees: its deposits, and its change notes flagged as change.
      const seen = await a.call<Received[]>("z_listreceivedbyaddress", [from, 1]);
      expect(seen.filter((n) => !n.change).map((n) => n.amountZat)).toEqual(deposits);
      expect(seen.filter((n) => n.change).length).toBeGreaterThan(0);
      // Every zatoshi that entered is in an unspent note or went to fees.
      const unspentEverywhere = wallets.ledger.notes.filter((n) => !n.spentBy).reduce((s, n) => s + n.amountZat, 0n);
      expect(unspentEverywhere + fees).toBe(received);

      // ZEC leaving outside any wallet's RPC: no operation, but the sender's balance falls by it and a fee.
      const before = wallets.ledger.balance(from, 1);
      expect(() => wallets.payOutside(from, "zs1notanaddress", 1_000n)).toThrow(/not a testnet shielded address/);
      const txid = wallets.payOutside(from, to, 1_000n);
      expect(wallets.ledger.transaction(txid)).toBeDefined();
      expect(wallets.ledger.balance(from, 0)).toBe(before - 1_000n - 12_345n);
    } finally {
      await wallets.close();
    }
  });

  it("lets a test give one wallet a note the ledger does not have", async () => {
    sim.wallet("auditor");
    const injected = sim.injectNote("auditor", {
      address: custodyAddress,
      amountZat: 9n * 10n ** 8n,
      memo: textMemoHex("zsd-note:0x" + "cd".repeat(32)),
      confirmations: 5,
    });
    const lying = await received(auditor, custodyAddress, 5);
    expect(lying.map((n) => n.txid)).toContain(injected.txid);
    expect((await received(custody, custodyAddress, 0)).map((n) => n.txid)).not.toContain(injected.txid);
    expect(sim.ledger.transaction(injected.txid)).toBeUndefined();
    // It ages with the chain.
    await custody.call("generate", [1]);
    expect((await received(auditor, custodyAddress, 6)).find((n) => n.txid === injected.txid)).toBeDefined();
  });

  it("reads ZEC amounts exactly, in any notation JSON gives", () => {
    const read: [number | string, bigint][] = [
      [0.00000001, 1n],
      [2.5e-7, 25n],
      [0.1 + 0.2 === 0.3 ? 0 : 0.3, 30_000_000n],
      [1.23456789, 123_456_789n],
      [20_999_999.99999999, 2_099_999_999_999_999n],
      ["21000000", 2_100_000_000_000_000n],
      [1.5e3, 150_000_000_000n],
    ];
    for (const [amount, zat] of read) expect(zatFromAmount(amount)).toBe(zat);
    for (const bad of [1e21, 1e-9, NaN, Infinity, "1,5", "0x10", " 1", true, null])
      expect(() => zatFromAmount(bad)).toThrow(RpcError);
  });

  it("answers bad parameters with zcashd's error codes", async () => {
    const to = sim.wallet("auditor").newAddress();
    const refusals: [string, unknown[], number][] = [
      ["z_listreceivedbyaddress", [custodyAddress, -1], -8],
      ["z_listreceivedbyaddress", ["zs1notanaddress", 1], -5],
      ["z_listreceivedbyaddress", [42, 1], -3],
      ["z_sendmany", [custodyAddress, [], 1], -8],
      ["z_sendmany", [custodyAddress, "nope", 1], -3],
      ["z_sendmany", [custodyAddress, [{ address: "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd", amount: 1 }], 1], -5],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 1.000000001 }], 1], -3],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: -1 }], 1], -3],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 21_000_001 }], 1], -3],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 0 }], 1], -8],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 1, memo: "xyz" }], 1], -8],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 1, memo: "00".repeat(513) }], 1], -8],
      [
        "z_sendmany",
        [
          custodyAddress,
          [
            { address: to, amount: 1 },
            { address: to, amount: 1 },
          ],
          1,
        ],
        -8,
      ],
      ["z_sendmany", [custodyAddress, [{ address: to, amount: 1 }], 1, null, "Whatever"], -8],
      ["z_getoperationstatus", ["opid"], -3],
      ["z_getnewaddress", ["sprout"], -8],
      ["generate", [-1], -3],
      ["generate", [1_000_000], -8],
      // Only the funding wallet has the sandbox's zsd_receive; to others it does not exist, as on a real node.
      ["zsd_receive", [custodyAddress, 1], -32601],
      ["z_nosuchmethod", [], -32601],
    ];
    for (const [method, params, code] of refusals) {
      const error = await custody.call(method, params).catch((e: unknown) => e);
      expect({ method, params, code: (error as ZcashdError).code }).toEqual({ method, params, code });
      expect(error).toBeInstanceOf(ZcashdError);
    }
    await expect(funder.call("zsd_receive", [custodyAddress, 0])).rejects.toMatchObject({ code: -3 });
    await expect(funder.call("zsd_receive", [custodyAddress, 1, "zz"])).rejects.toMatchObject({ code: -8 });
  });

  /** A raw POST: the status and body the simulator answers, whatever they are. */
  function post(body: string | Buffer, auth = `custody:${sim.wallet("custody").password}`) {
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(sim.url, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(auth).toString("base64")}` },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  it("answers hostile bodies with errors, and keeps serving", async () => {
    const hostile: [string | Buffer, number, number | null][] = [
      ["{", 500, -32700],
      ["", 500, -32700],
      [Buffer.from([0xff, 0xfe, 0x00, 0x7b]), 500, -32700],
      ["null", 400, -32600],
      ["42", 400, -32600],
      ['"getblockcount"', 400, -32600],
      ['{"method": 5}', 400, -32600],
      ['{"method": "getblockcount", "params": null, "id": 1}', 200, null],
      ['{"method": "getblockcount", "params": {"a": 1}}', 400, -32600],
      ['{"method": "__proto__"}', 404, -32601],
      ['{"method": "constructor"}', 404, -32601],
      ['{"method": "toString"}', 404, -32601],
      ['{"method": "z_sendmany", "params": [null, [{"__proto__": {"address": 1}}]]}', 500, -3],
      ['{"method": "z_listreceivedbyaddress", "params": [{"toString": 1}]}', 500, -3],
      ['{"method": "z_getoperationstatus", "params": [[{}]]}', 500, -3],
      ['{"method": "generate", "params": ["1e9"]}', 500, -3],
      ["[" + '{"method":"getblockcount"},'.repeat(200) + "{}]", 400, -32600],
      ["[" + "[".repeat(5000) + "]".repeat(5000) + "]", 200, -32600],
    ];
    for (const [body, status, code] of hostile) {
      const answer = await post(body);
      const parsed = JSON.parse(answer.body) as { error?: { code: number } } | { error?: { code: number } }[];
      const first = Array.isArray(parsed) ? parsed[0] : parsed;
      expect({ body: String(body).slice(0, 40), status: answer.status, code: first?.error?.code ?? null }).toEqual({
        body: String(body).slice(0, 40),
        status,
        code,
      });
    }
    // A batch answers each call on its own.
    const batch = JSON.parse((await post('[{"id":1,"method":"getblockcount"},{"id":2,"method":"nope"},7]')).body) as {
      id: number;
      result: unknown;
      error: { code: number } | null;
    }[];
    expect(batch.map((r) => r.error?.code ?? null)).toEqual([null, -32601, -32600]);
    expect(batch[0]!.result).toBe(sim.ledger.tip);
    // Wrong credentials: 401 and nothing else.
    expect(await post('{"method":"getblockcount"}', "custody:wrong")).toEqual({ status: 401, body: "" });
    expect((await post('{"method":"getblockcount"}', "nobody:x")).status).toBe(401);
    // More than a megabyte is cut off, unread.
    // (The socket may close before the client reads the 413.)
    const huge = await post('{"method":"getblockcount","pad":"' + "x".repeat(2 * 1024 * 1024) + '"}').then(
      (answer) => answer.status,
      () => "closed",
    );
    expect([413, "closed"]).toContain(huge);
    expect(await custody.call("getblockcount")).toBe(sim.ledger.tip);
  });

  it("applies faults set on the handle to every wallet, or to one", async () => {
    sim.knobs.unavailable = true;
    await expect(custody.call("getblockcount")).rejects.toThrow(/HTTP 503/);
    sim.knobs.unavailable = false;
    sim.wallet("auditor").knobs.unavailable = true;
    await expect(auditor.call("getblockcount")).rejects.toThrow(/HTTP 503/);
    expect(await custody.call("getblockcount")).toBe(sim.ledger.tip);
    sim.wallet("auditor").knobs.unavailable = false;

    sim.wallet("custody").knobs.refuseNextSend = "Insufficient funds: have 0, need 1";
    const to = sim.wallet("auditor").newAddress();
    await expect(
      custody.call("z_sendmany", [custodyAddress, [{ address: to, amount: 0.01 }], 1]),
    ).rejects.toMatchObject({ code: -6, message: "Insufficient funds: have 0, need 1" });
    sim.knobs.failNextSend = "SendTransaction: Transaction commit failed";
    const failed = await custody.call<string>("z_sendmany", [custodyAddress, [{ address: to, amount: 0.01 }], 1]);
    expect(await settle(custody, failed)).toMatchObject({ status: "failed", error: { message: /commit failed/ } });
    expect(sim.sends.at(-1)).toMatchObject({ opid: failed, txid: undefined });

    sim.knobs.holdOperations = true;
    const held = await custody.call<string>("z_sendmany", [custodyAddress, [{ address: to, amount: 0.01 }], 1]);
    for (let i = 0; i < 5; i++)
      expect(await custody.call("z_getoperationstatus", [[held]])).toMatchObject([{ status: "executing" }]);
    sim.knobs.holdOperations = false;
    const done = await settle(custody, held);
    expect(done).toMatchObject({ status: "success", result: { txid: sim.sends.at(-1)!.txid } });
    expect(await custody.call("z_getoperationresult", [[held]])).toMatchObject([{ id: held, status: "success" }]);
    // Handed out once: zcashd forgets an operation whose result was read.
    expect(await custody.call("z_getoperationstatus", [[held]])).toEqual([]);

    const forgotten = await custody.call<string>("z_sendmany", [custodyAddress, [{ address: to, amount: 0.01 }], 1]);
    sim.forgetOperations();
    expect(await custody.call("z_getoperationstatus", [[forgotten]])).toEqual([]);
    // Forgotten, yet paid: the ledger has the transaction.
    expect(sim.ledger.transaction(sim.sends.at(-1)!.txid!)).toBeDefined();

    // Their change confirmed: the custody wallet has notes to spend again.
    await custody.call("generate", [1]);
    sim.knobs.dropNextSendAnswer = true;
    await expect(
      custody.call("z_sendmany", [custodyAddress, [{ address: to, amount: 0.01 }], 1]),
    ).rejects.not.toBeInstanceOf(ZcashdError);
    expect(sim.ledger.transaction(sim.sends.at(-1)!.txid!)).toBeDefined();
    await custody.call("generate", [1]);
  });

  it("refuses every payment to the sandbox's failing-payout address, as a wallet refuses one, and spends nothing", async () => {
    // A shielded address of this network as any other: the API, custody and a sender's wallet accept it.
    expect(parseShieldedAddress(SANDBOX_REFUSED_ADDRESS, "testnet").address).toBe(SANDBOX_REFUSED_ADDRESS);
    expect(sim.ledger.payable(SANDBOX_REFUSED_ADDRESS)).toBe(true);
    await custody.call("generate", [1]);
    const before = unspentZat(custodyAddress);
    const sends = sim.sends.length;
    const other = sim.wallet("auditor").newAddress();
    for (const amounts of [
      [{ address: SANDBOX_REFUSED_ADDRESS, amount: 0.01 }],
      // Among other outputs too: the whole payment is refused, as zcashd refuses a send it cannot make whole.
      [
        { address: other, amount: 0.01 },
        { address: SANDBOX_REFUSED_ADDRESS, amount: 0.02 },
      ],
    ]) {
      for (let attempt = 0; attempt < 3; attempt++) {
        await expect(custody.call("z_sendmany", [custodyAddress, amounts, 1])).rejects.toMatchObject({
          code: -8,
          message: expect.stringContaining(`refuses every payment to ${SANDBOX_REFUSED_ADDRESS}`),
        });
      }
    }
    expect(unspentZat(custodyAddress)).toBe(before);
    expect(sim.sends.length).toBe(sends);
    expect(sim.ledger.notesOf(SANDBOX_REFUSED_ADDRESS)).toEqual([]);
    // Any other address is paid as before.
    const paid = await custody.call<string>("z_sendmany", [custodyAddress, [{ address: other, amount: 0.01 }], 1]);
    expect(await settle(custody, paid)).toMatchObject({ status: "success" });
    await custody.call("generate", [1]);
  });

  describe("as a process", () => {
    let child: ChildProcess | undefined;
    afterAll(() => {
      child?.kill("SIGTERM");
    });

    it("starts from main.ts, prints its URL and answers getblockcount", async () => {
      child = spawn(process.execPath, ["--import", "tsx", "api/src/sandbox/zcashd-sim/main.ts"], {
        env: {
          ...process.env,
          PORT: "0",
          ZCASHD_SIM_WALLETS: "custody:secret,attestor-1:other",
          ZCASHD_SIM_FUNDING_WALLET: "custody",
          ZCASHD_SIM_BLOCK_MS: "0",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stderr!.on("data", (chunk) => (output += chunk));
      const line = await new Promise<string>((resolve, reject) => {
        child!.stdout!.on("data", (chunk) => {
          output += chunk;
          if (output.includes("\n")) resolve(output);
        });
        child!.once("exit", (code) => reject(new Error(`zcashd-sim exited (${code}): ${output}`)));
      });
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
      expect(url).toBeDefined();
      const wallet = new ZcashdClient(url!, { user: "attestor-1", password: "other" });
      expect(await wallet.call("getblockcount")).toBe(0);
      const funding = new ZcashdClient(url!, { user: "custody", password: "secret" });
      const address = await funding.call<string>("z_getnewaddress");
      await funding.call("zsd_receive", [address, 5]);
      await funding.call("generate", [1]);
      expect(await wallet.call("getblockcount")).toBe(1);
      await expect(wallet.call("zsd_receive", [address, 5])).rejects.toMatchObject({ code: -32601 });
      child.kill("SIGTERM");
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).toBe(0);
      child = undefined;
    });
  });
});
