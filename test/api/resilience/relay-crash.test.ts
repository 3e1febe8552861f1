// The relay survives being killed: the API process is SIGKILLed 20 times at
// random points of mixed traffic (sandbox deposits, proof submissions, mints,
// signed redemptions and reads, several in flight at each
// kill), and restarted each time. Clients retry what got no answer with the
// same Idempotency-Key. In the end every mint and every redemption a client
// asked for is done exactly once: on the chain (events, supply) and in the
// database (one row each).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../../api/src/adapters/db/index.ts";
import { KeyService } from "../../../api/src/domain/accounts/keys.ts";
import { LOCAL_ATTESTORS, hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { type SandboxZcash, startSandboxZcash } from "../../../api/src/sandbox/zcash-side.ts";
import { type Note, createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type ApiProcess, apiProcess } from "../helpers.ts";

// CRASH_KILLS runs fewer (or more) while working on this test.
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const MINTS = 3;
const REDEMPTIONS = 4;
const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const { alice, carol } = accounts;

/** A client's request, sent again (same key, same body) until it gets an answer that is not an outage. */
interface Operation {
  key: string;
  path: string;
  body: unknown;
  /** Answers that settle it: the status, and the problem code if any. */
  answer?: { status: number; code?: string; body: Record<string, unknown> };
}

describe("relay worker across crashes", () => {
  let s: System;
  let dir: string;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Database;
  let secret: string;
  let api: ApiProcess;
  let zcash: SandboxZcash;
  const seen: string[] = [];

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-relay-crash-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    database = await createTestDatabase("zsd_relay_crash");
    db = await openDatabase({ url: database.url });
    const keys = new KeyService(db);
    secret = (await keys.create((await keys.createAccount("crash test")).id, "sandbox", "crash")).secret;
    // The Zcash side lives through the API's deaths, as a node and attestors of their own would.
    zcash = await startSandboxZcash({
      chainId: s.chainId,
      registry: s.deployment.contracts.CollateralRegistry.address,
      rpcUrl: s.rpcUrl,
      attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
      floatZat: 1_000n * ZEC,
    });
    api = await apiProcess(secret, {
      ...zcash.env,
      DATABASE_URL: database.url,
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: s.rpcUrl,
      CUSTODY_PRIVATE_KEY: hardhatPrivateKey(1),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      RATE_LIMIT_SANDBOX: "100000",
      RELAY_POLL_MS: "10",
      RELAY_IDLE_POLL_MS: "10",
      PAYOUT_POLL_MS: "50",
      PAYOUT_CONFIRMATIONS: "1",
      // A claim of an Idempotency-Key that a killed process left is taken over after 2 × 3 s.
      HEADERS_TIMEOUT_MS: "3000",
      REQUEST_TIMEOUT_MS: "3000",
      // The restarted process is the same replica: it takes its lease back without waiting for it to expire.
      RELAY_WORKER_ID: "crash-test-replica",
    });
    await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
  });

  afterAll(async () => {
    await api?.kill();
    await zcash?.close();
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  /** Sends an unsettled operation once; a refused connection, a cut one or a 503 leaves it unsettled. */
  async function attempt(op: Operation): Promise<void> {
    if (op.answer) return;
    let response: Response;
    try {
      response = await fetch(`http://127.0.0.1:${api.port}${op.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": op.key },
        body: JSON.stringify(op.body),
      });
    } catch {
      return;
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    seen.push(`${op.path} ${response.status} ${(body.code as string) ?? ""}`);
    // A 500 is a defect whatever the moment; the claim a killed request left answers 409 for a while.
    expect(response.status, JSON.stringify(body)).not.toBe(500);
    // 408: the body did not arrive within REQUEST_TIMEOUT_MS (a loaded machine); sent again like an outage.
    if (response.status === 503 || response.status === 408 || body.code === "idempotency_request_in_progress") return;
    op.answer = { status: response.status, code: body.code as string | undefined, body };
  }

  /** A client's mint: deposit, proof, submission, mint; each step once the one before is settled. */
  function mintFlow(n: number) {
    const note: Note = createNote();
    const deposit: Operation = {
      key: `deposit-${n}`,
      path: "/v1/sandbox/deposits",
      body: { amount: "4", noteCommitment: noteCommitment(note).toString() },
    };
    let submit: Operation | undefined;
    let mint: Operation | undefined;
    let proving: Promise<void> | undefined;
    return {
      mint: () => mint,
      async step() {
        if (!deposit.answer) return attempt(deposit);
        // An answer lost to a kill after the chain recorded it: the note is on the chain all the same.
        expect([201, 409]).toContain(deposit.answer.status);
        if (deposit.answer.status === 409) expect(deposit.answer.code).toBe("deposit_already_recorded");
        if (!submit) {
          proving ??= s
            .prove({ note, amountZat: 400_000_000n, mintAmount: 10n * ZSD, recipient: carol.address })
            .then((proved) => {
              submit = {
                key: `proof-${n}`,
                path: "/v1/proofs/submit",
                body: {
                  proof: proved.raw.proof,
                  publicSignals: publicSignalsToArray(proved.raw.publicSignals),
                  owner: proved.binding.owner,
                  mintAmount: "10",
                  recipient: carol.address,
                },
              };
            });
          return proving;
        }
        if (!submit.answer) return attempt(submit);
        // A retry of a submission whose answer a kill lost is told the proof's id with the conflict.
        if (submit.answer.status !== 201) expect(submit.answer.code).toBe("proof_already_submitted");
        expect(submit.answer.body.proofId).toMatch(/^prf_/);
        mint ??= {
          key: `mint-${n}`,
          path: "/v1/mint",
          body: { amount: "10", collateralType: "ZEC", proofId: submit.answer.body.proofId, recipient: carol.address },
        };
        return attempt(mint);
      },
    };
  }

  it("does every accepted mint and redemption exactly once through 20 SIGKILLs at random points", async () => {
    const supply = await s.read.token.read.totalSupply();
    const mints = Array.from({ length: MINTS }, (_, n) => mintFlow(n));
    const redemptions: Operation[] = [];
    // One owner: each permit signs the next nonce, so a redemption is asked for once the one before is on the chain.
    async function nextRedemption() {
      if (redemptions.length >= REDEMPTIONS || redemptions.some((r) => !r.answer)) return;
      if ((await s.read.redemptions.read.nonces([alice.address])) !== BigInt(redemptions.length)) return;
      const sealedAddress = s.seal(SAPLING_TESTNET, alice.address);
      const { deadline, ...sig } = await s.signedRedeem(alice, 2n * ZSD, sealedAddress);
      redemptions.push({
        key: `redeem-${redemptions.length}`,
        path: "/v1/redeem",
        body: {
          amount: 2,
          sealedAddress,
          owner: alice.address,
          permit: { deadline: Number(deadline), ...sig },
        },
      });
    }
    // Seeded, so that a failing run can be run again: the kill lands 0-400 ms into each burst.
    let seed = 26;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    const read = (path: string) =>
      api.call(path).then(
        (r) => {
          expect(r.status).not.toBe(500);
          return r.body?.cancel();
        },
        () => undefined,
      );
    const burst = async () => {
      await nextRedemption();
      await Promise.all([
        ...mints.map((m) => m.step()),
        ...redemptions.map(attempt),
        read("/v1/supply"),
        read("/v1/relay"),
      ]);
    };
    for (let kill = 0; kill < KILLS; kill++) {
      await api.start();
      // One client loop per process life: it stops at the kill, and what it had in flight is sent again next time.
      let alive = true;
      const traffic = (async () => {
        while (alive) {
          await burst();
          await new Promise((r) => setTimeout(r, 20));
        }
      })().catch(() => undefined);
      await new Promise((r) => setTimeout(r, random() * 400));
      await api.kill();
      alive = false;
      await traffic;
    }

    // The last start: clients finish what they asked for.
    await api.start();
    const deadline = Date.now() + 90_000;
    while (
      mints.some((m) => !m.mint()?.answer) ||
      redemptions.length < REDEMPTIONS ||
      redemptions.some((r) => !r.answer)
    ) {
      if (Date.now() > deadline) throw new Error(`clients did not finish; answers seen:\n${seen.join("\n")}`);
      await burst();
      await new Promise((r) => setTimeout(r, 100));
    }

    // Every mint a client asked for, one row each.
    const mintRows = await db.query<{ id: string; proof_id: string; status: string; tx_hash: string }>(
      "SELECT id, proof_id, status, tx_hash FROM mints",
    );
    expect(mintRows).toHaveLength(MINTS);
    // A retried mint whose first answer was lost is told the mint's id with the conflict.
    for (const m of mints) {
      const answer = m.mint()!.answer!;
      if (answer.status !== 202) expect(answer.code).toBe("proof_already_used");
      expect(mintRows.map((r) => r.id)).toContain(answer.body.mintId);
    }
    for (const r of redemptions) {
      if (r.answer!.status !== 202) expect(r.answer!.code).toBe("redemption_already_submitted");
    }
    const confirmed = async () =>
      (await db.query<{ status: string }>("SELECT status FROM mints")).every((r) => r.status === "confirmed");
    // Paid: custody completed each redemption on the chain.
    const paid = async () =>
      (
        await s.publicClient.getContractEvents({
          address: s.read.redemptions.address,
          abi: s.read.redemptions.abi,
          eventName: "PayoutCompleted",
          fromBlock: BigInt(s.deployment.contracts.StableMinter.startBlock),
        })
      ).length;
    for (let i = 0; !(await confirmed()) || (await paid()) < REDEMPTIONS; i++) {
      if (i > 600) throw new Error(`mints or redemptions did not settle: ${await paid()} paid`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await paid()).toBe(REDEMPTIONS);

    const from = BigInt(s.deployment.contracts.StableMinter.startBlock);
    const minted = await s.publicClient.getContractEvents({
      address: s.read.minter.address,
      abi: s.read.minter.abi,
      eventName: "Minted",
      args: { recipient: carol.address },
      fromBlock: from,
    });
    expect(minted).toHaveLength(MINTS);
    const requested = await s.publicClient.getContractEvents({
      address: s.read.redemptions.address,
      abi: s.read.redemptions.abi,
      eventName: "PayoutRequested",
      fromBlock: from,
    });
    expect(requested).toHaveLength(REDEMPTIONS);
    const redemptionRows = await db.query<{ redemption_id: string }>("SELECT redemption_id FROM redemption_requests");
    expect(new Set(redemptionRows.map((r) => r.redemption_id))).toEqual(
      new Set(requested.map((e) => String(e.args.id))),
    );
    expect(await s.read.token.read.balanceOf([carol.address])).toBe(BigInt(MINTS) * 10n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(
      supply + BigInt(MINTS) * 10n * ZSD - BigInt(REDEMPTIONS) * 2n * ZSD,
    );
  }, 400_000);
});
