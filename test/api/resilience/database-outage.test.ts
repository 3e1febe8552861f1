// PostgreSQL restarted in the middle of a stream of mints and redemptions: a
// server of the test's own (the machine's cluster serves other tests) is
// stopped while the relay works and clients keep calling. Every answer during
// the outage is 503 upstream_unavailable, never a 500; clients retry with
// their Idempotency-Keys, and after the restart every mint and redemption is
// done exactly once, on the chain and in the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../../api/src/adapters/db/index.ts";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type OwnPostgres, startOwnPostgres } from "../../helpers/own-postgres.ts";
import { type RunningApi, eventually, json, startRelayApi } from "../helpers.ts";

const { alice, bob } = accounts;
const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const ROUNDS = 2;

describe("a PostgreSQL restart under a stream of mints and redemptions", () => {
  let s: System;
  let server: OwnPostgres;
  let db: Database;
  let api: RunningApi;
  /** Every status answered, as "METHOD path status code". */
  const answers: string[] = [];

  beforeAll(async () => {
    s = await deploySystem();
    server = await startOwnPostgres();
    db = await openDatabase({ url: server.url });
    api = await startRelayApi(s, db);
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    api.worker!.start();
  });
  afterAll(async () => {
    await server?.start().catch(() => undefined);
    await api?.close();
    await db?.close();
    await server?.close();
    await releaseProver();
  });

  /** A client that retries a 503 after a short wait, with the same Idempotency-Key; a 500 fails the test. */
  async function call(path: string, body?: unknown, key?: string): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const response = await api.call(
        path,
        body === undefined ? {} : json(body, key === undefined ? {} : { "idempotency-key": key }),
      );
      const problem =
        response.status >= 400 ? ((await response.clone().json()) as { code?: string; detail?: string }) : undefined;
      answers.push(`${body === undefined ? "GET" : "POST"} ${path} ${response.status} ${problem?.code ?? ""}`);
      if (response.status !== 503) return response;
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(problem).toMatchObject({ code: "upstream_unavailable", detail: expect.stringMatching(/database/i) });
      if (attempt > 300) throw new Error(`${path} still 503 after ${attempt} attempts`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function mint(round: number): Promise<string> {
    const note = createNote();
    const deposit = await call(
      "/v1/sandbox/deposits",
      { amount: "4", noteCommitment: noteCommitment(note).toString() },
      `deposit-${round}`,
    );
    expect(deposit.status).toBe(201);
    const proved = await s.prove({ note, amountZat: 400_000_000n, mintAmount: 10n * ZSD, recipient: bob.address });
    const submitted = await call(
      "/v1/proofs/submit",
      {
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "10",
        recipient: bob.address,
      },
      `proof-${round}`,
    );
    expect(submitted.status).toBe(201);
    const { proofId } = (await submitted.json()) as { proofId: string };
    const queued = await call(
      "/v1/mint",
      { amount: "10", collateralType: "ZEC", proofId, recipient: bob.address },
      `mint-${round}`,
    );
    expect(queued.status).toBe(202);
    return ((await queued.json()) as { mintId: string }).mintId;
  }

  async function redeem(round: number): Promise<string> {
    // One owner: each permit signs the next nonce, so the previous redemption must be on the chain first.
    await eventually(
      () => s.read.redemptions.read.nonces([alice.address]),
      (nonce) => nonce === BigInt(round),
      `redemption ${round - 1} to be relayed`,
      60_000,
    );
    const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
    const { deadline, ...sig } = await s.signedRedeem(alice, 5n * ZSD, sealedAddress);
    const response = await call(
      "/v1/redeem",
      {
        amount: 5,
        sealedAddress,
        owner: alice.address,
        permit: { deadline: Number(deadline), ...sig },
      },
      `redeem-${round}`,
    );
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  it("answers 503 during the outage, never 500, and completes every mint and redemption once after it", async () => {
    const supply = await s.read.token.read.totalSupply();
    const mintIds: string[] = [];
    const redemptionIds: string[] = [];
    const outageAnswers: number[] = [];

    const stream = (async () => {
      for (let round = 0; round < ROUNDS; round++) {
        mintIds.push(await mint(round));
        redemptionIds.push(await redeem(round));
      }
    })();
    // The server goes down while the first mint and redemption are being relayed, and the stream goes on.
    await eventually(
      async () => redemptionIds.length,
      (n) => n >= 1,
      "the first redemption to be accepted",
      60_000,
    );
    await server.stop();
    const outage = Date.now();
    while (Date.now() - outage < 1_500) {
      const read = await api.call(`/v1/mints/${mintIds[0]}`);
      outageAnswers.push(read.status);
      await read.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
    }
    await server.start();
    await stream;

    expect(new Set(outageAnswers)).toEqual(new Set([503]));
    expect(answers.filter((a) => / 503 /.test(a)).length).toBeGreaterThan(0);
    expect(answers.filter((a) => / 5\d\d /.test(a) && !/ 503 upstream_unavailable/.test(a))).toEqual([]);

    for (const id of mintIds) {
      const settled = await eventually(
        async () => (await (await call(`/v1/mints/${id}`)).json()) as { status: string },
        (m) => m.status === "confirmed" || m.status === "failed",
        `mint ${id} to settle`,
        60_000,
      );
      expect(settled.status).toBe("confirmed");
    }
    for (const id of redemptionIds) {
      const settled = await eventually(
        async () => (await (await call(`/v1/redemptions/${id}`)).json()) as { status: string },
        (r) => r.status === "paid" || r.status === "failed",
        `redemption ${id} to settle`,
        60_000,
      );
      expect(settled.status).toBe("paid");
    }

    // Nothing lost, nothing doubled: on the chain...
    const from = BigInt(s.deployment.contracts.StableMinter.startBlock);
    const minted = await s.publicClient.getContractEvents({
      address: s.read.minter.address,
      abi: s.read.minter.abi,
      eventName: "Minted",
      args: { recipient: bob.address },
      fromBlock: from,
    });
    expect(minted).toHaveLength(ROUNDS);
    const requested = await s.publicClient.getContractEvents({
      address: s.read.redemptions.address,
      abi: s.read.redemptions.abi,
      eventName: "PayoutRequested",
      fromBlock: from,
    });
    expect(requested).toHaveLength(ROUNDS);
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(BigInt(ROUNDS) * 10n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(supply + BigInt(ROUNDS) * 5n * ZSD);
    // ...and in the database: one row each, one transaction each, one payout each.
    const mints = await db.query<{ status: string; tx_hash: string }>("SELECT status, tx_hash FROM mints");
    expect(mints).toHaveLength(ROUNDS);
    expect(new Set(mints.map((m) => m.tx_hash))).toEqual(new Set(minted.map((e) => e.transactionHash)));
    const redemptions = await db.query<{ redemption_id: string }>("SELECT redemption_id FROM redemption_requests");
    expect(new Set(redemptions.map((r) => r.redemption_id))).toEqual(new Set(requested.map((e) => String(e.args.id))));
    const payouts = await db.query<{ n: string }>("SELECT count(*) AS n FROM payouts");
    expect(Number(payouts[0]!.n)).toBe(ROUNDS);
  });
});
