// Reserves in public: custody's ZEC read from its node against the chain's count; a payout sent
// outside the system and a deposit attested but never received are each found with their figures;
// the guardian stops new mints on the shortfall and resumes them once it is made good, and a guardian
// transaction that fails leaves the reading and its alert stored and is tried again at the next.
// The worker reads them on its schedule and after every settled payout.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNote, noteCommitment, releaseProver } from "@zsd/sdk/notes";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { AttestorQuorum } from "../../../api/src/adapters/custody/attestation.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { depositMemoHex } from "../../../api/src/adapters/custody/index.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert } from "../../helpers/fixtures.ts";
import { type RelayApi, eventually, json, openStorage, startRelayApi, useRelayApi } from "../helpers.ts";
import { FormClient } from "../../dashboard/client.ts";

const FLOAT = 2n * ZEC;
const TOLERANCE = 100_000n;

describe("reserves", () => {
  let s: System;
  let api: RelayApi;
  let db: Database;

  useRelayApi(
    {
      env: { GUARDIAN_PRIVATE_KEY: hardhatPrivateKey(19), RESERVES_TOLERANCE_ZAT: String(TOLERANCE) },
      zcash: { floatZat: FLOAT },
    },
    (stack) => ({ s, api, db } = stack),
  );

  const reserves = async () => {
    const response = await api.call("/v1/reserves?history=5", { key: null });
    expect(response.status).toBe(200);
    return (await response.json()) as {
      status: string;
      differenceZat: string;
      mintsPaused: boolean;
      custody: { heldZat: string; inFlightZat: string; zcashHeight: number };
      chain: { expectedZat: string; blockNumber: number };
      history: unknown[];
    };
  };

  const events = async () =>
    (
      await db.query<{ type: string; payload: string }>(
        "SELECT type, payload FROM webhook_events WHERE type LIKE 'reserves.%' ORDER BY created_at, id",
      )
    ).map((e) => ({ type: e.type, data: (JSON.parse(e.payload) as { data: Record<string, unknown> }).data }));
  const metric = async (name: string) => {
    const text = await (await api.call("/metrics", { key: null })).text();
    return text.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1];
  };

  it("answers 503 before the first reading, then both sides: custody's float over the chain's count", async () => {
    const before = await api.call("/v1/reserves", { key: null });
    expect(before.status).toBe(503);
    expect(before.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    // No reading yet: its age is unbounded, so an alert on it fires for a watch that never read.
    expect(await metric("zsd_reserves_reading_age_seconds")).toBe("+Inf");
    // Deposits through the sandbox: paid into custody's address, recorded under the attestors.
    for (const amount of ["3", "1.5"]) {
      const response = await api.call(
        "/v1/sandbox/deposits",
        json({ amount, noteCommitment: noteCommitment(createNote()).toString() }),
      );
      expect(response.status).toBe(201);
    }
    const reading = await api.reserves!.reconcile();
    expect(reading).toMatchObject({
      heldZat: FLOAT + 450_000_000n,
      inFlightZat: 0n,
      expectedZat: 450_000_000n,
      differenceZat: FLOAT,
      status: "ok",
      mintsPaused: false,
    });
    expect(reading.blockNumber).toBe(await s.publicClient.getBlockNumber());
    const shown = await reserves();
    expect(shown).toMatchObject({ status: "ok", differenceZat: FLOAT.toString(), mintsPaused: false });
    expect(shown.chain.expectedZat).toBe("450000000");
    expect(shown.custody.zcashHeight).toBeGreaterThan(0);
    expect(Number(await metric("zsd_reserves_reading_age_seconds"))).toBeLessThan(60);
  });

  it("finds a payout sent outside the system, stops new mints through the guardian and resumes them once made good", async () => {
    // An observer agent of the account hears of the shortfall and of its end (the outbox has them).
    const agent = await api.call(
      "/v1/agents/register",
      json({
        name: "reserves watch",
        webhookUrl: "http://127.0.0.1:9/hooks",
        events: ["reserves.shortfall", "reserves.restored"],
        role: "observer",
      }),
    );
    expect(agent.status).toBe(201);
    const start = await api.reserves!.reconcile();
    // Custody's key used elsewhere: ZEC leaves custody's address with no redemption behind it.
    const thief = api.zcash.simulator.wallet("attestor1").newAddress();
    const stolen = FLOAT + 1n * ZEC;
    api.zcash.simulator.payOutside(api.zcash.custodyAddress, thief, stolen);
    api.zcash.simulator.generate(1);
    const short = await api.reserves!.reconcile();
    expect(short.status).toBe("shortfall");
    // The fee of the outside payment leaves too: the difference is to the zatoshi what left.
    expect(short.heldZat).toBe(start.heldZat - stolen - 10_000n);
    expect(short.differenceZat).toBe(start.differenceZat - stolen - 10_000n);
    expect(short.mintsPaused).toBe(true);
    expect(await s.read.minter.read.mintsPaused()).toBe(true);
    const shown = await reserves();
    expect(shown).toMatchObject({ status: "shortfall", mintsPaused: true });
    // A mint now is refused on the chain.
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({
      note,
      amountZat: 4n * ZEC,
      mintAmount: 10n * ZSD,
      recipient: accounts.alice.address,
    });
    await expectRevert(s.as(accounts.relayer).minter.write.mint([proved.proof, proved.request]), "MintsArePaused");
    // The metric tells the operator.
    const metrics = await (await api.call("/metrics", { key: null })).text();
    expect(metrics).toMatch(/^zsd_reserves_shortfall 1$/m);
    // Queued with the reading, before the guardian stopped mints.
    expect(await events()).toEqual([
      {
        type: "reserves.shortfall",
        data: expect.objectContaining({ differenceZat: short.differenceZat.toString(), mintsPaused: false }),
      },
    ]);
    // Made good (the operator pays the ZEC back, and the test kit's 4 ZEC deposit, recorded without
    // paying custody, is covered too): mints resume.
    api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, stolen + 4n * ZEC + 10_000n);
    api.zcash.simulator.generate(1);
    const good = await api.reserves!.reconcile();
    expect(good).toMatchObject({ status: "ok", mintsPaused: false });
    expect(await s.read.minter.read.mintsPaused()).toBe(false);
    await s.receipt(await s.as(accounts.relayer).minter.write.mint([proved.proof, proved.request]));
    expect(await (await api.call("/metrics", { key: null })).text()).toMatch(/^zsd_reserves_shortfall 0$/m);
    expect((await events()).map((e) => e.type)).toEqual(["reserves.shortfall", "reserves.restored"]);
  });

  it("finds a deposit attested but never received, by its amount", async () => {
    const start = await api.reserves!.reconcile();
    // Two of three attestors' nodes show a deposit custody never got (they collude, or both lie).
    const commitment = noteCommitment(createNote());
    const txid = "cd".repeat(32);
    for (const attestor of api.zcash.attestors.slice(0, 2)) {
      api.zcash.simulator.injectNote(attestor.wallet, {
        address: api.zcash.custodyAddress,
        amountZat: 5n * ZEC,
        memo: depositMemoHex(commitment),
        confirmations: 3,
        txid,
      });
    }
    const chain = new Chain(s.deployment, s.rpcUrl, 5_000);
    await new CustodyCalls(
      chain,
      hardhatPrivateKey(1),
      undefined,
      new AttestorQuorum(
        chain,
        api.zcash.attestors.map((a) => a.url),
      ),
    ).recordDeposits([{ noteCommitment: commitment, amountZat: 5n * ZEC, zcashTxId: zcashTxIdFromDisplay(txid) }]);
    const short = await api.reserves!.reconcile();
    expect(short.expectedZat).toBe(start.expectedZat + 5n * ZEC);
    expect(short.heldZat).toBe(start.heldZat);
    expect(short.differenceZat).toBe(start.differenceZat - 5n * ZEC);
    expect(short).toMatchObject({ status: "shortfall", mintsPaused: true });
    expect((await reserves()).history.length).toBeGreaterThanOrEqual(1);
    // The dashboard shows the same reading and its history to a signed-in account.
    const browser = new FormClient(api.url);
    expect((await browser.signUp("reserves@example.com", "a long enough password 1")).status).toBe(200);
    expect((await browser.signIn("reserves@example.com", "a long enough password 1")).status).toBe(303);
    const page = await browser.get("/dashboard/reserves");
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h3 id="reserves-now">Short</h3>');
    expect(page.html).toContain(`block ${short.blockNumber}`);
    expect(page.html.match(/<tr[\s>]/g)!.length).toBeGreaterThan(3);
  });

  it("leaves a pause it did not make to whoever made it", async () => {
    // Made good again, but the pauser of record is now the guardian by hand: the watch resumes only its own.
    api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, 5n * ZEC);
    api.zcash.simulator.generate(1);
    await api.reserves!.reconcile();
    expect(await s.read.minter.read.mintsPaused()).toBe(false);
    await s.receipt(await s.as(accounts.guardian).minter.write.setMintsPaused([true, "operator's own reason"]));
    const reading = await api.reserves!.reconcile();
    expect(reading).toMatchObject({ status: "ok", mintsPaused: true, pausedByWatch: false });
    expect(await s.read.minter.read.mintsPaused()).toBe(true);
  });

  it("stores the reading and its alert when the guardian's transaction fails, and stops mints at the next reading", async () => {
    await s.receipt(await s.as(accounts.guardian).minter.write.setMintsPaused([false, "operator resumes"]));
    expect(await api.reserves!.reconcile()).toMatchObject({ status: "ok", mintsPaused: false });
    const told = (await events()).length;
    // The guardian's key has nothing to pay gas with: its transaction cannot go out.
    const guardian = accounts.guardian.address;
    const funds = await s.publicClient.getBalance({ address: guardian });
    await s.testClient.setBalance({ address: guardian, value: 0n });
    const thief = api.zcash.simulator.wallet("attestor1").newAddress();
    api.zcash.simulator.payOutside(api.zcash.custodyAddress, thief, FLOAT + 1n * ZEC);
    api.zcash.simulator.generate(1);
    const short = await api.reserves!.reconcile();
    expect(short).toMatchObject({ status: "shortfall", mintsPaused: false, pausedByWatch: false, pauseFailed: true });
    expect(await s.read.minter.read.mintsPaused()).toBe(false);
    // Stored, published, alerted and counted all the same.
    expect(await reserves()).toMatchObject({ status: "shortfall", mintsPaused: false, pauseFailed: true });
    const [row] = await db.query<{ pause_failed: boolean; pause_error: string | null }>(
      "SELECT pause_failed, pause_error FROM reserve_readings ORDER BY id DESC LIMIT 1",
    );
    expect(row!.pause_failed).toBe(true);
    expect(row!.pause_error, "the cause, as the node gave it").toMatch(/funds|balance/i);
    expect((await events()).slice(told)).toEqual([
      {
        type: "reserves.shortfall",
        data: expect.objectContaining({ differenceZat: short.differenceZat.toString(), mintsPaused: false }),
      },
    ]);
    expect(await metric("zsd_reserves_shortfall")).toBe("1");
    expect(await metric("zsd_reserves_pause_failed")).toBe("1");

    // Funded again: the next reading stops mints, and tells no one twice.
    await s.testClient.setBalance({ address: guardian, value: funds });
    const retried = await api.reserves!.reconcile();
    expect(retried).toMatchObject({ status: "shortfall", mintsPaused: true, pausedByWatch: true, pauseFailed: false });
    expect(await s.read.minter.read.mintsPaused()).toBe(true);
    expect(await metric("zsd_reserves_pause_failed")).toBe("0");
    expect((await events()).length).toBe(told + 1);

    // A resume that fails is retried the same way.
    await s.testClient.setBalance({ address: guardian, value: 0n });
    api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, FLOAT + 1n * ZEC + 10_000n);
    api.zcash.simulator.generate(1);
    const good = await api.reserves!.reconcile();
    expect(good).toMatchObject({ status: "ok", mintsPaused: true, pausedByWatch: true, pauseFailed: true });
    expect((await events()).slice(told + 1).map((e) => e.type)).toEqual(["reserves.restored"]);
    await s.testClient.setBalance({ address: guardian, value: funds });
    expect(await api.reserves!.reconcile()).toMatchObject({ status: "ok", mintsPaused: false, pauseFailed: false });
    expect(await s.read.minter.read.mintsPaused()).toBe(false);
  });
});

describe("reserves read by the worker", () => {
  let s: System;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    s = await deploySystem();
    storage = await openStorage("postgres");
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 200n * ZSD, recipient: accounts.alice.address });
  });
  afterAll(async () => {
    await storage?.close();
    await releaseProver();
  });

  const readings = async () =>
    (
      await storage.db.query<{ id: string; read_at: Date; paid_out_zat: string; block_number: string }>(
        "SELECT id::text AS id, read_at, paid_out_zat::text AS paid_out_zat, block_number::text AS block_number " +
          "FROM reserve_readings ORDER BY id",
      )
    ).map((r) => ({ ...r, readAt: new Date(r.read_at).getTime(), paidOutZat: BigInt(r.paid_out_zat) }));

  it("reads the reserves on its schedule (RESERVES_CHECK_MS)", async () => {
    const api = await startRelayApi(s, storage.db, { RESERVES_CHECK_MS: "200" });
    try {
      await storage.db.query("DELETE FROM reserve_readings");
      api.worker!.start();
      const seen = await eventually(readings, (rows) => rows.length >= 4, "four readings from the schedule");
      // Paced by the period: each reading starts at least 200 ms after the one before (a pass may run
      // late, never early), so n of them span (n - 1) periods, less the first one's own time.
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.readAt).toBeGreaterThan(seen[i - 1]!.readAt);
      expect(seen.at(-1)!.readAt - seen[0]!.readAt).toBeGreaterThanOrEqual((seen.length - 1) * 200 - 400);
      // And they go on: the worker is not done after a few.
      const count = seen.length;
      await eventually(readings, (rows) => rows.length > count + 1, "readings to go on");
      const shown = (await (await api.call("/v1/reserves?history=2", { key: null })).json()) as { history: unknown[] };
      expect(shown.history).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it("reads them again once a payout settles, without waiting for the schedule", async () => {
    // An hour between scheduled readings: the worker's first pass reads once, and then only a payout does.
    const api = await startRelayApi(s, storage.db, { RESERVES_CHECK_MS: "3600000" });
    try {
      await storage.db.query("DELETE FROM reserve_readings");
      api.worker!.start();
      const [first] = await eventually(readings, (rows) => rows.length === 1, "the first pass's reading");
      const sealedAddress = s.seal(
        "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez",
        accounts.alice.address,
      );
      const { deadline, ...sig } = await s.signedRedeem(
        accounts.alice,
        40n * ZSD,
        sealedAddress,
        accounts.alice.address,
      );
      const redeem = await api.call(
        "/v1/redeem",
        json({
          amount: 40,
          sealedAddress,
          owner: accounts.alice.address,
          permit: { deadline: Number(deadline), ...sig },
        }),
      );
      expect(redeem.status).toBe(202);
      const { id } = (await redeem.json()) as { id: string };
      await eventually(
        async () => (await (await api.call(`/v1/redemptions/${id}`)).json()) as { status: string },
        (r) => r.status === "paid",
        "the redemption to be paid",
      );
      // $40 at $50/ZEC less the 0.5% fee: 0.796 ZEC left custody, and the chain counts it paid out.
      const after = await eventually(readings, (rows) => rows.length === 2, "a reading after the settlement");
      expect(after[1]!.paidOutZat - first!.paidOutZat).toBe(79_600_000n);
      expect((await s.read.redemptions.read.getPayout([1n])).status, "completed on the chain").toBe(2);
      // Nothing else reads them within the hour.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await readings()).toHaveLength(2);
    } finally {
      await api.close();
    }
  });
});
