// The API as its own process: key CLI, start-up validation, graceful shutdown.
// The API and its tools start from bundles (built once for the file): under tsx
// each start compiled them anew, and on a loaded machine that alone outran the
// 30 s waits. The tools run on PostgreSQL: on PGlite each run spent seconds of
// CPU starting the embedded database (keys-cli.test covers the tools on PGlite).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../api/src/adapters/db/index.ts";
import { freePort } from "../../../scripts/lib/hardhat-node.ts";
import { ROOT } from "../../../scripts/lib/paths.ts";
import { createTestDatabase } from "@zsd/testkit";
import { apiBundle, bundle } from "../../helpers/api-bundle.ts";

const run = promisify(execFile);
/** Runs an API tool (api/src/cli/<tool>.ts) from its bundle against the database at `url`. */
const tool = async (name: string, url: string, args: string[]) =>
  run(process.execPath, [await bundle(`cli/${name}.ts`), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "silent" },
  });

describe("API process", () => {
  let dir: string;
  let blackhole: Server;
  let blackholeUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "zsd-api-process-"));
    // Accepts connections and never answers: an upstream that hangs.
    blackhole = createServer(() => undefined);
    await new Promise<void>((resolve) => blackhole.listen(0, "127.0.0.1", resolve));
    blackholeUrl = `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`;
  });
  afterAll(() => {
    blackhole.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates, lists and revokes keys from the CLI, showing the secret once", async () => {
    const database = await createTestDatabase("zsd_process_keys");
    try {
      const keys = (...args: string[]) => tool("keys", database.url, args);
      const created = await keys("create", "--env", "production", "--name", "cli app");
      const out = JSON.parse(created.stdout) as { account: string; id: string; secret: string; environment: string };
      expect(out.secret).toMatch(/^sk_live_[0-9A-Za-z]{48}$/);
      expect(out.environment).toBe("production");
      const list = await keys("list", "--account", out.account);
      expect(list.stdout).toContain(`${out.id}  sk_live_…${out.secret.slice(-4)}`);
      expect(list.stdout).not.toContain(out.secret);
      await keys("revoke", "--account", out.account, "--key", out.id);
      expect((await keys("list", "--account", out.account)).stdout).toContain("REVOKED");
      await expect(keys("create", "--env", "staging", "--name", "x")).rejects.toThrow(/--env must be/);
    } finally {
      await database.drop();
    }
  });

  it("lists payouts and takes an operator's verdict on one held for review from the CLI", async () => {
    const database = await createTestDatabase("zsd_process_payouts");
    try {
      const db = await openDatabase({ url: database.url });
      await db.query(
        `INSERT INTO payouts (redemption_id, owner, amount, zat_due, withdraw_address, request_tx_hash, status, last_error)
         VALUES (12, '0xowner', '1', '1000', 'ztestsapling1x', '0xtx', 'review', 'operation forgotten'),
                (13, '0xowner', '1', '2000', 'ztestsapling1y', '0xtx', 'completed', NULL)`,
      );
      await db.close();
      const cli = (...args: string[]) => tool("payouts", database.url, args);
      const review = (await cli("list", "--status", "review")).stdout;
      expect(review).toContain("12  review  1000 zat → ztestsapling1x");
      expect(review).not.toContain("13  completed");
      await expect(cli("resolve", "--redemption", "12", "--paid", "12")).rejects.toThrow(/32-byte Zcash txid/);
      await expect(cli("resolve", "--redemption", "13", "--unpaid")).rejects.toThrow(/not held for review/);
      await expect(cli("resolve", "--redemption", "12")).rejects.toThrow(/exactly one of/);
      // The txid as the wallet prints it (display form); the chain takes it byte-reversed (internal form).
      const printed = `${"01".repeat(16)}${"ef".repeat(16)}`;
      expect((await cli("resolve", "--redemption", "12", "--paid", printed)).stdout).toContain("settled");
      expect((await cli("list")).stdout).toContain(
        `12  settling  1000 zat → ztestsapling1x  attempts 0  txid ${printed}`,
      );
      const reopened = await openDatabase({ url: database.url });
      try {
        const [row] = await reopened.query<{ zcash_txid: string }>(
          "SELECT zcash_txid FROM payouts WHERE redemption_id = 12",
        );
        expect(row!.zcash_txid).toBe(`0x${"ef".repeat(16)}${"01".repeat(16)}`);
      } finally {
        await reopened.close();
      }
    } finally {
      await database.drop();
    }
  });

  it("refuses to start with a bad variable and names it", async () => {
    const env = { ...process.env, ENVIRONMENT: "staging", PGLITE_DIRECTORY: join(dir, "bad") };
    const failure = await run(process.execPath, [await apiBundle()], { cwd: ROOT, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((failure as { code: number }).code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain("ENVIRONMENT");
  });

  it("writes a warning at once, not after 4 KB of buffered access log", async () => {
    const manifest = join(dir, "deployment.json");
    const address = "0x0000000000000000000000000000000000000001";
    const contract = { address, startBlock: 0 };
    writeFileSync(
      manifest,
      JSON.stringify({
        chainId: 31337,
        contracts: {
          StableMinter: contract,
          PositionManager: contract,
          CollateralRegistry: contract,
          Redemptions: contract,
        },
      }),
    );
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [await apiBundle()], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        PGLITE_DIRECTORY: join(dir, "prompt-logs"),
        DEPLOYMENT_FILE: manifest,
        // The node is down: the first look for redemptions to pay fails and
        // says so; the next is ten minutes away.
        RPC_URL: `http://127.0.0.1:${await freePort()}`,
        RELAYER_PRIVATE_KEY: `0x${"11".repeat(32)}`,
        CUSTODY_PRIVATE_KEY: `0x${"22".repeat(32)}`,
        RELAY_POLL_MS: "600000",
        PAYOUT_POLL_MS: "600000",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const deadline = Date.now() + 30_000;
      while (!output.includes('"level":40')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no warning written:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(output.length).toBeLessThan(4096);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("writes a quiet server's access log at once, and drains an in-flight request on SIGTERM, then exits 0", async () => {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [await apiBundle()], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        PGLITE_DIRECTORY: join(dir, "drain"),
        INDEXER_URL: blackholeUrl,
        RPC_URL: blackholeUrl,
        UPSTREAM_TIMEOUT_MS: "1500",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const deadline = Date.now() + 30_000;
      while (!output.includes('"msg":"listening"')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no start:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // A quiet server's access log is written within moments, not when 4 KB have gathered or at shutdown.
      expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
      const logged = Date.now() + 3_000;
      while (!output.includes('"route":"/v1/health"')) {
        if (Date.now() > logged) throw new Error(`the request's log line was not written:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

      const started = performance.now();
      const inFlight = fetch(`http://127.0.0.1:${port}/v1/health/ready`);
      await new Promise((r) => setTimeout(r, 300));
      child.kill("SIGTERM");
      const response = await inFlight;
      expect(response.status).toBe(503);
      expect((await response.json()).checks).toEqual({ database: true, indexer: false, chain: false });
      expect(performance.now() - started).toBeGreaterThan(1000);
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"draining"');
      await expect(fetch(`http://127.0.0.1:${port}/v1/health`)).rejects.toThrow();
    } finally {
      // A failed check must not leave the server running for the rest of the suite.
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
