// Attestors that check for themselves: each signs only deposits its own node shows (amount, txid and
// the memo's note commitment), so one attestor alone records nothing, a claim naming another note
// than the memo's is signed by none, a lying node's attestor is outvoted, a deposit goes through with
// one attestor down, and (the trust this leaves) two colluding attestors of three can record a
// deposit that never happened.
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import { createNote, noteCommitment } from "@zsd/sdk/notes";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { AttestorQuorum, QuorumNotMet } from "../../../api/src/adapters/custody/attestation.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { depositMemoHex } from "../../../api/src/adapters/custody/index.ts";
import { ZcashdClient } from "../../../api/src/adapters/custody/zcashd.ts";
import { DepositAttestor } from "../../../api/src/attestor/attest.ts";
import { serveAttestor } from "../../../api/src/attestor/server.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type System, ZEC } from "../../helpers/fixtures.ts";
import { type RelayApi, json, useRelayApi } from "../helpers.ts";

describe("attestors", () => {
  let s: System;
  let api: RelayApi;
  let chain: Chain;
  let restarted: { close: () => Promise<void> } | undefined;

  useRelayApi({}, async (stack) => {
    ({ s, api } = stack);
    chain = new Chain(s.deployment, s.rpcUrl, 5_000);
  });
  afterAll(async () => {
    await restarted?.close();
  });

  /** Custody's calls asking the attestors at `urls`. */
  const custodyWith = (urls: string[]) =>
    new CustodyCalls(chain, hardhatPrivateKey(1), undefined, new AttestorQuorum(chain, urls, 5_000));
  const urls = () => api.zcash.attestors.map((a) => a.url);
  /** A deposit that reached custody on the ledger and is confirmed. */
  const paid = (amountZat: bigint) => {
    const commitment = noteCommitment(createNote());
    const txid = api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, amountZat, depositMemoHex(commitment));
    api.zcash.simulator.generate(1);
    return { noteCommitment: commitment, amountZat, zcashTxId: zcashTxIdFromDisplay(txid) };
  };
  /** A deposit only the given attestors' nodes show: their nodes lie. */
  const shownOnlyTo = (wallets: string[], amountZat: bigint) => {
    const commitment = noteCommitment(createNote());
    const txid = "ab".repeat(16) + Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");
    for (const wallet of wallets) {
      api.zcash.simulator.injectNote(wallet, {
        address: api.zcash.custodyAddress,
        amountZat,
        memo: depositMemoHex(commitment),
        confirmations: 5,
        txid,
      });
    }
    return { noteCommitment: commitment, amountZat, zcashTxId: zcashTxIdFromDisplay(txid) };
  };
  const recorded = () => s.read.registry.read.totalDepositedZat();

  it("records a paid deposit under 2 of 3 signatures; one attestor alone records nothing", async () => {
    const before = await recorded();
    const alone = custodyWith(urls().slice(0, 1));
    const deposit = paid(3n * ZEC);
    const refusal = await alone.recordDeposits([deposit]).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(QuorumNotMet);
    expect((refusal as QuorumNotMet).answers.filter((a) => "signature" in a)).toHaveLength(1);
    expect(await recorded()).toBe(before);
    await custodyWith(urls()).recordDeposits([deposit]);
    expect(await recorded()).toBe(before + 3n * ZEC);
  });

  it("still records with one attestor down, through the sandbox endpoint", async () => {
    const before = await recorded();
    const [down] = api.zcash.attestors;
    await down!.close();
    try {
      const response = await api.call(
        "/v1/sandbox/deposits",
        json({ amount: "2", noteCommitment: noteCommitment(createNote()).toString() }),
      );
      expect(response.status).toBe(201);
      expect(await recorded()).toBe(before + 2n * ZEC);
    } finally {
      // Served again on the same address for the cases after this one.
      const port = Number(new URL(down!.url).port);
      const wallet = api.zcash.simulator.wallet(down!.wallet);
      restarted = await serveAttestor(
        new DepositAttestor({
          account: privateKeyToAccount(hardhatPrivateKey(16)),
          zcashd: new ZcashdClient(api.zcash.simulator.url, { user: wallet.user, password: wallet.password }),
          custodyAddress: api.zcash.custodyAddress,
          minConfirmations: 1,
          chainId: s.chainId,
          registry: s.read.registry.address,
          batchCount: () => s.read.registry.read.depositBatchCount(),
        }),
        { port },
      );
    }
  });

  it("does not record a deposit one lying node shows: its attestor signs, the others refuse, nothing lands", async () => {
    const before = await recorded();
    const fake = shownOnlyTo([api.zcash.attestors[0]!.wallet], 50n * ZEC);
    const refusal = (await custodyWith(urls())
      .recordDeposits([fake])
      .catch((error: unknown) => error)) as QuorumNotMet;
    expect(refusal).toBeInstanceOf(QuorumNotMet);
    const answers = refusal.answers;
    expect(answers.filter((a) => "signature" in a)).toHaveLength(1);
    expect(answers.filter((a) => "refused" in a && a.status === 422)).toHaveLength(2);
    expect(await recorded()).toBe(before);
  });

  it("signs nothing for a paid deposit claimed with another note commitment than its memo's, and records nothing", async () => {
    const before = await recorded();
    const deposit = paid(4n * ZEC);
    // Right txid and amount; the leaf would hold a commitment whose note the claimant, not the depositor, knows.
    const claimed = { ...deposit, noteCommitment: noteCommitment(createNote()) };
    const refusal = (await custodyWith(urls())
      .recordDeposits([claimed])
      .catch((error: unknown) => error)) as QuorumNotMet;
    expect(refusal).toBeInstanceOf(QuorumNotMet);
    expect(refusal.answers.filter((a) => "signature" in a)).toEqual([]);
    expect(refusal.answers.filter((a) => "refused" in a && a.status === 422)).toHaveLength(3);
    expect(await recorded()).toBe(before);
    // The deposit as paid still goes through.
    await custodyWith(urls()).recordDeposits([deposit]);
    expect(await recorded()).toBe(before + 4n * ZEC);
  });

  it("records what two colluding attestors of three sign, backed by nothing: the trust a 2-of-3 set asks for", async () => {
    const before = await recorded();
    const fake = shownOnlyTo(
      api.zcash.attestors.slice(1).map((a) => a.wallet),
      7n * ZEC,
    );
    await custodyWith(urls()).recordDeposits([fake]);
    // On the chain as collateral; custody's own node never received it.
    expect(await recorded()).toBe(before + 7n * ZEC);
    const custodyNode = api.zcash.simulator.ledger.notesOf(api.zcash.custodyAddress);
    expect(custodyNode.some((n) => n.amountZat === 7n * ZEC)).toBe(false);
  });

  it("refuses a deposit without its confirmations, the wrong turn, a repeated deposit and malformed requests, each with a problem", async () => {
    const [first] = api.zcash.attestors;
    const post = (body: unknown, type = "application/json") =>
      fetch(`${first!.url}/v1/attestations`, {
        method: "POST",
        headers: { "content-type": type },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const turn = await s.read.registry.read.depositBatchCount();
    const commitment = noteCommitment(createNote());
    // In the mempool: no confirmation yet, whatever the block timer would mine meanwhile.
    api.zcash.simulator.blocksHeld = true;
    const txid = api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, ZEC, depositMemoHex(commitment));
    const claim = {
      zcashTxId: zcashTxIdFromDisplay(txid),
      amountZat: ZEC.toString(),
      noteCommitment: `0x${commitment.toString(16).padStart(64, "0")}`,
    };
    try {
      const unconfirmed = await post({ batch: turn.toString(), deposits: [claim] });
      expect(unconfirmed.status).toBe(422);
      expect(unconfirmed.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await unconfirmed.json()).toMatchObject({ code: "not_seen", deposits: [0] });
    } finally {
      api.zcash.simulator.blocksHeld = false;
    }
    api.zcash.simulator.generate(1);
    // Another amount than paid: not what the node shows.
    const otherAmount = await post({ batch: turn.toString(), deposits: [{ ...claim, amountZat: "100000001" }] });
    expect(otherAmount.status).toBe(422);
    // The paid txid and amount with another note commitment than its memo carries: a leaf someone else
    // could spend. Not what the node shows either, and nothing signed.
    const otherCommitment = `0x${noteCommitment(createNote()).toString(16).padStart(64, "0")}`;
    const otherMemo = await post({ batch: turn.toString(), deposits: [{ ...claim, noteCommitment: otherCommitment }] });
    expect(otherMemo.status).toBe(422);
    const refusedMemo = (await otherMemo.json()) as Record<string, unknown>;
    expect(refusedMemo).toMatchObject({ code: "not_seen", deposits: [0] });
    expect(refusedMemo).not.toHaveProperty("signature");
    const wrongTurn = await post({ batch: (turn + 1n).toString(), deposits: [claim] });
    expect(wrongTurn.status).toBe(409);
    expect(((await wrongTurn.json()) as { detail: string }).detail).toContain(`is ${turn}`);
    const repeated = await post({ batch: turn.toString(), deposits: [claim, claim] });
    expect(repeated.status).toBe(422);
    expect(await repeated.json()).toMatchObject({ code: "repeated", deposits: [1] });
    for (const [body, type, status] of [
      ["{", "application/json", 400],
      [{ batch: "-1", deposits: [claim] }, "application/json", 400],
      [{ batch: turn.toString(), deposits: [] }, "application/json", 400],
      [{ batch: turn.toString(), deposits: [claim], extra: 1 }, "application/json", 400],
      [{ batch: turn.toString(), deposits: [{ ...claim, noteCommitment: "0x\u0000" }] }, "application/json", 400],
      [{ batch: turn.toString(), deposits: [claim] }, "text/plain", 415],
      ["x".repeat(70_000), "application/json", 413],
    ] as const) {
      const response = await post(body, type);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    expect((await fetch(`${first!.url}/v1/attestations`)).status).toBe(405);
    expect((await fetch(`${first!.url}/nowhere`)).status).toBe(404);
    // Its node down: it says so, and signs nothing.
    const wallet = api.zcash.simulator.wallet(first!.wallet);
    wallet.knobs.unavailable = true;
    try {
      const down = await post({ batch: turn.toString(), deposits: [claim] });
      expect(down.status).toBe(503);
    } finally {
      wallet.knobs.unavailable = false;
    }
    const signed = await post({ batch: turn.toString(), deposits: [claim] });
    expect(signed.status).toBe(200);
    expect(await signed.json()).toMatchObject({ signer: first!.signer, batch: turn.toString() });
  });

  it("keeps only signatures that recover to a member of the registry's set", async () => {
    // An attestor with a key outside the set sees the same ledger and signs honestly: its signature does not count.
    const outsiderWallet = api.zcash.simulator.wallet(api.zcash.attestors[2]!.wallet);
    const outsider = await serveAttestor(
      new DepositAttestor({
        account: privateKeyToAccount(hardhatPrivateKey(15)),
        zcashd: new ZcashdClient(api.zcash.simulator.url, {
          user: outsiderWallet.user,
          password: outsiderWallet.password,
        }),
        custodyAddress: api.zcash.custodyAddress,
        minConfirmations: 1,
        chainId: s.chainId,
        registry: s.read.registry.address,
        batchCount: () => s.read.registry.read.depositBatchCount(),
      }),
    );
    try {
      const deposit = paid(ZEC);
      const refusal = (await custodyWith([urls()[0]!, outsider.url])
        .recordDeposits([deposit])
        .catch((error: unknown) => error)) as QuorumNotMet;
      expect(refusal).toBeInstanceOf(QuorumNotMet);
      expect(refusal.answers.find((a) => a.url === outsider.url)).toMatchObject({
        refused: expect.stringMatching(/not a member/),
      });
    } finally {
      await outsider.close();
    }
  });
});
