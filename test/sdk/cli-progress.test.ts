// `zsd redeem` tells where a burned redemption's payout stands while it waits (the burn's
// confirmations, custody paying, the settlement) instead of one "burned" line and a quarter minute
// of silence. Against a local fake API that answers a redemption's reads in turn, as the relay's
// records move; test/api/resources/redemption-progress.test.ts checks the real API's records.
import { spawn } from "node:child_process";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAddress } from "viem";
import { DEV_SEAL_KEY, SEAL_ALGORITHM } from "@zsd/sdk";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

const ZADDR = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const REDEMPTIONS = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");
const CHAIN_ID = 31337;

const redemption = (status: string, payout: unknown, extra: Record<string, unknown> = {}) => ({
  object: "redemption",
  id: "red_1",
  status,
  amount: "25",
  zecDue: "0.4975",
  zcashTxId: null,
  hold: null,
  payout,
  failureCode: null,
  failureReason: null,
  ...extra,
});
const confirming = (n: number) => ({ stage: "confirming", confirmations: n, confirmationsRequired: 12 });

describe("zsd redeem's progress", () => {
  let server: Server;
  let baseUrl: string;
  // The redemption's reads, in turn; the last is repeated.
  const reads = [
    redemption("requested", null),
    redemption("burned", confirming(1)),
    redemption("burned", confirming(1)),
    redemption("burned", confirming(7)),
    redemption("burned", { stage: "paying", confirmations: 12, confirmationsRequired: 12 }),
    redemption("burned", { stage: "settling", confirmations: 12, confirmationsRequired: 12 }),
    redemption("paid", null, { zcashTxId: "ab".repeat(32) }),
  ];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url!, "http://x").pathname;
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      req.resume();
      req.on("end", () => {
        if (path === "/v1/relay")
          return reply(200, {
            object: "relay",
            environment: "sandbox",
            chainId: CHAIN_ID,
            contracts: { Redemptions: { address: REDEMPTIONS, startBlock: 0 } },
            relayer: null,
            sealKey: {
              keyId: DEV_SEAL_KEY.keyId,
              publicKey: DEV_SEAL_KEY.publicKey,
              algorithm: SEAL_ALGORITHM,
            },
          });
        if (path === "/v1/redemptions/terms")
          return reply(200, {
            object: "redemption_terms",
            nonce: "0",
            chainTime: 1_700_000_000,
            suggestedDeadline: 1_700_003_600,
            typedData: {
              domain: { name: "ZSD Redemptions", version: "1", chainId: CHAIN_ID, verifyingContract: REDEMPTIONS },
              types: {},
              primaryType: "Redeem",
            },
          });
        if (path === "/v1/redeem") return reply(202, reads[0]);
        if (path === "/v1/redemptions/red_1") return reply(200, reads.length > 1 ? reads.shift() : reads[0]);
        reply(404, { code: "not_found" });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("tells the burn's confirmations, then custody paying, then the settlement, each once", async () => {
    const done = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(ROOT, "sdk", "js", "bin", "zsd.js"), "redeem", "--amount", "25", "--to", ZADDR],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            ZSD_API_KEY: "sk_test_abc",
            ZSD_BASE_URL: baseUrl,
            ZSD_PRIVATE_KEY: hardhatPrivateKey(5),
          },
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d));
      child.stderr.on("data", (d: Buffer) => (stderr += d));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(done.stderr.trim().split("\n")).toEqual([
      "signing the redemption…",
      "redemption red_1: requested",
      "redemption red_1: burned: 1 of 12 confirmations before custody pays…",
      "redemption red_1: burned: 7 of 12 confirmations before custody pays…",
      "redemption red_1: burned: custody is paying the ZEC…",
      "redemption red_1: burned: paid on Zcash, being marked paid on-chain…",
      "redemption red_1: paid",
    ]);
    expect(done.stdout).toContain("redeemed 25 ZSD for 0.4975 ZEC (red_1");
    expect(done.code).toBe(0);
  });
});
