// The zcashd custody adapter against a local server speaking zcashd's JSON-RPC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Chain } from "../../api/src/adapters/chain.ts";
import { CustodyCalls } from "../../api/src/adapters/custody/custody-calls.ts";
import { PayoutNotSent, PayoutRefused } from "../../api/src/adapters/custody/index.ts";
import { ZcashdClient, ZcashdCustody, parseDepositMemo } from "../../api/src/adapters/custody/zcashd.ts";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { freePort } from "../../scripts/lib/hardhat-node.ts";
import { createNote, depositLeaf, noteCommitment, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, deploySystem } from "../helpers/fixtures.ts";
import { type ZcashdTestServer, memoHex, startZcashdTestServer } from "../helpers/zcashd-server.ts";
import { openStorage } from "./helpers.ts";

const CUSTODY = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya";
const WITHDRAW = "zs1mrhc9y7jdh5r9ece8u5khgvj9kg0zgkxzdduyv0whkg7lkcrkx5xqem3e48avjq9wn2rukydkwn";
const txid = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");

describe("zcashd custody", () => {
  let s: System;
  let zcashd: ZcashdTestServer;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let custody: ZcashdCustody;

  beforeAll(async () => {
    s = await deploySystem();
    zcashd = await startZcashdTestServer(CUSTODY);
    storage = await openStorage("postgres");
    const chain = new Chain(s.deployment, s.rpcUrl, 5000);
    const attestor = new CustodyCalls(chain, hardhatPrivateKey(1));
    const client = new ZcashdClient(zcashd.url, { user: zcashd.user, password: zcashd.password });
    custody = new ZcashdCustody(storage.db, attestor, client, { address: CUSTODY, minConfirmations: 3 });
  });
  afterAll(async () => {
    await zcashd?.close();
    await storage?.close();
    await releaseProver();
  });

  it("reads the note commitment from a deposit memo", () => {
    const c = noteCommitment(createNote());
    expect(parseDepositMemo(memoHex(`zsd-note:0x${c.toString(16).padStart(64, "0")}`))).toBe(c);
    expect(parseDepositMemo(memoHex("thanks for the coffee"))).toBeUndefined();
    expect(parseDepositMemo("f6" + "00".repeat(511))).toBeUndefined();
  });

  it("records confirmed deposits that carry a note commitment, once", async () => {
    const commitment = noteCommitment(createNote());
    const memo = memoHex(`zsd-note:0x${commitment.toString(16).padStart(64, "0")}`);
    zcashd.notes.push(
      { txid: txid(), amountZat: 3 * Number(ZEC), memo, confirmations: 5 },
      { txid: txid(), amountZat: Number(ZEC), memo: memoHex("not a deposit"), confirmations: 9 },
      { txid: txid(), amountZat: 2e8, memo: memoHex(`zsd-note:0x${"1".padStart(64, "0")}`), confirmations: 1 },
    );
    const recorded = await custody.scanDeposits();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      amountZat: 3n * ZEC,
      noteCommitment: commitment,
      leaf: depositLeaf(3n * ZEC, commitment),
    });
    expect(await s.read.registry.read.totalCollateralZat()).toBe(3n * ZEC);
    // Scanning again finds nothing new.
    expect(await custody.scanDeposits()).toEqual([]);
    expect(await s.read.registry.read.size()).toBe(1n);
  });

  it("hands a payout to z_sendmany with its memo and follows the operation to its txid", async () => {
    const opid = await custody.send({ redemptionId: 7n, address: WITHDRAW, zat: 123_456_789n });
    const send = zcashd.sends.at(-1)!;
    expect(send.opid).toBe(opid);
    expect(send.amounts).toEqual([{ address: WITHDRAW, amount: 1.23456789, memo: memoHex("zsd-redemption:7") }]);
    expect(send.privacyPolicy).toBe("FullPrivacy");
    expect(await custody.operation(opid)).toEqual({ state: "pending" });
    expect(await custody.operation(opid)).toEqual({ state: "pending" });
    // zcashd prints the txid byte-reversed (display form); custody hands on the hash's own order, as the chain keeps it.
    const reversed = `0x${Buffer.from(send.txid!, "hex").reverse().toString("hex")}`;
    expect(await custody.operation(opid)).toEqual({ state: "success", zcashTxId: reversed });
  });

  it("tells a refused payment, a failed operation, one that may have paid and a forgotten one apart", async () => {
    zcashd.refuseNextSend = "Insufficient funds: have 0.01, need 0.2";
    const refused = custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 20_000_000n });
    await expect(refused).rejects.toBeInstanceOf(PayoutRefused);
    await expect(refused).rejects.toThrow(/Insufficient funds/);

    const settle = async (opid: string) => {
      await custody.operation(opid);
      await custody.operation(opid);
      return custody.operation(opid);
    };
    zcashd.failNextSend = "Could not find any non-coinbase UTXOs to spend";
    expect(await settle(await custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 20_000_000n }))).toEqual({
      state: "failed",
      reason: "z_sendmany failed: Could not find any non-coinbase UTXOs to spend",
    });
    // Failed after the transaction was built: the wallet may still broadcast it.
    zcashd.failNextSend = "SendTransaction: Transaction commit failed";
    expect(await settle(await custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 20_000_000n }))).toMatchObject({
      state: "unknown",
      reason: expect.stringMatching(/commit failed.*possibly after the transaction was built/),
    });

    const forgotten = await custody.send({ redemptionId: 9n, address: WITHDRAW, zat: 1n });
    zcashd.forgetOperations();
    expect(await custody.operation(forgotten)).toMatchObject({ state: "unknown" });
  });

  it("tells a wallet it never reached from one whose answer was lost", async () => {
    const unreachable = new ZcashdCustody(
      storage.db,
      new CustodyCalls(new Chain(s.deployment, s.rpcUrl, 5000), hardhatPrivateKey(1)),
      // A port nobody listens on (fetch refuses some low ports outright, e.g. 9).
      new ZcashdClient(`http://127.0.0.1:${await freePort()}`, { user: "zsd", password: "x" }),
      { address: CUSTODY, minConfirmations: 3 },
    );
    await expect(unreachable.send({ redemptionId: 1n, address: WITHDRAW, zat: 1n })).rejects.toBeInstanceOf(
      PayoutNotSent,
    );

    // zcashd took the payment, then the connection dropped before its answer: paid or not, nobody knows.
    const sends = zcashd.sends.length;
    zcashd.dropNextSendAnswer = true;
    const error = await custody.send({ redemptionId: 2n, address: WITHDRAW, zat: 1n }).catch((e: unknown) => e);
    expect(zcashd.sends).toHaveLength(sends + 1);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PayoutRefused);
    expect(error).not.toBeInstanceOf(PayoutNotSent);
  });

  it("says so when zcashd refuses the credentials", async () => {
    const wrong = new ZcashdClient(zcashd.url, { user: "zsd", password: "wrong" });
    await expect(wrong.call("z_listreceivedbyaddress", [CUSTODY, 1])).rejects.toThrow(/credentials/);
    const client = new ZcashdClient(zcashd.url, { user: zcashd.user, password: zcashd.password });
    await expect(client.call("z_nosuchmethod")).rejects.toMatchObject({ code: -32601 });
  });
});
