// The zcashd custody adapter against a local server speaking zcashd's JSON-RPC.
import { formatUnits } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Chain } from "../../api/src/chain.ts";
import { Attestor } from "../../api/src/custody/attestor.ts";
import { ZcashdClient, ZcashdCustody, parseDepositMemo } from "../../api/src/custody/zcashd.ts";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { createNote, depositLeaf, noteCommitment, releaseProver } from "../../sdk/js/src/notes/index.ts";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
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
    storage = await openStorage("pglite");
    const chain = new Chain(s.deployment, s.rpcUrl, 5000);
    const attestor = new Attestor(chain, hardhatPrivateKey(1));
    const client = new ZcashdClient(zcashd.url, { user: zcashd.user, password: zcashd.password });
    custody = new ZcashdCustody(storage.db, chain, attestor, client, {
      address: CUSTODY,
      minConfirmations: 3,
      pollMs: 10,
    });
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
      { txid: txid(), amountZat: 3 * 1e8, memo, confirmations: 5 },
      { txid: txid(), amountZat: 1e8, memo: memoHex("not a deposit"), confirmations: 9 },
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

  it("pays a redemption with z_sendmany and completes it with zcashd's txid", async () => {
    await s.depositAndMint({ amountZat: 5n * ZEC, mintAmount: 100n * ZSD, recipient: accounts.alice.address });
    await s.receipt(await s.as(accounts.alice).redemptions.write.redeem([50n * ZSD, WITHDRAW]));
    const id = await s.read.redemptions.read.redemptionCount();
    const due = (await s.read.redemptions.read.getRedemption([id])).zatDue;

    const paid = await custody.payRedemption(id);
    const send = zcashd.sends.at(-1)!;
    expect(send.amounts).toEqual([{ address: WITHDRAW, amount: Number(formatUnits(due, 8)) }]);
    expect(paid.zatPaid).toBe(due);
    expect((await s.read.redemptions.read.getRedemption([id])).status).toBe(2);
    const [event] = await s.publicClient.getContractEvents({
      address: s.read.redemptions.address,
      abi: s.read.redemptions.abi,
      eventName: "RedemptionCompleted",
      args: { id },
    });
    expect(event!.args.zcashTxId).toBe(paid.zcashTxId);
  });

  it("leaves a redemption requested when zcashd fails the payment", async () => {
    await s.receipt(await s.as(accounts.alice).redemptions.write.redeem([10n * ZSD, WITHDRAW]));
    const id = await s.read.redemptions.read.redemptionCount();
    zcashd.failNextSend = "Insufficient funds, have 0.01, need 0.2";
    await expect(custody.payRedemption(id)).rejects.toThrow(/z_sendmany failed: Insufficient funds/);
    expect((await s.read.redemptions.read.getRedemption([id])).status).toBe(1);
    // The next payout runs: one failure does not block the queue.
    const paid = await custody.payRedemption(id);
    expect(paid.redemptionId).toBe(id);
  });

  it("says so when zcashd refuses the credentials", async () => {
    const wrong = new ZcashdClient(zcashd.url, { user: "zsd", password: "wrong" });
    await expect(wrong.call("z_listreceivedbyaddress", [CUSTODY, 1])).rejects.toThrow(/credentials/);
    const client = new ZcashdClient(zcashd.url, { user: zcashd.user, password: zcashd.password });
    await expect(client.call("z_nosuchmethod")).rejects.toMatchObject({ code: -32601 });
  });
});
