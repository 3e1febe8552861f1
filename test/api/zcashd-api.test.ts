// The API with zcashd as its custody: the worker records deposits it finds in
// the custody wallet and pays relayed redemptions with z_sendmany.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNote, noteCommitment, releaseProver } from "@zsd/sdk/notes";
import { formatZsd } from "@zsd/sdk/units";
import { type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type ZcashdTestServer, memoHex, startZcashdTestServer } from "../helpers/zcashd-server.ts";
import { type RunningApi, eventually, json, openStorage, startRelayApi } from "./helpers.ts";

const CUSTODY = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const WITHDRAW =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";

describe("API with zcashd custody", () => {
  let s: System;
  let zcashd: ZcashdTestServer;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    s = await deploySystem();
    zcashd = await startZcashdTestServer(CUSTODY);
    storage = await openStorage("pglite");
    api = await startRelayApi(s, storage.db, {
      ZCASHD_RPC_URL: zcashd.url,
      ZCASHD_RPC_USER: zcashd.user,
      ZCASHD_RPC_PASSWORD: zcashd.password,
      // Configured in upper case: the API must use the canonical form, which the wallet knows.
      CUSTODY_ADDRESS: CUSTODY.toUpperCase(),
      ZCASHD_MIN_CONFIRMATIONS: "3",
      DEPOSIT_SCAN_MS: "100",
      PAYOUT_MAX_ATTEMPTS: "2",
      PAYOUT_RETRY_MS: "50",
    });
    api.worker!.start();
  });
  afterAll(async () => {
    await api?.close();
    await zcashd?.close();
    await storage?.close();
    await releaseProver();
  });

  it("records a deposit that reaches the custody wallet with a note commitment", async () => {
    const commitment = noteCommitment(createNote());
    zcashd.notes.push({
      txid: "ab".repeat(32),
      amountZat: 2 * Number(ZEC),
      memo: memoHex(`zsd-note:0x${commitment.toString(16).padStart(64, "0")}`),
      confirmations: 4,
    });
    await eventually(
      () => s.read.registry.read.totalCollateralZat(),
      (v) => v === 2n * ZEC,
    );
    // Sandbox deposits are for the local custody only.
    expect((await api.call("/v1/sandbox/deposits", json({ amount: "1", noteCommitment: "5" }))).status).toBe(503);
  });

  async function relayRedeem(amount: bigint): Promise<string> {
    const { deadline, ...sig } = await s.signedRedeem(accounts.alice, amount, WITHDRAW);
    const response = await api.call(
      "/v1/redeem",
      json({
        amount: formatZsd(amount),
        withdrawAddress: WITHDRAW,
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
    refunded: boolean;
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
    expect(paid.zcashTxId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(paid.refunded).toBe(false);
    expect(paid.settlementTxHash).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("shows a redemption failed and refunded when the custody wallet keeps failing its payout", async () => {
    const balance = await s.read.token.read.balanceOf([accounts.alice.address]);
    const sends = zcashd.sends.length;
    const failing = setInterval(() => (zcashd.failNextSend = "Insufficient funds: have 0.00, need 0.10"), 5);
    try {
      const id = await relayRedeem(10n * ZSD);
      const failed = await eventually(
        () => redemption(id),
        (r) => r.status === "paid" || r.status === "failed",
      );
      expect(failed.status).toBe("failed");
      expect(failed).toMatchObject({
        refunded: true,
        zcashTxId: null,
        failureReason: "Custody could not pay this redemption, so the ZSD was returned to the owner.",
        settlementTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
    } finally {
      clearInterval(failing);
      zcashd.failNextSend = undefined;
    }
    expect(zcashd.sends).toHaveLength(sends + 2);
    expect(await s.read.token.read.balanceOf([accounts.alice.address])).toBe(balance);
    // Operators see payouts by status on /metrics.
    const metrics = await (await api.call("/metrics", { key: null })).text();
    expect(metrics).toContain('zsd_relay_items{kind="payout",status="completed"} 1');
    expect(metrics).toContain('zsd_relay_items{kind="payout",status="refunded"} 1');
    expect(metrics).toContain("zsd_payout_oldest_unfinished_seconds 0");
  });
});
