// The key CLI beside a running API on embedded PGlite: one process owns the
// directory, and the CLI works through it rather than opening the files twice.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, DirectoryInUseError, openDatabase } from "../../../api/src/adapters/db/index.ts";
import { HOLD_TIMEOUT_MS, LOCK_FILE, SOCKET_PORT, toolDirectory } from "../../../api/src/adapters/db/local.ts";
import { ROOT } from "../../../scripts/lib/paths.ts";
import { bundle } from "../../helpers/api-bundle.ts";
import { type RunningApi, startApi } from "../helpers.ts";

const run = promisify(execFile);
const { DATABASE_URL: _, ...environment } = process.env;
// From its bundle: under tsx each run compiled the API's sources anew.
const keysCli = async (directory: string, ...args: string[]) =>
  run(process.execPath, [await bundle("cli/keys.ts"), ...args], {
    cwd: ROOT,
    env: { ...environment, PGLITE_DIRECTORY: directory, LOG_LEVEL: "silent" },
  });

describe("key CLI and a running API on one PGlite directory", () => {
  let dir: string;
  let directory: string;
  let db: Database;
  let api: RunningApi;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "zsd-keys-cli-"));
    directory = join(dir, "api");
    db = await openDatabase({ directory });
    api = await startApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates a key in the running API's database, which authenticates at once", async () => {
    const created = await keysCli(directory, "create", "--env", "sandbox", "--name", "cli app");
    const out = JSON.parse(created.stdout) as { account: string; id: string; secret: string };
    const keys = await api.call("/v1/keys", { key: out.secret });
    expect(keys.status).toBe(200);
    expect(JSON.stringify(await keys.json())).toContain(out.id);
    expect((await keysCli(directory, "list", "--account", out.account)).stdout).toContain(out.id);
    // The API kept its database: it still answers its own key, and the lock is its own.
    expect((await api.call("/v1/keys")).status).toBe(200);
    expect(Number(readFileSync(join(directory, LOCK_FILE), "utf8"))).toBe(process.pid);
  });

  it("serves tools transactions and errors over the socket without mixing them into the holder's work", async () => {
    const tool = await openDatabase({ directory, viaHolder: true });
    try {
      await expect(tool.query("SELECT $1::int AS n", ["not a number"])).rejects.toThrow(/invalid input syntax/);
      expect(await tool.query<{ n: number }>("SELECT $1::int AS n", [7])).toEqual([{ n: 7 }]);
      // The holder's own queries wait for the tool's transaction instead of landing inside it.
      let holderRead: Promise<unknown> | undefined;
      await expect(
        tool.transaction(async (tx) => {
          await tx.query("INSERT INTO accounts (id, name) VALUES ('acct_rolled_back', 'x')");
          holderRead = db.query("SELECT count(*) FROM accounts WHERE id = 'acct_rolled_back'");
          throw new Error("changed my mind");
        }),
      ).rejects.toThrow("changed my mind");
      expect(await holderRead).toEqual([{ count: 0 }]);
      expect(await db.query("SELECT id FROM accounts WHERE id = 'acct_rolled_back'")).toHaveLength(0);
    } finally {
      await tool.close();
    }
  });

  it("rolls back what a tool leaves open when it goes away, and the holder goes on", async () => {
    const client = new pg.Client({ host: directory, port: SOCKET_PORT, user: "postgres", database: "postgres" });
    client.on("error", () => undefined);
    await client.connect();
    await client.query("BEGIN");
    await client.query("INSERT INTO accounts (id, name) VALUES ('acct_abandoned', 'x')");
    client.connection.stream.destroy();
    expect(await db.query("SELECT id FROM accounts WHERE id = 'acct_abandoned'")).toHaveLength(0);
    expect((await api.call("/v1/keys")).status).toBe(200);
  });

  it("cuts off a tool that holds a transaction open and says nothing, so the holder is not stuck", async () => {
    const client = new pg.Client({ host: directory, port: SOCKET_PORT, user: "postgres", database: "postgres" });
    client.on("error", () => undefined);
    await client.connect();
    await client.query("BEGIN");
    await client.query("INSERT INTO accounts (id, name) VALUES ('acct_forgotten', 'x')");
    const started = Date.now();
    expect(await db.query("SELECT id FROM accounts WHERE id = 'acct_forgotten'")).toHaveLength(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_TIMEOUT_MS - 100);
    await client.end().catch(() => undefined);
  });

  it("refuses to open a directory that a live process holds", async () => {
    const opened = openDatabase({ directory });
    await expect(opened).rejects.toBeInstanceOf(DirectoryInUseError);
    await expect(opened).rejects.toThrow(`open in process ${process.pid}`);
  });

  it("the CLI fails with a clear message, opening nothing, when the holder does not answer", async () => {
    const held = join(dir, "held");
    await (await openDatabase({ directory: held })).close();
    // Held by a live process (this one) that serves no socket.
    writeFileSync(join(held, LOCK_FILE), `${process.pid}\n`);
    const failure = (await keysCli(held, "create", "--env", "sandbox", "--name", "x").then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    )) as { code: number; stderr: string };
    expect(failure.code).toBe(2);
    expect(failure.stderr).toMatch(new RegExp(`open in process ${process.pid}.*does not answer`, "s"));
    rmSync(join(held, LOCK_FILE));
    const reopened = await openDatabase({ directory: held });
    try {
      expect(await reopened.query("SELECT id FROM accounts")).toHaveLength(0);
    } finally {
      await reopened.close();
    }
  });

  it("takes over a lock left by a process that died, and gives the directory back on close", async () => {
    const stale = join(dir, "stale");
    mkdirSync(stale);
    const child = spawn(process.execPath, ["-e", ""]);
    await once(child, "exit");
    writeFileSync(join(stale, LOCK_FILE), `${child.pid}\n`);
    const opened = await openDatabase({ directory: stale });
    expect(Number(readFileSync(join(stale, LOCK_FILE), "utf8"))).toBe(process.pid);
    await opened.close();
    expect(existsSync(join(stale, LOCK_FILE))).toBe(false);
    await (await openDatabase({ directory: stale })).close();
  });

  it("defaults to the dev stack's database when none is set and the stack has one", () => {
    const dev = join(dir, "dev-stack");
    expect(toolDirectory({}, dev)).toBeUndefined();
    mkdirSync(dev);
    expect(toolDirectory({}, dev)).toBe(dev);
    expect(toolDirectory({ PGLITE_DIRECTORY: "/elsewhere" }, dev)).toBe("/elsewhere");
    expect(toolDirectory({ DATABASE_URL: "postgres://db" }, dev)).toBeUndefined();
  });
});
