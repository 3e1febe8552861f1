// A screener acting while the relay or the payouts are between reading a row
// and moving it: the hold must win over a send or a payment that has not yet
// been recorded, and a rejection is final. The chain, the sender and the
// wallet are stand-ins whose calls let the screener act at the worst moment.
import { afterEach, describe, expect, it } from "vitest";
import { zeroAddress } from "viem";
import type { Chain } from "../../../api/src/adapters/chain.ts";
import type { CustodyCalls } from "../../../api/src/adapters/custody/custody-calls.ts";
import type { Custody } from "../../../api/src/adapters/custody/index.ts";
import type { Database } from "../../../api/src/adapters/db/index.ts";
import { ComplianceService } from "../../../api/src/domain/compliance/compliance.ts";
import { DomainError } from "../../../api/src/domain/errors.ts";
import { Payouts } from "../../../api/src/workers/payouts/payouts.ts";
import { SealedAddresses } from "../../../api/src/domain/redemptions/sealed-addresses.ts";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { RedemptionRelay } from "../../../api/src/workers/relay/redemption-relay.ts";
import type { TransactionSender } from "../../../api/src/workers/relay/sender.ts";
import { MintRelay } from "../../../api/src/workers/relay/mint-relay.ts";
import { PositionRelay } from "../../../api/src/workers/relay/position-relay.ts";
import { type Storage, openStorage } from "../helpers.ts";
import { OWNER, queuedMint } from "../relay-stand-ins.ts";

const WITHDRAW = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const REDEMPTIONS = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function setUp(kind: Storage) {
  const storage = await openStorage(kind);
  close = storage.close;
  const db: Database = storage.db;
  await db.query("INSERT INTO accounts (id, name) VALUES ('acct_1', 'desk')");
  await db.query(
    `INSERT INTO agents (id, account_id, environment, name, role, webhook_url, events, secret)
     VALUES ('agt_1', 'acct_1', 'sandbox', 'screener', 'screener', 'https://example.com/hook', '{}', 'whsec_x')`,
  );
  const compliance = new ComplianceService(db, {
    environment: "sandbox",
    screening: "off",
    verdictTimeoutMs: 60_000,
    defaultVerdict: "REJECTED",
  });
  const hold = (type: "mint" | "redemption" | "position_action", id: string) =>
    compliance.raise("acct_1", "agt_1", {
      subject: { type, id },
      severity: "severe",
      category: "sanctions",
      reason: "a list entry",
      action: "hold",
    });
  return { db, compliance, hold };
}

async function redemptionRequest(
  db: Database,
  id: string,
  fields: { status: string; relayStatus: string; redemptionId?: string },
) {
  await db.query(
    `INSERT INTO redemption_requests (id, account_id, status, relay_status, owner, amount, withdraw_address, deadline,
       signature, redemption_id)
     VALUES ($1, 'acct_1', $2, $3, $4, '1000000000000000000', $5, '99999999999', $6, $7)`,
    [
      id,
      fields.status,
      fields.relayStatus,
      OWNER,
      WITHDRAW,
      JSON.stringify({ v: 27, r: `0x${"11".repeat(32)}`, s: `0x${"22".repeat(32)}` }),
      fields.redemptionId ?? null,
    ],
  );
}

async function payout(db: Database, redemptionId: string) {
  await db.query(
    `INSERT INTO payouts (redemption_id, owner, amount, zat_due, withdraw_address, request_tx_hash, status)
     VALUES ($1, $2, '1000000000000000000', '100000', $3, '0xabc', 'pending')`,
    [redemptionId, OWNER, WITHDRAW],
  );
}

describe.each(["pglite", "postgres"] as Storage[])("a hold racing the relay and the payouts on %s", (kind) => {
  it("keeps a mint a screener holds while the relay simulates it from being sent", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await queuedMint(db, "mnt_1", "prf_1");
    const chain = {
      minter: REDEMPTIONS,
      isSpent: async () => false,
      client: {
        estimateGas: async () => {
          await hold("mint", "mnt_1");
          return 100_000n;
        },
      },
    } as unknown as Chain;
    const recorded: boolean[] = [];
    const sender = {
      address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      send: async (_to: unknown, _data: unknown, _gas: unknown, record: (sent: unknown) => Promise<boolean>) => {
        recorded.push(await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 0, submitted_at: new Date() }));
      },
    } as unknown as TransactionSender;

    await new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, compliance }).pass();

    expect(recorded).toEqual([false]);
    const [row] = await db.query<{ status: string; tx_hash: string | null }>(
      "SELECT status, tx_hash FROM mints WHERE id = 'mnt_1'",
    );
    expect(row).toEqual({ status: "queued", tx_hash: null });
  });

  it("drops only the mint its own account holds while the relay simulates the batch: the others go, signed again without it", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await db.query("INSERT INTO accounts (id, name) VALUES ('acct_2', 'another customer')");
    await queuedMint(db, "mnt_1", "prf_1", "2", "acct_2");
    await queuedMint(db, "mnt_2", "prf_2", "4");
    await queuedMint(db, "mnt_3", "prf_3", "6", "acct_2");
    let held = false;
    const chain = {
      minter: REDEMPTIONS,
      isSpent: async () => false,
      client: {
        // Each mint run alone, then the batch whole (with its gas limit): acct_1 holds its own mint then.
        call: async ({ gas }: { gas?: bigint }) => {
          if (gas !== undefined && !held) {
            held = true;
            await hold("mint", "mnt_2");
          }
          return { data: "0x" };
        },
      },
    } as unknown as Chain;
    const recorded: boolean[] = [];
    const sender = {
      address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      send: async (_to: unknown, _data: unknown, _gas: unknown, record: (sent: unknown) => Promise<boolean>) => {
        const n = recorded.length;
        recorded.push(await record({ tx_hash: `0x0${n}`, raw_tx: "0x02", nonce: 0, submitted_at: new Date() }));
      },
    } as unknown as TransactionSender;

    const options = { confirmations: 1, maxAttempts: 3, compliance, mintBatchMax: 3, mintBatchWaitMs: 0 };
    await new MintRelay(db, chain, sender, options).pass();

    // The first signature is never broadcast; the batch signed again (same nonce) without the held mint is.
    expect(recorded).toEqual([false, true]);
    const rows = await db.query<{ id: string; status: string; tx_hash: string | null }>(
      "SELECT id, status, tx_hash FROM mints ORDER BY id",
    );
    expect(rows).toEqual([
      { id: "mnt_1", status: "submitted", tx_hash: "0x01" },
      { id: "mnt_2", status: "queued", tx_hash: null },
      { id: "mnt_3", status: "submitted", tx_hash: "0x01" },
    ]);
  });

  it("keeps a redemption a screener holds while the relay simulates it from being sent", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await redemptionRequest(db, "red_1", { status: "requested", relayStatus: "queued" });
    const chain = {
      redemptions: REDEMPTIONS,
      client: {
        // The screener's hold lands between the relay's read of the queue and its send.
        estimateGas: async () => {
          await hold("redemption", "red_1");
          return 100_000n;
        },
      },
    } as unknown as Chain;
    const recorded: boolean[] = [];
    const sender = {
      address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      send: async (_to: unknown, _data: unknown, _gas: unknown, record: (sent: unknown) => Promise<boolean>) => {
        recorded.push(await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 0, submitted_at: new Date() }));
      },
    } as unknown as TransactionSender;

    await new RedemptionRelay(db, chain, sender, { maxAttempts: 3, compliance }).pass();

    // false: nothing is broadcast.
    expect(recorded).toEqual([false]);
    const [row] = await db.query<{ relay_status: string; tx_hash: string | null }>(
      "SELECT relay_status, tx_hash FROM redemption_requests WHERE id = 'red_1'",
    );
    expect(row).toEqual({ relay_status: "queued", tx_hash: null });
  });

  it("keeps a position action a screener holds while the relay simulates it from being sent", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await db.query(
      `INSERT INTO position_actions (id, account_id, environment, action, position_id, signer, signed_nonce, amount,
         calldata, status)
       VALUES ('pact_1', 'acct_1', 'sandbox', 'repay', '1', $1, '0', '1000000000000000000', '0x1234', 'queued')`,
      [OWNER],
    );
    const chain = {
      minter: REDEMPTIONS,
      client: {
        estimateGas: async () => {
          await hold("position_action", "pact_1");
          return 100_000n;
        },
      },
    } as unknown as Chain;
    const recorded: boolean[] = [];
    const sender = {
      address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      send: async (_to: unknown, _data: unknown, _gas: unknown, record: (sent: unknown) => Promise<boolean>) => {
        recorded.push(await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 0, submitted_at: new Date() }));
      },
    } as unknown as TransactionSender;

    await new PositionRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, compliance }).pass();

    expect(recorded).toEqual([false]);
    const [row] = await db.query<{ status: string; tx_hash: string | null }>(
      "SELECT status, tx_hash FROM position_actions WHERE id = 'pact_1'",
    );
    expect(row).toEqual({ status: "queued", tx_hash: null });
  });

  it("does not pay a burned redemption a screener holds while the payouts read the chain", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await redemptionRequest(db, "red_2", { status: "burned", relayStatus: "done", redemptionId: "7" });
    await payout(db, "7");
    const chain = {
      redemptions: REDEMPTIONS,
      client: {
        getBlockNumber: async () => {
          throw new Error("no discovery in this test");
        },
        readContract: async () => {
          await hold("redemption", "red_2");
          return { status: 1, owner: OWNER, amount: 10n ** 18n, zatDue: 100_000n };
        },
      },
    } as unknown as Chain;
    const sends: unknown[] = [];
    const custody = {
      send: async (payment: unknown) => {
        sends.push(payment);
        return "opid-1";
      },
    } as unknown as Custody;
    const payouts = new Payouts(db, chain, custody, {} as CustodyCalls, {
      sealed: new SealedAddresses([DEV_SEAL_KEY], 31337, zeroAddress, "sandbox"),
      confirmations: 1,
      maxAttempts: 3,
      retryMs: 1,
      compliance,
    });

    await payouts.tick();

    expect(sends).toEqual([]);
    const [row] = await db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = 7");
    expect(row!.status).toBe("pending");
  });

  it("does not let a new hold (and its release) undo a rejection waiting for its on-chain failure", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await redemptionRequest(db, "red_3", { status: "burned", relayStatus: "done", redemptionId: "8" });
    await payout(db, "8");
    const first = await hold("redemption", "red_3");
    await compliance.reject("acct_1", "agt_1", first.alertId, "sanctions_match");

    const again = await hold("redemption", "red_3").catch((error: unknown) => error);

    expect(again).toBeInstanceOf(DomainError);
    expect((again as DomainError).code).toBe("not_holdable");
    const [state] = await db.query<{ state: string }>(
      "SELECT state FROM compliance_holds WHERE subject_type = 'redemption' AND subject_id = 'red_3'",
    );
    expect(state!.state).toBe("rejected");
  });

  it("fails and holds a rejected redemption as compliance_rejected even after a failing attempt broke midway", async () => {
    const { db, compliance, hold } = await setUp(kind);
    await redemptionRequest(db, "red_4", { status: "burned", relayStatus: "done", redemptionId: "9" });
    await payout(db, "9");
    const alert = await hold("redemption", "red_4");
    await compliance.reject("acct_1", "agt_1", alert.alertId, "sanctions_match");
    const chain = {
      redemptions: REDEMPTIONS,
      client: {
        getBlockNumber: async () => {
          throw new Error("no discovery in this test");
        },
      },
    } as unknown as Chain;
    const reasons: string[] = [];
    const attestor = {
      failPayout: async (_id: bigint, reason: string) => {
        reasons.push(reason);
        // The first failPayout meets a node that does not answer; the next pass tries again.
        if (reasons.length === 1) throw new Error("fetch failed");
        return { txHash: "0xfeed" };
      },
    } as unknown as CustodyCalls;
    const payouts = new Payouts(db, chain, {} as Custody, attestor, {
      sealed: new SealedAddresses([DEV_SEAL_KEY], 31337, zeroAddress, "sandbox"),
      confirmations: 1,
      maxAttempts: 3,
      retryMs: 1,
      compliance,
    });

    await payouts.tick();
    await payouts.tick();

    expect(reasons).toEqual(["compliance_rejected", "compliance_rejected"]);
    const [row] = await db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = 9");
    expect(row!.status).toBe("held");
    const [event] = await db.query<{ payload: string }>(
      "SELECT payload FROM webhook_events WHERE type = 'redemption.failed' ORDER BY created_at DESC LIMIT 1",
    );
    expect(JSON.parse(event!.payload).data).toMatchObject({
      redemptionId: "red_4",
      failureCode: "compliance_rejected",
      payoutId: "9",
      redirect: expect.stringContaining("/redirect"),
    });
  });
});

describe("a hold and a worker in two connections to PostgreSQL", () => {
  it("does not pay a redemption whose hold commits while the payouts wait to start it", async () => {
    const { db, compliance } = await setUp("postgres");
    await redemptionRequest(db, "red_5", { status: "burned", relayStatus: "done", redemptionId: "10" });
    await payout(db, "10");
    const chain = {
      redemptions: REDEMPTIONS,
      client: {
        getBlockNumber: async () => {
          throw new Error("no discovery in this test");
        },
        readContract: async () => ({ status: 1, owner: OWNER, amount: 10n ** 18n, zatDue: 100_000n }),
      },
    } as unknown as Chain;
    const sends: unknown[] = [];
    const custody = {
      send: async (payment: unknown) => {
        sends.push(payment);
        return "opid-1";
      },
    } as unknown as Custody;
    const payouts = new Payouts(db, chain, custody, {} as CustodyCalls, {
      sealed: new SealedAddresses([DEV_SEAL_KEY], 31337, zeroAddress, "sandbox"),
      confirmations: 1,
      maxAttempts: 3,
      retryMs: 1,
      compliance,
    });
    // A hold's transaction as the service writes one (the request locked, then the hold), left open.
    let placed!: () => void;
    let commit!: () => void;
    const isPlaced = new Promise<void>((resolve) => (placed = resolve));
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const holding = db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM redemption_requests WHERE id = 'red_5' FOR UPDATE");
      await tx.query(
        `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state) VALUES ('redemption', 'red_5', 'acct_1', 'held')`,
      );
      placed();
      await committed;
    });
    await isPlaced;

    const ticking = payouts.tick();
    await new Promise((resolve) => setTimeout(resolve, 500));
    commit();
    await holding;
    await ticking;

    expect(sends).toEqual([]);
    const [row] = await db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = 10");
    expect(row!.status).toBe("pending");
  });

  it("refuses a hold that waited for the payouts to start the payment", async () => {
    const { db, hold } = await setUp("postgres");
    await redemptionRequest(db, "red_6", { status: "burned", relayStatus: "done", redemptionId: "11" });
    await payout(db, "11");
    // The payouts' side, as #claim writes it (the request locked, the payout moved to sending), left open.
    let moved!: () => void;
    let commit!: () => void;
    const isMoved = new Promise<void>((resolve) => (moved = resolve));
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const claiming = db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM redemption_requests WHERE redemption_id = '11' FOR UPDATE");
      await tx.query("UPDATE payouts SET status = 'sending', version = version + 1 WHERE redemption_id = 11");
      moved();
      await committed;
    });
    await isMoved;

    const holding = hold("redemption", "red_6").catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 500));
    commit();
    await claiming;
    const refused = await holding;

    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe("not_holdable");
  });

  it("does not send a mint whose hold commits while the relay waits to record the send", async () => {
    const { db, compliance } = await setUp("postgres");
    await queuedMint(db, "mnt_2", "prf_2");
    let placed!: () => void;
    let commit!: () => void;
    const isPlaced = new Promise<void>((resolve) => (placed = resolve));
    const committed = new Promise<void>((resolve) => (commit = resolve));
    // A hold's transaction as the service writes one (the mint locked, then the hold), left open.
    const holding = db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM mints WHERE id = 'mnt_2' FOR UPDATE");
      await tx.query(
        `INSERT INTO compliance_holds (subject_type, subject_id, account_id, state) VALUES ('mint', 'mnt_2', 'acct_1', 'held')`,
      );
      placed();
      await committed;
    });
    await isPlaced;
    const chain = {
      minter: REDEMPTIONS,
      isSpent: async () => false,
      client: { estimateGas: async () => 100_000n },
    } as unknown as Chain;
    const recorded: boolean[] = [];
    const sender = {
      address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      send: async (_to: unknown, _data: unknown, _gas: unknown, record: (sent: unknown) => Promise<boolean>) => {
        recorded.push(await record({ tx_hash: "0x01", raw_tx: "0x02", nonce: 0, submitted_at: new Date() }));
      },
    } as unknown as TransactionSender;

    const passing = new MintRelay(db, chain, sender, { confirmations: 1, maxAttempts: 3, compliance }).pass();
    await new Promise((resolve) => setTimeout(resolve, 500));
    commit();
    await holding;
    await passing;

    expect(recorded).toEqual([false]);
  });
});
