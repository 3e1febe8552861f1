// The API with zcashd as its custody, against the simulated zcashd: the worker
// records deposits it finds in the custody wallet and pays relayed redemptions
// with z_sendmany, from notes on the simulated ledger.
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { describe, expect, it } from "vitest";
import type { Hex } from "viem";
import { collateralRegistryAbi, redirectTypedData } from "@zsd/sdk";
import { createNote, depositLeaf, noteCommitment } from "@zsd/sdk/notes";
import { formatZsd, parseZec } from "@zsd/sdk/units";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { textMemoHex as memoHex } from "../../../api/src/adapters/custody/index.ts";
import { ZcashdClient } from "../../../api/src/adapters/custody/zcashd.ts";
import type { SimulatedZcashd } from "../../../api/src/sandbox/zcashd-sim/server.ts";
import { type RelayApi, eventually, json, useRelayApi } from "../helpers.ts";

const WITHDRAW =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";

describe("API with zcashd custody", () => {
  let s: System;
  let zcashd: SimulatedZcashd;
  /** Pays ZEC into the ledger from outside (zsd_receive) and mines blocks. */
  let outside: ZcashdClient;
  let CUSTODY: string;
  let api: RelayApi;
  let db: Database;

  // Blocks only when a test mines them: deposits paid in one tick confirm together. Custody's ZEC for
  // payouts comes below, in notes of their own: a payout's change waits in the mempool until the next block.
  useRelayApi(
    {
      env: (zcash) => ({
        // Configured in upper case: the API must use the canonical form, which the wallet knows.
        CUSTODY_ADDRESS: zcash.custodyAddress.toUpperCase(),
        DEPOSIT_SCAN_MS: "100",
        PAYOUT_MAX_ATTEMPTS: "2",
        PAYOUT_RETRY_MS: "50",
      }),
      zcash: { blockIntervalMs: 0, minConfirmations: 3, floatZat: 0n },
      startWorker: true,
    },
    async (stack) => {
      ({ s, api, db } = stack);
      zcashd = api.zcash.simulator;
      CUSTODY = api.zcash.custodyAddress;
      // Custody's wallet is the sandbox's funding wallet: it takes ZEC arriving from outside (zsd_receive).
      outside = new ZcashdClient(zcashd.url, { user: "custody", password: zcashd.wallet("custody").password });
      for (let i = 0; i < 10; i++) await outside.call("zsd_receive", [CUSTODY, Number(100n * ZEC)]);
      await outside.call("generate", [3]);
    },
  );

  it("records a deposit that reaches the custody wallet with a note commitment", async () => {
    const commitment = noteCommitment(createNote());
    await deposit(2n * ZEC, commitment);
    await outside.call("generate", [2]);
    // Two confirmations of the three custody waits for: nothing recorded yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await s.read.registry.read.totalCollateralZat()).toBe(0n);
    await outside.call("generate", [1]);
    await eventually(
      () => s.read.registry.read.totalCollateralZat(),
      (v) => v === 2n * ZEC,
    );
  });

  /** A payment into the custody wallet carrying `commitment` in its memo, in the mempool until a block mines it. */
  async function deposit(amountZat: bigint, commitment: bigint): Promise<string> {
    const memo = memoHex(`zsd-note:0x${commitment.toString(16).padStart(64, "0")}`);
    return outside.call<string>("zsd_receive", [CUSTODY, Number(amountZat), memo]);
  }
  /** The ledger lines of these commitments, in the order given. */
  const ledgerLines = async (commitments: bigint[]) => {
    const rows = await db.query<{ note_commitment: string; leaf_index: number; tx_hash: string }>(
      "SELECT note_commitment, leaf_index, tx_hash FROM custody_ledger WHERE kind = 'deposit' AND note_commitment = ANY($1)",
      [commitments.map(String)],
    );
    return commitments.map((c) => rows.find((r) => r.note_commitment === String(c)));
  };
  const registryEvents = () =>
    s.publicClient.getContractEvents({ address: s.read.registry.address, abi: collateralRegistryAbi, fromBlock: 0n });

  it("records the deposits one scan finds in one batch: the chain shows their leaves and total, no deposit's amount", async () => {
    const before = await s.read.registry.read.totalCollateralZat();
    const deposits = [3n * ZEC + 1n, 5n * ZEC + 2n, ZEC + 3n].map((amountZat) => ({
      amountZat,
      commitment: noteCommitment(createNote()),
    }));
    // Mined in one block, which one call buries under three: a scan sees all three confirmed or none.
    for (const d of deposits) await deposit(d.amountZat, d.commitment);
    await outside.call("generate", [3]);
    const total = deposits.reduce((sum, d) => sum + d.amountZat, 0n);
    await eventually(
      () => s.read.registry.read.totalCollateralZat(),
      (v) => v === before + total,
    );
    const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.commitment));
    const events = await registryEvents();
    // Earlier deposits of the run went in batches of their own (a lone one too).
    const batch = events.find((e) => e.eventName === "DepositsRecorded" && e.args.leaves!.includes(leaves[0]!));
    expect(batch?.args).toMatchObject({ leaves, totalZat: total });
    const first = Number((batch!.args as { firstIndex: bigint }).firstIndex);
    await eventually(
      () => ledgerLines(deposits.map((d) => d.commitment)),
      (lines) => lines.every(Boolean),
    );
    expect(await ledgerLines(deposits.map((d) => d.commitment))).toEqual(
      deposits.map((d, i) => ({
        note_commitment: String(d.commitment),
        leaf_index: first + i,
        tx_hash: batch!.transactionHash,
      })),
    );
  });

  it("finds a batch recorded on the chain whose ledger lines were lost, and records the rest by leaf", async () => {
    const deposits = [2n * ZEC + 4n, 4n * ZEC + 5n, 6n * ZEC + 6n].map((amountZat) => ({
      amountZat,
      commitment: noteCommitment(createNote()),
    }));
    const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.commitment));
    // The attestors' quorum recorded the first two, and the process died before its ledger transaction.
    const crashed = await s.receipt(
      await s.sendDeposits(leaves.slice(0, 2), deposits[0]!.amountZat + deposits[1]!.amountZat),
    );
    const before = await s.read.registry.read.totalCollateralZat();
    for (const d of deposits) await deposit(d.amountZat, d.commitment);
    await outside.call("generate", [3]);
    await eventually(
      () => ledgerLines(deposits.map((d) => d.commitment)),
      (lines) => lines.every(Boolean),
    );
    // Only the third went on the chain now, once: the first two keep the batch's leaves and transaction.
    expect(await s.read.registry.read.totalCollateralZat()).toBe(before + deposits[2]!.amountZat);
    const size = Number(await s.read.registry.read.size());
    const lines = await ledgerLines(deposits.map((d) => d.commitment));
    expect(lines.slice(0, 2)).toEqual([
      { note_commitment: String(deposits[0]!.commitment), leaf_index: size - 3, tx_hash: crashed.transactionHash },
      { note_commitment: String(deposits[1]!.commitment), leaf_index: size - 2, tx_hash: crashed.transactionHash },
    ]);
    expect(lines[2]!.leaf_index).toBe(size - 1);
    // The third alone is still a batch: its leaf and the batch's total.
    const events = await registryEvents();
    const batches = events.filter((e) => e.eventName === "DepositsRecorded");
    expect(batches.at(-1)!.args).toMatchObject({ leaves: [leaves[2]], totalZat: deposits[2]!.amountZat });
  });

  /** `address` sealed, afresh, for alice's payouts (custody pays an envelope once). */
  const sealFor = (address: string) => s.seal(address, accounts.alice.address);

  async function relayRedeem(amount: bigint): Promise<string> {
    const sealedAddress = sealFor(WITHDRAW);
    const { deadline, ...sig } = await s.signedRedeem(accounts.alice, amount, sealedAddress);
    const response = await api.call(
      "/v1/redeem",
      json({
        amount: formatZsd(amount),
        sealedAddress,
        owner: accounts.alice.address,
        permit: { deadline: Number(deadline), ...sig },
      }),
    );
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  interface Redemption {
    status: string;
    zcashTxId: string | null;
    zecDue: string;
    failureReason: string | null;
    failureCode: string | null;
    zecHeld: string | null;
    redemptionId: string | null;
    redirect: {
      status: string;
      newPayoutId: string | null;
      noteSequence: string | null;
      payoutStatus: string | null;
      zcashTxId: string | null;
    } | null;
    settlementTxHash: string | null;
  }
  const redemption = async (id: string) => (await (await api.call(`/v1/redemptions/${id}`)).json()) as Redemption;

  it("pays a relayed redemption with z_sendmany", async () => {
    await s.depositAndMint({ amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: accounts.alice.address });
    const id = await relayRedeem(25n * ZSD);
    const paid = await eventually(
      () => redemption(id),
      (r) => r.status === "paid" || r.status === "failed",
    );
    expect(paid.status).toBe("paid");
    expect(zcashd.sends.at(-1)!.amounts).toMatchObject([{ address: WITHDRAW, amount: Number(paid.zecDue) }]);
    // Shown as zcashd printed it (the display form explorers search for); on-chain in the hash's own byte order.
    const printed = zcashd.sends.at(-1)!.txid!;
    // On the ledger, the payee's note holds exactly what is due.
    expect(zcashd.ledger.transaction(printed)!.filter((n) => !n.change)).toMatchObject([
      { address: WITHDRAW, amountZat: parseZec(paid.zecDue), memo: memoHex(`zsd-redemption:${paid.redemptionId}`) },
    ]);
    expect(paid.zcashTxId).toBe(printed);
    const completed = await s.payoutCompleted(BigInt(paid.redemptionId!));
    expect(completed!.zcashTxId).toBe(`0x${Buffer.from(printed, "hex").reverse().toString("hex")}`);
    expect(paid.zecHeld).toBeNull();
    expect(paid.settlementTxHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  /** The owner's EIP-712 Redirect of payout `payoutId`, at the owner's nonce on Redemptions. */
  async function signedRedirect(
    payoutId: bigint,
    to: { sealedAddress?: Hex; noteCommitment?: bigint },
    signer = accounts.alice,
    deadlineIn = 3600n,
  ) {
    const nonce = await s.read.redemptions.read.nonces([accounts.alice.address]);
    const deadline = (await s.publicClient.getBlock()).timestamp + deadlineIn;
    const signature = await signer.signTypedData(
      redirectTypedData(
        { chainId: s.chainId, verifyingContract: s.read.redemptions.address },
        {
          id: payoutId,
          sealedAddress: to.sealedAddress ?? "0x",
          noteCommitment: to.noteCommitment ?? 0n,
          nonce,
          deadline,
        },
      ),
    );
    return { deadline: Number(deadline), signature };
  }

  /** A relayed redemption that custody keeps failing to pay: held, its on-chain payout id. */
  async function heldRedemption(amount: bigint): Promise<{ id: string; payoutId: bigint; held: Redemption }> {
    const failing = setInterval(() => (zcashd.knobs.failNextSend = "Insufficient funds: have 0.00, need 0.10"), 5);
    try {
      const id = await relayRedeem(amount);
      const held = await eventually(
        () => redemption(id),
        (r) => r.status === "paid" || r.status === "failed",
      );
      return { id, payoutId: BigInt(held.redemptionId!), held };
    } finally {
      clearInterval(failing);
      zcashd.knobs.failNextSend = undefined;
    }
  }

  it("holds a redemption's ZEC for its owner when the custody wallet keeps failing its payout: no ZSD back, no position changes", async () => {
    const balance = await s.read.token.read.balanceOf([accounts.alice.address]);
    const sends = zcashd.sends.length;
    const [debt, backing] = [
      await s.read.positions.read.totalDebt(),
      await s.read.positions.read.backingCollateralZat(),
    ];
    const pending = await s.read.redemptions.read.pendingZatDue();
    const { held, payoutId } = await heldRedemption(10n * ZSD);
    expect(held).toMatchObject({
      status: "failed",
      zecHeld: held.zecDue,
      redirect: null,
      zcashTxId: null,
      failureCode: "payout_held",
      settlementTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(held.failureReason).toMatch(/held on-chain for the owner \(no ZSD is returned\)/);
    expect(held.failureReason).toContain("POST /v1/redemptions/{id}/redirect");
    expect(zcashd.sends).toHaveLength(sends + 2);
    // Nothing minted back, nothing put back into the positions: the ZEC stays owed to the owner.
    expect(await s.read.token.read.balanceOf([accounts.alice.address])).toBe(balance - 10n * ZSD);
    const onChain = await s.read.redemptions.read.getPayout([payoutId]);
    expect(onChain.status).toBe(3);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(pending + onChain.zatDue);
    // The positions gave the redemption its ZEC and owe 10 ZSD less; failing the payout put nothing back.
    expect(await s.read.positions.read.totalDebt()).toBe(debt - 10n * ZSD);
    expect(await s.read.positions.read.backingCollateralZat()).toBe(backing - onChain.zatDue);
    expect((await s.payoutFailed(payoutId))!.zatHeld).toBe(onChain.zatDue);
    // Operators see payouts by status on /metrics; a held payout waits for its owner, not for us.
    const metrics = await (await api.call("/metrics", { key: null })).text();
    expect(metrics).toContain('zsd_relay_items{kind="payout",status="completed"} 1');
    expect(metrics).toContain('zsd_relay_items{kind="payout",status="held"} 1');
    expect(metrics).toContain("zsd_payout_oldest_unfinished_seconds 0");
  });

  const redirect = (id: string | bigint, body: Record<string, unknown>) =>
    api.call(`/v1/redemptions/${id}/redirect`, json(body));

  it("refuses, with a problem and nothing changed, a redirect of a payout not failed, by another signer, expired or to a bad address", async () => {
    const id = await relayRedeem(2n * ZSD);
    const paid = await eventually(
      () => redemption(id),
      (r) => r.status === "paid" || r.status === "failed",
    );
    expect(paid.status).toBe("paid");
    const toWithdraw = sealFor(WITHDRAW);
    const notFailed = await redirect(id, {
      sealedAddress: toWithdraw,
      ...(await signedRedirect(BigInt(paid.redemptionId!), { sealedAddress: toWithdraw })),
    });
    expect(notFailed.status).toBe(409);
    expect(await notFailed.json()).toMatchObject({ code: "payout_not_failed" });

    const { id: heldId, payoutId } = await heldRedemption(3n * ZSD);
    const count = await s.read.redemptions.read.payoutCount();
    const nonce = await s.read.redemptions.read.nonces([accounts.alice.address]);
    const refusals: [Record<string, unknown>, number, string][] = [
      // Signed by bob: only the owner may redirect.
      [
        { sealedAddress: toWithdraw, ...(await signedRedirect(payoutId, { sealedAddress: toWithdraw }, accounts.bob)) },
        422,
        "redirect_signature_invalid",
      ],
      // The owner's signature, of another sealed address than the one sent.
      [
        { sealedAddress: toWithdraw, ...(await signedRedirect(payoutId, { sealedAddress: sealFor(CUSTODY) })) },
        422,
        "redirect_signature_invalid",
      ],
      // Expired by the chain's clock.
      [
        {
          sealedAddress: toWithdraw,
          ...(await signedRedirect(payoutId, { sealedAddress: toWithdraw }, accounts.alice, -10n)),
        },
        422,
        "expired_signature",
      ],
      // A transparent address, and one not in canonical form: never paid, refused before the signature is read.
      [
        {
          sealedAddress: sealFor("tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd"),
          deadline: 1,
          signature: `0x${"11".repeat(65)}`,
        },
        422,
        "transparent_address",
      ],
      [
        { sealedAddress: sealFor(WITHDRAW.toUpperCase()), deadline: 1, signature: `0x${"11".repeat(65)}` },
        422,
        "non_canonical_address",
      ],
      // Sealed for another owner (bob) than the payout's: custody cannot open it for alice's payout.
      [
        {
          sealedAddress: s.seal(WITHDRAW, accounts.bob.address),
          deadline: 1,
          signature: `0x${"11".repeat(65)}`,
        },
        422,
        "unreadable_address",
      ],
      // Both destinations at once.
      [
        { sealedAddress: toWithdraw, noteCommitment: "5", deadline: 1, signature: `0x${"11".repeat(65)}` },
        400,
        "validation_failed",
      ],
    ];
    for (const [body, status, code] of refusals) {
      const response = await redirect(heldId, body);
      expect({ status: response.status, code: ((await response.json()) as { code: string }).code }).toEqual({
        status,
        code,
      });
    }
    expect(await s.read.redemptions.read.payoutCount()).toBe(count);
    expect(await s.read.redemptions.read.nonces([accounts.alice.address])).toBe(nonce);
    expect((await s.read.redemptions.read.getPayout([payoutId])).status).toBe(3);
    const [queued] = await db.query("SELECT 1 FROM payout_redirects WHERE payout_id = $1", [payoutId.toString()]);
    expect(queued).toBeUndefined();
    expect((await redemption(heldId)).status).toBe("failed");
  });

  it("redirects a held payout through the API to another address, which is then paid, and another into a note", async () => {
    const { id, payoutId, held } = await heldRedemption(4n * ZSD);
    const sends = zcashd.sends.length;
    const toCustody = sealFor(CUSTODY);
    const response = await redirect(id, {
      sealedAddress: toCustody,
      ...(await signedRedirect(payoutId, { sealedAddress: toCustody })),
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({
      object: "payout_redirect",
      payoutId: payoutId.toString(),
      owner: accounts.alice.address,
      destination: { withdrawAddress: CUSTODY },
      status: "queued",
      zecHeld: held.zecDue,
    });
    const done = await eventually(
      () => redemption(id),
      (r) => r.redirect?.payoutStatus === "paid" || r.redirect?.status === "failed",
    );
    expect(done).toMatchObject({ status: "redirected", zecHeld: held.zecDue, failureCode: null });
    expect(done.redirect).toMatchObject({ status: "confirmed", payoutStatus: "paid", noteSequence: null });
    const newPayoutId = BigInt(done.redirect!.newPayoutId!);
    expect(newPayoutId).toBeGreaterThan(payoutId);
    // The new payout: same owner, same ZEC, paid to the new address and settled on-chain.
    const newPayout = await s.read.redemptions.read.getPayout([newPayoutId]);
    expect(newPayout).toMatchObject({
      owner: accounts.alice.address,
      zatDue: (await s.read.redemptions.read.getPayout([payoutId])).zatDue,
      status: 2,
    });
    expect((await s.read.redemptions.read.getPayout([payoutId])).status).toBe(4);
    expect(zcashd.sends).toHaveLength(sends + 1);
    expect(zcashd.sends.at(-1)!.amounts).toMatchObject([{ address: CUSTODY, amount: Number(held.zecDue) }]);
    expect(done.redirect!.zcashTxId).toBe(zcashd.sends.at(-1)!.txid);
    // The new payout id reads as any payout's redirect does (none yet), and a second redirect is refused.
    expect((await api.call(`/v1/redemptions/${id}/redirect`)).status).toBe(200);
    // Another account naming the payout by its on-chain id sees the sealed address, as the chain shows it.
    const stranger = await api.keys.createAccount("another wallet");
    const { secret } = await api.keys.create(stranger.id, "sandbox", "another");
    const seen = await api.call(`/v1/redemptions/${payoutId}/redirect`, { key: secret });
    expect(((await seen.json()) as { destination: unknown }).destination).toEqual({ sealedAddress: toCustody });
    const again = await redirect(id, {
      sealedAddress: toCustody,
      ...(await signedRedirect(payoutId, { sealedAddress: toCustody })),
    });
    expect(again.status).toBe(409);

    // Into a note: the held ZEC becomes a leaf queued for the deposit tree, owed to no payout any more.
    const second = await heldRedemption(5n * ZSD);
    const pending = await s.read.redemptions.read.pendingZatDue();
    const zatDue = (await s.read.redemptions.read.getPayout([second.payoutId])).zatDue;
    const commitment = noteCommitment(createNote());
    const intoNote = await redirect(second.payoutId, {
      noteCommitment: commitment.toString(),
      ...(await signedRedirect(second.payoutId, { noteCommitment: commitment })),
    });
    expect(intoNote.status).toBe(202);
    const noted = await eventually(
      () => redemption(second.id),
      (r) => r.redirect?.status === "confirmed" || r.redirect?.status === "failed",
    );
    expect(noted).toMatchObject({ status: "redirected" });
    expect(noted.redirect).toMatchObject({
      status: "confirmed",
      newPayoutId: null,
      payoutStatus: null,
      destination: { noteCommitment: commitment.toString() },
    });
    expect(noted.redirect!.noteSequence).toMatch(/^\d+$/);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(pending - zatDue);
    const sequence = BigInt(noted.redirect!.noteSequence!);
    const queued = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      eventName: "LeafQueued",
      fromBlock: 0n,
      args: { sequence },
    });
    expect(queued).toHaveLength(1);
    expect(queued[0]!.args).toMatchObject({ amountZat: zatDue, leaf: depositLeaf(zatDue, commitment) });
    // The sequence names a leaf that is still only queued; anyone's insertion puts that very leaf in the tree.
    expect(await s.read.registry.read.insertedCount()).toBeLessThanOrEqual(sequence);
    const receipt = await s.insertPending();
    expect(receipt?.status).toBe("success");
    expect(await s.read.registry.read.insertedCount()).toBeGreaterThan(sequence);
    const inserted = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      eventName: "PendingLeavesInserted",
      fromBlock: receipt!.blockNumber,
      toBlock: receipt!.blockNumber,
    });
    expect(inserted.flatMap((e) => e.args.leaves!)).toContain(depositLeaf(zatDue, commitment));
  });
});
