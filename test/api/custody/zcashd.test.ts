// The zcashd custody adapter against the simulated zcashd: deposits reach the
// custody wallet as notes on its ledger, payouts leave it as transactions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { PayoutNotSent, PayoutRefused, textMemoHex as memoHex } from "../../../api/src/adapters/custody/index.ts";
import { ZcashdClient, ZcashdCustody, parseDepositMemo } from "../../../api/src/adapters/custody/zcashd.ts";
import { LOCAL_ATTESTORS, hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { AttestorQuorum } from "../../../api/src/adapters/custody/attestation.ts";
import { type ServedAttestor, serveAttestors } from "../../../api/src/sandbox/zcash-side.ts";
import { freePort } from "../../../scripts/lib/hardhat-node.ts";
import { createNote, depositLeaf, noteCommitment, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, deploySystem } from "../../helpers/fixtures.ts";
import { type SimulatedZcashd, startSimulatedZcashd } from "../../../api/src/sandbox/zcashd-sim/server.ts";
import { openStorage } from "../helpers.ts";

// A mainnet node here (the API's tests run a testnet one): the adapter is the same on both.
const WITHDRAW = "zs1mrhc9y7jdh5r9ece8u5khgvj9kg0zgkxzdduyv0whkg7lkcrkx5xqem3e48avjq9wn2rukydkwn";

describe("zcashd custody", () => {
  let s: System;
  let zcashd: SimulatedZcashd;
  /** Whoever pays custody: a wallet of its own on the same ledger. */
  let depositor: ZcashdClient;
  let CUSTODY: string;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let custody: ZcashdCustody;
  let attestors: ServedAttestor[] = [];

  beforeAll(async () => {
    s = await deploySystem();
    const attestorWallets = LOCAL_ATTESTORS.accounts.map((i) => `attestor${i}`);
    zcashd = await startSimulatedZcashd({
      wallets: [
        { user: "custody" },
        { user: "depositor", funding: true },
        ...attestorWallets.map((user) => ({ user })),
      ],
      network: "mainnet",
      blockIntervalMs: 0,
    });
    storage = await openStorage("postgres");
    const chain = new Chain(s.deployment, s.rpcUrl, 5000);
    const client = new ZcashdClient(zcashd.url, { user: "custody", password: zcashd.wallet("custody").password });
    CUSTODY = await client.call<string>("z_getnewaddress", ["sapling"]);
    // The attestors watch custody's address on nodes of their own (wallets of their own on this ledger).
    attestors = await serveAttestors({
      simulator: zcashd,
      wallets: attestorWallets,
      attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
      custodyAddress: CUSTODY,
      custodyViewingKey: await client.call<string>("z_exportviewingkey", [CUSTODY]),
      chainId: s.chainId,
      registry: s.read.registry.address,
      rpcUrl: s.rpcUrl,
      minConfirmations: 3,
    });
    const calls = new CustodyCalls(
      chain,
      hardhatPrivateKey(1),
      undefined,
      new AttestorQuorum(
        chain,
        attestors.map((a) => a.url),
      ),
    );
    depositor = new ZcashdClient(zcashd.url, { user: "depositor", password: zcashd.wallet("depositor").password });
    custody = new ZcashdCustody(storage.db, calls, client, { address: CUSTODY, minConfirmations: 3 });
  });
  afterAll(async () => {
    await Promise.all(attestors.map((a) => a.close()));
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
    // The deposit is a payment from the depositor's own wallet, memo and all; the rest arrive from outside.
    const from = await depositor.call<string>("z_getnewaddress");
    await depositor.call("zsd_receive", [from, Number(5n * ZEC)]);
    await depositor.call("generate", [1]);
    await depositor.call("z_sendmany", [from, [{ address: CUSTODY, amount: 3, memo }], 1, null]);
    await depositor.call("zsd_receive", [CUSTODY, Number(ZEC), memoHex("not a deposit")]);
    await depositor.call("generate", [4]);
    // Two blocks short of the 3 confirmations custody waits for.
    await depositor.call("zsd_receive", [CUSTODY, 2e8, memoHex(`zsd-note:0x${"1".padStart(64, "0")}`)]);
    await depositor.call("generate", [1]);
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
    // On the ledger: the exact amount and memo to the payee; change and fee on custody's side.
    const outputs = zcashd.ledger.transaction(send.txid!)!;
    expect(outputs.filter((n) => !n.change)).toMatchObject([
      { address: WITHDRAW, amountZat: 123_456_789n, memo: memoHex("zsd-redemption:7") },
    ]);
    expect(outputs.filter((n) => n.change).every((n) => n.address === CUSTODY)).toBe(true);
    expect(await custody.operation(opid)).toEqual({ state: "pending" });
    expect(await custody.operation(opid)).toEqual({ state: "pending" });
    // zcashd prints the txid byte-reversed (display form); custody hands on the hash's own order, as the chain keeps it.
    const reversed = `0x${Buffer.from(send.txid!, "hex").reverse().toString("hex")}`;
    expect(await custody.operation(opid)).toEqual({ state: "success", zcashTxId: reversed });
    await depositor.call("generate", [3]);
  });

  it("tells a refused payment, a failed operation, one that may have paid and a forgotten one apart", async () => {
    zcashd.knobs.refuseNextSend = "Insufficient funds: have 0.01, need 0.2";
    const refused = custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 20_000_000n });
    await expect(refused).rejects.toBeInstanceOf(PayoutRefused);
    await expect(refused).rejects.toThrow(/Insufficient funds/);

    const settle = async (opid: string) => {
      await custody.operation(opid);
      await custody.operation(opid);
      return custody.operation(opid);
    };
    // The wallet itself finds the notes short: custody holds about 4 ZEC.
    expect(await settle(await custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 1000n * ZEC }))).toMatchObject({
      state: "failed",
      reason: expect.stringMatching(/^z_sendmany failed: Insufficient funds: have [\d.]+, need 1000\.0001/),
    });
    zcashd.knobs.failNextSend = "Could not find any non-coinbase UTXOs to spend";
    expect(await settle(await custody.send({ redemptionId: 8n, address: WITHDRAW, zat: 20_000_000n }))).toEqual({
      state: "failed",
      reason: "z_sendmany failed: Could not find any non-coinbase UTXOs to spend",
    });
    // Failed after the transaction was built: the wallet may still broadcast it.
    zcashd.knobs.failNextSend = "SendTransaction: Transaction commit failed";
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
    zcashd.knobs.dropNextSendAnswer = true;
    const error = await custody.send({ redemptionId: 2n, address: WITHDRAW, zat: 1n }).catch((e: unknown) => e);
    expect(zcashd.sends).toHaveLength(sends + 1);
    expect(zcashd.ledger.transaction(zcashd.sends.at(-1)!.txid!)).toBeDefined();
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(PayoutRefused);
    expect(error).not.toBeInstanceOf(PayoutNotSent);
  });

  it("says so when zcashd refuses the credentials", async () => {
    const wrong = new ZcashdClient(zcashd.url, { user: "zsd", password: "wrong" });
    await expect(wrong.call("z_listreceivedbyaddress", [CUSTODY, 1])).rejects.toThrow(/credentials/);
    const client = new ZcashdClient(zcashd.url, { user: "custody", password: zcashd.wallet("custody").password });
    await expect(client.call("z_nosuchmethod")).rejects.toMatchObject({ code: -32601 });
  });
});
