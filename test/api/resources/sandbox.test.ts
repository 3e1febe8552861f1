// Sandbox deposits and the local custody, against a live node with real proofs; the sandbox's
// failing-payout address, which only the simulated node refuses.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { type Hex, parseEventLogs, toHex } from "viem";
import { collateralRegistryAbi } from "@zsd/sdk";
import { describe, expect, it } from "vitest";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { AttestorQuorum } from "../../../api/src/adapters/custody/attestation.ts";
import { depositMemoHex } from "../../../api/src/adapters/custody/index.ts";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import { recordDepositBatch } from "../../../api/src/adapters/custody/deposits.ts";
import { ContractRevertError, isRevert } from "../../../api/src/domain/errors.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { createNote, depositLeaf, noteCommitment, publicSignalsToArray } from "@zsd/sdk/notes";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RelayApi, eventually, json, overriding, startApi, useRelayApi } from "../helpers.ts";
import { SANDBOX_PAYOUT_RETRIES, SANDBOX_REFUSED_ADDRESS } from "../../../api/src/sandbox/refused-address.ts";
import { ROOT } from "../../../scripts/lib/paths.ts";

const { alice } = accounts;
const WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";

describe("sandbox deposits and custody on the simulated node", () => {
  let s: System;
  let api: RelayApi;
  let db: Database;

  // As npm start runs it: a payment the node refuses is failed after three attempts, a second or two apart.
  useRelayApi({ env: { ...SANDBOX_PAYOUT_RETRIES } }, (stack) => ({ s, api, db } = stack));

  it("records a simulated deposit on-chain and answers its leaf index; the note then proves and submits", async () => {
    const note = createNote();
    const commitment = noteCommitment(note);
    const response = await api.call("/v1/sandbox/deposits", json({ amount: "2.5", noteCommitment: toHex(commitment) }));
    expect(response.status).toBe(201);
    const deposit = (await response.json()) as Record<string, unknown>;
    expect(deposit).toMatchObject({
      object: "deposit",
      leafIndex: Number((await s.read.registry.read.size()) - 1n),
      leaf: depositLeaf(250_000_000n, commitment).toString(),
      root: (await s.read.registry.read.root()).toString(),
      amount: "2.5",
      amountZat: "250000000",
    });
    const [row] = await db.query<{ kind: string; amount_zat: string }>(
      "SELECT * FROM custody_ledger WHERE kind = 'deposit'",
    );
    expect(row).toMatchObject({ kind: "deposit", amount_zat: "250000000" });

    const proved = await s.prove({ note, amountZat: 250_000_000n, mintAmount: 50n * ZSD, recipient: alice.address });
    const submitted = await api.call(
      "/v1/proofs/submit",
      json({
        proof: proved.raw.proof,
        publicSignals: publicSignalsToArray(proved.raw.publicSignals),
        owner: proved.binding.owner,
        mintAmount: "50",
        recipient: alice.address,
      }),
    );
    expect(submitted.status).toBe(201);
  });

  it("serialises concurrent deposits, each recorded once under the attestors' quorum from custody's account", async () => {
    const before = await s.read.registry.read.size();
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        api.call(
          "/v1/sandbox/deposits",
          json({ amount: `0.${i + 1}`, noteCommitment: noteCommitment(createNote()).toString() }),
        ),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const indexes = await Promise.all(
      responses.map(async (r) => ((await r.json()) as { leafIndex: number }).leafIndex),
    );
    expect(new Set(indexes).size).toBe(5);
    expect(await s.read.registry.read.size()).toBe(before + 5n);
  });

  it("answers the note commitment in the form it was sent: hex for hex, decimal for decimal", async () => {
    const hex = noteCommitment(createNote());
    const asHex = await api.call(
      "/v1/sandbox/deposits",
      json({ amount: "1", noteCommitment: toHex(hex, { size: 32 }) }),
    );
    expect(((await asHex.json()) as { noteCommitment: string }).noteCommitment).toBe(toHex(hex, { size: 32 }));
    const decimal = noteCommitment(createNote());
    const asDecimal = await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: decimal.toString() }));
    expect(((await asDecimal.json()) as { noteCommitment: string }).noteCommitment).toBe(decimal.toString());
  });

  /** A deposit paid into the simulated ledger and confirmed, not yet recorded: what custody's scan would find. */
  const paid = (amountZat: bigint) => {
    const commitment = noteCommitment(createNote());
    const txid = api.zcash.simulator.ledger.receive(api.zcash.custodyAddress, amountZat, depositMemoHex(commitment));
    api.zcash.simulator.generate(1);
    return { noteCommitment: commitment, amountZat, zcashTxId: zcashTxIdFromDisplay(txid) };
  };
  const custodyCalls = () => {
    const chain = new Chain(s.deployment, s.rpcUrl, 2_000);
    return new CustodyCalls(
      chain,
      hardhatPrivateKey(1),
      undefined,
      new AttestorQuorum(
        chain,
        api.zcash.attestors.map((a) => a.url),
      ),
    );
  };

  it("turns a contract's refusal into a typed error carrying the Solidity error's name and arguments", async () => {
    const attestor = custodyCalls();
    const deposit = paid(ZEC);
    const commitment = deposit.noteCommitment;
    await attestor.recordDeposits([deposit]);
    const refusal = await attestor.recordDeposits([deposit]).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ContractRevertError);
    expect(refusal).toMatchObject({
      errorName: "DepositAlreadyRecorded",
      args: [depositLeaf(ZEC, commitment)],
      kind: "conflict",
      code: "deposit_already_recorded",
    });
  });

  it("records deposits arriving within the window in one batch: no transaction or event holds one's amount", async () => {
    const amounts = ["1.23456789", "2.3456789", "3.456789"];
    const commitments = amounts.map(() => noteCommitment(createNote()));
    const post = (i: number) =>
      api.call("/v1/sandbox/deposits", json({ amount: amounts[i], noteCommitment: commitments[i]!.toString() }));
    // The same note twice in the window (0 and 3): one claim on its ZEC, the other refused, whichever came first.
    const answers = await Promise.all([0, 1, 2, 0].map(post));
    const refused = answers.findIndex((r) => r.status === 409);
    expect([0, 3]).toContain(refused);
    expect(((await answers[refused]!.json()) as { code: string }).code).toBe("deposit_already_recorded");
    const recorded = answers.filter((_, i) => i !== refused);
    expect(recorded.map((r) => r.status)).toEqual([201, 201, 201]);
    const bodies = (await Promise.all(recorded.map((r) => r.json()))) as { txHash: string; leafIndex: number }[];
    expect(new Set(bodies.map((b) => b.txHash)).size).toBe(1);
    const zats = [123_456_789n, 234_567_890n, 345_678_900n];
    const leaves = zats.map((zat, i) => depositLeaf(zat, commitments[i]!));
    const receipt = await s.publicClient.getTransactionReceipt({ hash: bodies[0]!.txHash as Hex });
    const [batch] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositsRecorded" });
    expect(batch!.args.totalZat).toBe(703_703_579n);
    expect([...batch!.args.leaves].sort()).toEqual([...leaves].sort());
    // Each answer names its own deposit's leaf (the answers come in the order posted, the refused one left out).
    const postedNotes = [0, 1, 2, 0].filter((_, i) => i !== refused);
    expect(bodies.map((b) => b.leafIndex)).toEqual(
      postedNotes.map((n) => Number(batch!.args.firstIndex) + batch!.args.leaves.indexOf(leaves[n]!)),
    );
    // No amount in the calldata or the logs, in any 32-byte word.
    const input = (await s.publicClient.getTransaction({ hash: bodies[0]!.txHash as Hex })).input;
    const words = [
      input.slice(10),
      ...receipt.logs.flatMap((l) => [l.data.slice(2), ...l.topics.map((t) => t!.slice(2))]),
    ];
    for (const zat of zats) {
      const word = zat.toString(16).padStart(64, "0");
      expect(words.some((w) => w.includes(word))).toBe(false);
    }
    const lines = await db.query<{ amount_zat: string }>(
      "SELECT amount_zat FROM custody_ledger WHERE kind = 'deposit' AND tx_hash = $1 ORDER BY leaf_index",
      [bodies[0]!.txHash],
    );
    expect(lines.map((l) => l.amount_zat).sort()).toEqual(zats.map(String).sort());
  });

  it("serves a deposit's amount and commitment, which the chain does not show, to its own account only", async () => {
    const commitment = noteCommitment(createNote());
    const posted = await api.call("/v1/sandbox/deposits", json({ amount: "1.5", noteCommitment: String(commitment) }));
    const deposit = (await posted.json()) as { id: string; leafIndex: number; txHash: string };
    expect(deposit.id).toMatch(/^dep_[0-9A-Za-z]{20}$/);
    const own = await api.call(`/v1/deposits/${deposit.id}`);
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual({
      object: "deposit",
      id: deposit.id,
      leafIndex: deposit.leafIndex,
      leaf: depositLeaf(150_000_000n, commitment).toString(),
      amount: "1.5",
      amountZat: "150000000",
      noteCommitment: String(commitment),
      txHash: deposit.txHash,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // Another account: not found, as an id that never existed (no telling whether it does).
    const stranger = await api.keys.create((await api.keys.createAccount("stranger")).id, "sandbox", "s");
    const theirs = await api.call(`/v1/deposits/${deposit.id}`, { key: stranger.secret });
    const never = await api.call(`/v1/deposits/dep_${"a".repeat(20)}`);
    for (const answer of [theirs, never]) {
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { code: string }).code).toBe("resource_not_found");
    }
    const malformed = await api.call("/v1/deposits/dep_1");
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("writes a deposit found on the chain but not in the ledger once, when another process recovers it at the same moment", async () => {
    // The attestor recorded it, and the process died before its ledger line; two retries (two replicas) recover it.
    const attestor = custodyCalls();
    const deposit = paid(2n * ZEC);
    const commitment = deposit.noteCommitment;
    const { firstIndex } = await attestor.recordDeposits([deposit]);
    // The other replica writes its line after this one found none, just before this one writes.
    const racing = overriding(db, {
      transaction: async (work) => {
        await db.query(
          `INSERT INTO custody_ledger (kind, amount_zat, note_commitment, leaf_index, zcash_txid, tx_hash, public_id)
           VALUES ('deposit', $1, $2, $3, $4, '0x01', 'dep_otherReplica0000000')`,
          [String(2n * ZEC), commitment.toString(), Number(firstIndex), deposit.zcashTxId],
        );
        return db.transaction(work);
      },
    });
    const [outcome] = await recordDepositBatch(racing, attestor, [deposit]);
    expect("error" in outcome! && isRevert(outcome.error, "DepositAlreadyRecorded")).toBe(true);
    const lines = await db.query<{ public_id: string }>(
      "SELECT public_id FROM custody_ledger WHERE kind = 'deposit' AND note_commitment = $1",
      [commitment.toString()],
    );
    expect(lines).toEqual([{ public_id: "dep_otherReplica0000000" }]);
  });

  it("refuses a deposit recorded twice and malformed fields", async () => {
    const commitment = noteCommitment(createNote()).toString();
    expect((await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: commitment }))).status).toBe(
      201,
    );
    const twice = await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: commitment }));
    expect(twice.status).toBe(409);
    expect(((await twice.json()) as { code: string }).code).toBe("deposit_already_recorded");
    expect(
      (await api.call("/v1/sandbox/deposits", json({ amount: "1.123456789", noteCommitment: commitment }))).status,
    ).toBe(400);
    expect((await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: "0" }))).status).toBe(400);
    expect((await api.call("/v1/sandbox/deposits", json({ amount: "0", noteCommitment: "5" }))).status).toBe(400);
  });

  it("pays a redemption sent on-chain by a holder through the simulated node, lowering collateral", async () => {
    await s.depositAndMint({ amountZat: 5n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    await s.receipt(await s.as(alice).redemptions.write.redeem([50n * ZSD, s.seal(WITHDRAW, alice.address)]));
    const id = await s.read.redemptions.read.payoutCount();
    const due = (await s.read.redemptions.read.getPayout([id])).zatDue;
    const collateral = await s.read.registry.read.totalCollateralZat();
    // The node's operation takes a few looks (queued, executing, done), as zcashd's does.
    await eventually(
      async () => (await api.payouts!.tick(), (await s.read.redemptions.read.getPayout([id])).status),
      (status) => status === 2,
      "the payout completed",
    );
    // The recipient's address got the ZEC, with the redemption's memo.
    const received = api.zcash.simulator.ledger.notesOf(WITHDRAW);
    expect(received.map((n) => n.amountZat)).toEqual([due]);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(collateral - due);
    const [ledger] = await db.query<{ amount_zat: string; zcash_txid: string }>(
      "SELECT * FROM custody_ledger WHERE kind = 'payout' AND redemption_id = $1",
      [id.toString()],
    );
    expect(ledger!.amount_zat).toBe(due.toString());
    expect((await s.payoutCompleted(id))!.zcashTxId).toBe(ledger!.zcash_txid);
    // Another pass pays nothing twice.
    await api.payouts!.tick();
    expect(await s.read.registry.read.totalCollateralZat()).toBe(collateral - due);
  });

  it("fails a payout to the failing-payout address as a refused payment fails: retried, failed on-chain, held for its owner", async () => {
    await s.depositAndMint({ amountZat: 5n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const balance = await s.read.token.read.balanceOf([alice.address]);
    await s.receipt(
      await s.as(alice).redemptions.write.redeem([10n * ZSD, s.seal(SANDBOX_REFUSED_ADDRESS, alice.address)]),
    );
    const id = await s.read.redemptions.read.payoutCount();
    const row = async () =>
      (
        await db.query<{ status: string; attempts: number; last_error: string | null }>(
          "SELECT status, attempts, last_error FROM payouts WHERE redemption_id = $1",
          [id.toString()],
        )
      )[0];
    // Custody opened the seal and asked the wallet to pay, like any payout: the node refused each time.
    const held = await eventually(
      async () => (await api.payouts!.tick(), await row()),
      (r) => r?.status === "held",
      "the payout held",
      30_000,
    );
    expect(held).toMatchObject({ status: "held", attempts: Number(SANDBOX_PAYOUT_RETRIES.PAYOUT_MAX_ATTEMPTS) });
    expect(held!.last_error).toMatch(
      /^z_sendmany refused: The sandbox's node refuses every payment to ztestsapling1refused/,
    );
    expect((await s.read.redemptions.read.getPayout([id])).status).toBe(3);
    expect((await s.payoutFailed(id))!).toMatchObject({ owner: alice.address, reason: "payout_failed" });
    expect(api.zcash.simulator.ledger.notesOf(SANDBOX_REFUSED_ADDRESS)).toEqual([]);
    // Nothing given back: the ZEC is held for Alice, who redirects it (walkthroughs.test.ts does, with the CLI).
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(balance - 10n * ZSD);
  });

  it("knows the failing-payout address in the simulated node only: custody, the relay and the API pay it as any other", () => {
    // Production runs the same custody, relay and API code against a real node: none of it may treat the
    // address specially.
    const allowed = new Set(["api/src/sandbox/refused-address.ts", "api/src/sandbox/zcashd-sim/server.ts"]);
    const knowing: string[] = [];
    for (const entry of readdirSync(join(ROOT, "api", "src"), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const text = readFileSync(path, "utf8");
      if (/refused-address|SANDBOX_REFUSED_ADDRESS|refusedpayment/.test(text)) knowing.push(relative(ROOT, path));
    }
    expect(knowing.filter((path) => !allowed.has(path))).toEqual([]);
    expect(knowing).toEqual(expect.arrayContaining(["api/src/sandbox/zcashd-sim/server.ts"]));
  });

  it("does not exist in production", async () => {
    const production = await startApi(db, {
      ENVIRONMENT: "production",
      DEPLOYMENT_FILE: api.config.DEPLOYMENT_FILE!,
      RPC_URL: s.rpcUrl,
      CUSTODY_PRIVATE_KEY: hardhatPrivateKey(1),
      // Required in production with a deployment: custody must be able to open the addresses it pays.
      CUSTODY_SEAL_KEYS: `${DEV_SEAL_KEY.keyId}:${DEV_SEAL_KEY.secretKey}`,
    });
    try {
      const response = await production.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: "5" }));
      expect(response.status).toBe(404);
      expect(production.custody).toBeUndefined();
    } finally {
      await production.close();
    }
  });
});
