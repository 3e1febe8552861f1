// Payouts of redemptions through zcashd custody, pass by pass: every
// redemption on-chain is paid once, settled with the wallet's txid, retried
// when refused, failed on-chain (its ZEC held for the owner to redirect) when it
// cannot be paid, and never sent twice when its
// outcome is unknown. Withdraw addresses arrive sealed: one that
// custody cannot open for its owner, or an envelope used before, is failed as
// unreadable_address and its ZEC held for the owner to redirect.
import { bech32 } from "bech32";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Chain } from "../../../api/src/adapters/chain.ts";
import { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import { type Custody, textMemoHex as memoHex } from "../../../api/src/adapters/custody/index.ts";
import { ZcashdClient, ZcashdCustody } from "../../../api/src/adapters/custody/zcashd.ts";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import {
  type PayoutOptions,
  type PayoutRow,
  Payouts,
  resolveReview,
} from "../../../api/src/workers/payouts/payouts.ts";
import { hardhatPrivateKey } from "../../../scripts/lib/accounts.ts";
import { freePort } from "../../../scripts/lib/hardhat-node.ts";
import { createNote, releaseProver } from "@zsd/sdk/notes";
import { DEV_SEAL_KEY, sealBytes, sealKeyFromSecret } from "@zsd/sdk/seal";
import { SealedAddresses } from "../../../api/src/domain/redemptions/sealed-addresses.ts";
import { formatZec } from "@zsd/sdk/units";
import { zcashTxIdForDisplay } from "@zsd/sdk/zcash";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { type SimulatedZcashd, startSimulatedZcashd } from "../../../api/src/sandbox/zcashd-sim/server.ts";
import { eventually, openStorage } from "../helpers.ts";

const WITHDRAW =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
const { alice, bob } = accounts;

describe("payouts", () => {
  let s: System;
  let zcashd: SimulatedZcashd;
  let CUSTODY: string;
  let custodyAuth: { user: string; password: string };
  let chain: Chain;
  let attestor: CustodyCalls;
  const storages: Awaited<ReturnType<typeof openStorage>>[] = [];

  beforeAll(async () => {
    s = await deploySystem();
    zcashd = await startSimulatedZcashd({ wallets: [{ user: "custody" }], blockIntervalMs: 0 });
    custodyAuth = { user: "custody", password: zcashd.wallet("custody").password };
    CUSTODY = zcashd.wallet("custody").newAddress();
    // A note per payout this file makes, confirmed: each payout's change waits in the mempool (no blocks come).
    for (let i = 0; i < 40; i++) zcashd.ledger.receive(CUSTODY, 10n * ZEC);
    zcashd.generate(3);
    chain = new Chain(s.deployment, s.rpcUrl, 5000);
    attestor = new CustodyCalls(chain, hardhatPrivateKey(1));
    await s.depositAndMint({ amountZat: 50n * ZEC, mintAmount: 1000n * ZSD, recipient: alice.address });
  });
  afterAll(async () => {
    for (const storage of storages) await storage.close();
    await zcashd?.close();
    await releaseProver();
  });

  /** Payouts over a fresh database (so each test discovers from the deployment's first block). */
  async function payouts(options: Partial<PayoutOptions> = {}, url = zcashd.url) {
    const storage = await openStorage("postgres");
    storages.push(storage);
    const client = new ZcashdClient(url, custodyAuth);
    const custody = new ZcashdCustody(storage.db, attestor, client, { address: CUSTODY, minConfirmations: 3 });
    const p = new Payouts(storage.db, chain, custody, attestor, {
      sealed: sealedAddresses(),
      confirmations: 1,
      maxAttempts: 3,
      retryMs: 1,
      ...options,
    });
    // Redemptions of earlier tests are not this test's business: recorded as done, never paid here.
    await p.discover();
    await storage.db.query("UPDATE payouts SET status = 'completed'");
    return { p, db: storage.db };
  }

  /** Custody's side: the development key the local deployment starts with. */
  const sealedAddresses = () => new SealedAddresses([DEV_SEAL_KEY], s.chainId, s.read.redemptions.address, "sandbox");

  /** A redemption straight to the contract, its address sealed for alice (as anything, unchecked). */
  async function redeem(amount: bigint, address = WITHDRAW): Promise<bigint> {
    return redeemSealed(amount, s.seal(address, alice.address));
  }

  async function redeemSealed(amount: bigint, sealed: `0x${string}`): Promise<bigint> {
    await s.receipt(await s.as(alice).redemptions.write.redeem([amount, sealed]));
    return s.read.redemptions.read.payoutCount();
  }

  async function row(db: Database, id: bigint): Promise<PayoutRow | undefined> {
    const [r] = await db.query<PayoutRow>("SELECT * FROM payouts WHERE redemption_id = $1", [id.toString()]);
    return r;
  }

  async function passes(p: Payouts, count: number) {
    for (let i = 0; i < count; i++) await p.tick();
  }

  const onChain = async (id: bigint) => (await s.read.redemptions.read.getPayout([id])).status;

  it("pays a holder's redemption once and settles it on-chain with zcashd's txid", async () => {
    const { p, db } = await payouts();
    const id = await redeem(10n * ZSD);
    const due = (await s.read.redemptions.read.getPayout([id])).zatDue;
    const collateral = await s.read.registry.read.totalCollateralZat();
    const sends = zcashd.sends.length;

    await p.tick();
    expect((await row(db, id))!.status).toBe("sent");
    await passes(p, 3);
    const paid = (await row(db, id))!;
    expect(paid.status).toBe("completed");
    expect(zcashd.sends).toHaveLength(sends + 1);
    expect(zcashd.sends.at(-1)!.amounts).toEqual([
      { address: WITHDRAW, amount: Number(formatZec(due)), memo: memoHex(`zsd-redemption:${id}`) },
    ]);
    expect(await onChain(id)).toBe(2);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(collateral - due);
    expect((await s.payoutCompleted(id))!.zcashTxId).toBe(paid.zcash_txid);
    // The transaction zcashd made pays exactly what is due.
    const outputs = zcashd.ledger.transaction(zcashTxIdForDisplay(paid.zcash_txid!))!;
    expect(outputs.filter((n) => !n.change)).toMatchObject([{ address: WITHDRAW, amountZat: due }]);
    const [ledger] = await db.query<{ amount_zat: string }>(
      "SELECT amount_zat FROM custody_ledger WHERE kind = 'payout' AND redemption_id = $1",
      [id.toString()],
    );
    expect(ledger!.amount_zat).toBe(due.toString());

    await passes(p, 3);
    expect(zcashd.sends).toHaveLength(sends + 1);
  });

  it("writes nothing in a pass that finds nothing (the cursor is rewritten only when it moves)", async () => {
    const { p, db } = await payouts();
    // An UPDATE makes a new row version: xmin changes even when the value stays the same.
    const version = async () =>
      (
        await db.query<{ xmin: string; block: string }>(
          "SELECT xmin::text, block FROM relay_cursors WHERE name = 'redemptions'",
        )
      )[0]!;
    const before = await version();
    await passes(p, 2);
    expect(await version()).toEqual(before);
    // A new block moves it.
    await s.mineBlocks(1);
    await p.tick();
    expect(BigInt((await version()).block)).toBe(BigInt(before.block) + 1n);
  });

  it("opens a payout's envelope once, not again on each pass that rescans its block", async () => {
    // Opening is an X25519 decryption and a Jubjub check of the address (milliseconds of CPU): a pass
    // rereads the 64 blocks below its cursor, and reopened every redemption in them, every pass.
    let opened = 0;
    const counting = sealedAddresses();
    const payable = counting.payable.bind(counting);
    counting.payable = (...args) => {
      opened++;
      return payable(...args);
    };
    const { p, db } = await payouts({ sealed: counting });
    const id = await redeem(1n * ZSD);
    const before = opened;
    await p.tick();
    expect((await row(db, id))!.status).toBe("sent");
    expect(opened).toBe(before + 1);
    await passes(p, 3);
    await s.mineBlocks(2);
    await passes(p, 2);
    expect((await row(db, id))!.status).toBe("completed");
    expect(opened).toBe(before + 1);
  });

  it("waits for the configured confirmations before paying", async () => {
    const { p, db } = await payouts({ confirmations: 3 });
    const id = await redeem(1n * ZSD);
    await p.tick();
    expect(await row(db, id)).toBeUndefined();
    await s.mineBlocks(2);
    await p.tick();
    expect((await row(db, id))!.status).toBe("sent");
    await passes(p, 3);
    expect((await row(db, id))!.status).toBe("completed");
  });

  it("keeps one payout in flight at a time", async () => {
    const { p, db } = await payouts();
    zcashd.knobs.holdOperations = true;
    const first = await redeem(2n * ZSD);
    const second = await redeem(3n * ZSD);
    const sends = zcashd.sends.length;
    await passes(p, 4);
    expect((await row(db, first))!.status).toBe("sent");
    expect((await row(db, second))!.status).toBe("pending");
    expect(zcashd.sends).toHaveLength(sends + 1);
    zcashd.knobs.holdOperations = false;
    await passes(p, 8);
    expect((await row(db, first))!.status).toBe("completed");
    expect((await row(db, second))!.status).toBe("completed");
    expect(zcashd.sends).toHaveLength(sends + 2);
  });

  it("keeps a payout in flight through a wallet outage, and the pass going", async () => {
    const { p, db } = await payouts();
    const id = await redeem(1n * ZSD);
    await p.tick();
    expect((await row(db, id))!.status).toBe("sent");
    zcashd.knobs.unavailable = true;
    try {
      await p.tick();
      await p.tick();
    } finally {
      zcashd.knobs.unavailable = false;
    }
    expect((await row(db, id))!).toMatchObject({ status: "sent", last_error: "zcashd answered HTTP 503" });
    await passes(p, 3);
    expect((await row(db, id))!.status).toBe("completed");
  });

  it("retries a payment the wallet refused, then pays it", async () => {
    // A back-off no busy machine outlasts between two ticks (a 200 ms one did: the second tick retried).
    const { p, db } = await payouts({ retryMs: 60_000 });
    const id = await redeem(1n * ZSD);
    zcashd.knobs.refuseNextSend = "Insufficient funds: have 0.00, need 0.01";
    const before = Date.now();
    await p.tick();
    const refused = (await row(db, id))!;
    expect(refused).toMatchObject({ status: "pending", attempts: 1 });
    expect(refused.last_error).toMatch(/Insufficient funds/);
    expect(
      new Date(String((refused as unknown as { next_attempt_at: string }).next_attempt_at)).getTime(),
    ).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
    // Not before its back-off.
    await p.tick();
    expect((await row(db, id))!.attempts).toBe(1);
    // The back-off has run out.
    await db.query("UPDATE payouts SET next_attempt_at = now() WHERE redemption_id = $1", [id.toString()]);
    await passes(p, 4);
    expect((await row(db, id))!).toMatchObject({ status: "completed", attempts: 2 });
  });

  it("fails the payout on-chain and holds its ZEC for the owner (no ZSD back) when the wallet keeps failing the payment", async () => {
    const { p, db } = await payouts({ maxAttempts: 2 });
    const before = await s.read.token.read.balanceOf([alice.address]);
    const id = await redeem(5n * ZSD);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(before - 5n * ZSD);
    const sends = zcashd.sends.length;
    const pending = await s.read.redemptions.read.pendingZatDue();
    const debt = await s.read.positions.read.totalDebt();
    for (let pass = 0; pass < 12 && (await row(db, id))?.status !== "held"; pass++) {
      zcashd.knobs.failNextSend = "Could not find any non-coinbase UTXOs to spend";
      await p.tick();
    }
    zcashd.knobs.failNextSend = undefined;
    expect((await row(db, id))!).toMatchObject({ status: "held", attempts: 2 });
    expect(zcashd.sends).toHaveLength(sends + 2);
    expect(await onChain(id)).toBe(3);
    // Nothing minted back nor restored to the positions: the ZEC stays owed to the owner.
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(before - 5n * ZSD);
    expect(await s.read.redemptions.read.pendingZatDue()).toBe(pending);
    expect(await s.read.positions.read.totalDebt()).toBe(debt);
    expect((await s.payoutFailed(id))!.zatHeld).toBe((await s.read.redemptions.read.getPayout([id])).zatDue);
    // A code on-chain, never the wallet's words (they may reveal its balance).
    expect((await s.payoutFailed(id))!.reason).toBe("payout_failed");
    expect((await row(db, id))!.last_error).toMatch(/non-coinbase UTXOs/);
  });

  it("fails and holds, without sending anything, a redemption to an address it cannot pay", async () => {
    const { p, db } = await payouts();
    const sends = zcashd.sends.length;
    const transparent = await redeem(1n * ZSD, "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd");
    const mainnet = await redeem(
      1n * ZSD,
      "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya",
    );
    await passes(p, 3);
    for (const id of [transparent, mainnet]) {
      expect((await row(db, id))!.status).toBe("held");
      expect(await onChain(id)).toBe(3);
    }
    expect((await row(db, transparent))!.last_error).toMatch(/transparent/i);
    expect((await s.payoutFailed(transparent))!.reason).toBe("unreadable_address");
    expect((await row(db, mainnet))!.last_error).toMatch(/mainnet|network/i);
    expect(zcashd.sends).toHaveLength(sends);
  });

  it("fails and holds a redemption to an address that cannot even be parsed, holds up none behind it, and pays the canonical form", async () => {
    const { p, db } = await payouts();
    const sends = zcashd.sends.length;
    // A sealed address may hold any bytes. A valid checksum over bits that are no bytes (non-zero padding),
    // and an address spelled with U+212A KELVIN SIGN, which lower-cases to "k".
    const words = bech32.toWords(new Uint8Array(43).fill(7));
    const badPadding = await redeem(
      1n * ZSD,
      bech32.encode("ztestsapling", [...words.slice(0, -1), words.at(-1)! | 1]),
    );
    const kelvin = await redeem(1n * ZSD, WITHDRAW.toUpperCase().replaceAll("K", "\u212A"));
    const upperCase = await redeem(1n * ZSD, WITHDRAW.toUpperCase());
    for (let pass = 0; pass < 10 && (await row(db, upperCase))?.status !== "completed"; pass++) await p.tick();
    for (const id of [badPadding, kelvin]) {
      expect((await row(db, id))!.status).toBe("held");
      expect(await onChain(id)).toBe(3);
      expect((await s.payoutFailed(id))!.reason).toBe("unreadable_address");
    }
    expect((await row(db, upperCase))!.status).toBe("completed");
    expect(zcashd.sends).toHaveLength(sends + 1);
    expect(zcashd.sends.at(-1)!.amounts[0]!.address).toBe(WITHDRAW);
  });

  it("pays an owner's envelope that someone else copied onto their own redemption first (a front-run)", async () => {
    const { p, db } = await payouts();
    await s.receipt(await s.as(alice).token.write.transfer([bob.address, 2n * ZSD]));
    const envelope = s.seal(WITHDRAW, bob.address);
    // Alice lands bob's envelope first, on her own redemption: it opens for bob only.
    const copy = await redeemSealed(1n * ZSD, envelope);
    await s.receipt(await s.as(bob).redemptions.write.redeem([1n * ZSD, envelope]));
    const own = await s.read.redemptions.read.payoutCount();
    for (let pass = 0; pass < 10 && (await row(db, own))?.status !== "completed"; pass++) await p.tick();
    expect((await row(db, own))!).toMatchObject({ status: "completed", withdraw_address: WITHDRAW });
    await passes(p, 2);
    expect((await row(db, copy))!).toMatchObject({ status: "held", withdraw_address: null });
  });

  it("fails as unreadable_address, sending nothing, sealed addresses custody cannot open or used before, and pays their redirect", async () => {
    const { p, db } = await payouts();
    const sends = zcashd.sends.length;
    const context = { chainId: s.chainId, redemptions: s.read.redemptions.address, owner: alice.address };
    // Sealed for bob and put on alice's redemption: the associated data binds the envelope to its owner.
    const otherOwner = await redeemSealed(1n * ZSD, s.seal(WITHDRAW, bob.address));
    // A key the contract accepts (custody's key id) over a secret custody does not hold: junk to custody.
    const stranger = sealKeyFromSecret(DEV_SEAL_KEY.keyId, `0x${"42".repeat(32)}`);
    const junk = await redeemSealed(1n * ZSD, sealBytes(stranger, context, new TextEncoder().encode(WITHDRAW)));
    // Well sealed, but it holds no address at all.
    const noAddress = await redeemSealed(1n * ZSD, sealBytes(DEV_SEAL_KEY, context, new Uint8Array(40).fill(0xff)));
    // The same envelope twice: the first is paid, the replay is not.
    const envelope = s.seal(WITHDRAW, alice.address);
    const first = await redeemSealed(1n * ZSD, envelope);
    const replay = await redeemSealed(2n * ZSD, envelope);
    for (let pass = 0; pass < 10 && (await row(db, first))?.status !== "completed"; pass++) await p.tick();
    await passes(p, 2);
    expect((await row(db, first))!.status).toBe("completed");
    for (const id of [otherOwner, junk, noAddress, replay]) {
      expect((await row(db, id))!).toMatchObject({ status: "held", withdraw_address: null });
      expect(await onChain(id)).toBe(3);
      expect((await s.payoutFailed(id))!).toMatchObject({ owner: alice.address, reason: "unreadable_address" });
    }
    expect((await row(db, replay))!.last_error).toMatch(new RegExp(`already used by payout ${first}`));
    expect((await row(db, otherOwner))!.last_error).toMatch(/cannot open/);
    expect(zcashd.sends).toHaveLength(sends + 1);

    // The owner redirects the held ZEC to a fresh envelope: a new payout, paid like any other.
    await s.receipt(await s.as(alice).redemptions.write.redirect([otherOwner, s.seal(WITHDRAW, alice.address), 0n]));
    const redirected = await s.read.redemptions.read.payoutCount();
    for (let pass = 0; pass < 10 && (await row(db, redirected))?.status !== "completed"; pass++) await p.tick();
    expect((await row(db, redirected))!).toMatchObject({ status: "completed", withdraw_address: WITHDRAW });
    expect(await onChain(otherOwner)).toBe(4);
    expect(zcashd.sends).toHaveLength(sends + 2);
  });

  it("holds for an operator, not fails, a payout sealed to a key the contract took but custody lacks; paid once the key is added", async () => {
    // Custody started without the chain's key (a configuration mistake, not the holder's).
    const { db } = await payouts();
    const client = new ZcashdClient(zcashd.url, custodyAuth);
    const custody = new ZcashdCustody(db, attestor, client, { address: CUSTODY, minConfirmations: 3 });
    const options = { confirmations: 1, maxAttempts: 3, retryMs: 1 };
    const keyless = new SealedAddresses([], s.chainId, s.read.redemptions.address, "sandbox");
    const without = new Payouts(db, chain, custody, attestor, { ...options, sealed: keyless });
    const sends = zcashd.sends.length;
    const id = await redeem(1n * ZSD);
    await passes(without, 3);
    expect((await row(db, id))!).toMatchObject({ status: "review", withdraw_address: null });
    expect((await row(db, id))!.last_error).toMatch(/key 1.*CUSTODY_SEAL_KEYS/s);
    expect(await onChain(id)).toBe(1);
    expect(zcashd.sends).toHaveLength(sends);
    // The operator adds the key and sends it again: opened now, and paid.
    const withKey = new Payouts(db, chain, custody, attestor, { ...options, sealed: sealedAddresses() });
    expect(await resolveReview(db, id, { paid: false })).toBe(true);
    for (let pass = 0; pass < 10 && (await row(db, id))?.status !== "completed"; pass++) await withKey.tick();
    expect((await row(db, id))!).toMatchObject({ status: "completed", withdraw_address: WITHDRAW });
    expect(zcashd.sends).toHaveLength(sends + 1);
  });

  it("fails and holds a note withdrawal's payout too (no ZSD was burned for it): its owner, bound by the proof, may redirect it", async () => {
    const { p, db } = await payouts();
    const note = createNote();
    await s.deposit(note, 2n * ZEC);
    const transparent = "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd";
    const owner = accounts.carol.address;
    const sealedAddress = s.seal(transparent, owner);
    const out = await s.proveWithdraw({
      note,
      amountZat: 2n * ZEC,
      collateralFloorZat: 2n * ZEC,
      sealedAddress,
      owner,
    });
    await s.receipt(await s.as(accounts.bob).minter.write.withdrawNote([out.proof, out.spend, sealedAddress, owner]));
    const id = await s.read.redemptions.read.payoutCount();
    await passes(p, 3);
    expect((await row(db, id))!).toMatchObject({ status: "held", amount: "0", zat_due: (2n * ZEC).toString() });
    const onChainPayout = await s.read.redemptions.read.getPayout([id]);
    expect(onChainPayout).toMatchObject({ status: 3, owner, amount: 0n });
    expect((await s.payoutFailed(id))!).toMatchObject({ owner, zatHeld: 2n * ZEC, reason: "unreadable_address" });
  });

  it("never sends again a payout whose outcome is unknown", async () => {
    // The wallet forgot the operation (zcashd restarted): paid or not, nobody knows.
    const { p, db } = await payouts();
    zcashd.knobs.holdOperations = true;
    const forgotten = await redeem(1n * ZSD);
    await p.tick();
    zcashd.forgetOperations();
    zcashd.knobs.holdOperations = false;
    await passes(p, 3);
    expect((await row(db, forgotten))!.status).toBe("review");
    expect((await row(db, forgotten))!.last_error).toMatch(/no longer knows the operation/);

    // The operation failed after the transaction was built: the wallet may still broadcast it.
    const committed = await redeem(1n * ZSD);
    zcashd.knobs.failNextSend = "SendTransaction: Transaction commit failed";
    await passes(p, 4);
    expect((await row(db, committed))!.status).toBe("review");

    // The wallet took the payment but its answer was lost.
    const lost = await redeem(1n * ZSD);
    zcashd.knobs.dropNextSendAnswer = true;
    await passes(p, 2);
    expect((await row(db, lost))!.status).toBe("review");

    // A worker died after recording "sending": the next pass does not send it again.
    const interrupted = await redeem(1n * ZSD);
    await p.discover();
    await db.query("UPDATE payouts SET status = 'sending', attempts = 1 WHERE redemption_id = $1", [
      interrupted.toString(),
    ]);
    const sends = zcashd.sends.length;
    await passes(p, 3);
    expect((await row(db, interrupted))!.status).toBe("review");

    expect(zcashd.sends).toHaveLength(sends);
    for (const id of [forgotten, committed, lost, interrupted]) expect(await onChain(id)).toBe(1);
  });

  it("waits, without spending an attempt, for a wallet it cannot reach", async () => {
    const { p, db } = await payouts({ retryMs: 100 }, `http://127.0.0.1:${await freePort()}`);
    const id = await redeem(1n * ZSD);
    await passes(p, 3);
    expect((await row(db, id))!).toMatchObject({ status: "pending", attempts: 0 });
    expect((await row(db, id))!.last_error).toMatch(/refused the connection/);
    expect(await onChain(id)).toBe(1);
  });

  it("lets a pass acting on a stale read neither retry nor fail the payout (another replica moved the payout on)", async () => {
    const { db } = await payouts();
    // Two workers over one database. A reads the payout, then its wallet answer is held back
    // while B sees that payment fail and sends a new one.
    const client = new ZcashdClient(zcashd.url, custodyAuth);
    const wallet = new ZcashdCustody(db, attestor, client, { address: CUSTODY, minConfirmations: 3 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slowWallet: Custody = {
      kind: "zcashd",
      scanDeposits: () => wallet.scanDeposits(),
      send: (order) => wallet.send(order),
      operation: async (opid) => {
        await held;
        return wallet.operation(opid);
      },
    };
    const options = { sealed: sealedAddresses(), confirmations: 1, retryMs: 1 } as const;
    // A would fail the payout at the first failure: the worst thing a stale pass could do.
    const a = new Payouts(db, chain, slowWallet, attestor, { ...options, maxAttempts: 1 });
    const b = new Payouts(db, chain, wallet, attestor, { ...options, maxAttempts: 3 });
    const id = await redeem(1n * ZSD);
    zcashd.knobs.failNextSend = "Insufficient funds: have 0, need 0.01";
    await b.tick();
    const failing = (await row(db, id))!.operation_id;
    const staleA = a.tick();
    await eventually(
      async () => {
        await b.tick();
        return (await row(db, id))!;
      },
      (r) => r.status === "sent" && r.operation_id !== failing,
      "B to send the payout again",
    );
    const sends = zcashd.sends.length;
    release();
    await staleA;
    expect((await row(db, id))!).toMatchObject({ status: "sent", attempts: 2 });
    expect(await onChain(id)).toBe(1);
    expect(zcashd.sends).toHaveLength(sends);
    await passes(b, 4);
    expect((await row(db, id))!.status).toBe("completed");
    expect(await onChain(id)).toBe(2);
  });

  it("carries out an operator's verdict on a payout held for review", async () => {
    const { p, db } = await payouts();
    zcashd.knobs.holdOperations = true;
    const paidMeanwhile = await redeem(1n * ZSD);
    await p.tick();
    zcashd.forgetOperations();
    zcashd.knobs.holdOperations = false;
    await p.tick();
    expect((await row(db, paidMeanwhile))!.status).toBe("review");
    // Only a payout in review takes a verdict.
    expect(await resolveReview(db, paidMeanwhile + 1000n, { paid: false })).toBe(false);

    // The operator finds the payment in the wallet: settled with that txid, nothing sent again.
    const sends = zcashd.sends.length;
    const txid = `0x${"7c".repeat(32)}` as const;
    expect(await resolveReview(db, paidMeanwhile, { paid: txid })).toBe(true);
    await p.tick();
    expect((await row(db, paidMeanwhile))!.status).toBe("completed");
    expect(zcashd.sends).toHaveLength(sends);
    expect((await s.payoutCompleted(paidMeanwhile))!.zcashTxId).toBe(txid);

    // The operator finds no payment: it is sent again.
    const notPaid = await redeem(1n * ZSD);
    await p.discover();
    await db.query("UPDATE payouts SET status = 'review' WHERE redemption_id = $1", [notPaid.toString()]);
    expect(await resolveReview(db, notPaid, { paid: false })).toBe(true);
    await passes(p, 4);
    expect((await row(db, notPaid))!.status).toBe("completed");
    expect(zcashd.sends).toHaveLength(sends + 1);
  });

  it("recognises a settlement an earlier pass made but did not record", async () => {
    const { p, db } = await payouts();
    zcashd.knobs.holdOperations = true;
    const id = await redeem(1n * ZSD);
    await p.tick();
    zcashd.knobs.holdOperations = false;
    // The settlement lands, then the process dies before writing it down.
    const txid = `0x${"5a".repeat(32)}` as const;
    await attestor.completePayout(id, txid);
    await db.query("UPDATE payouts SET status = 'settling', zcash_txid = $2 WHERE redemption_id = $1", [
      id.toString(),
      txid,
    ]);
    await p.tick();
    expect((await row(db, id))!.status).toBe("completed");
    expect(await onChain(id)).toBe(2);
  });
});
