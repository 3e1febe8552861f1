// One account behind the CLI and the dashboard: a key made with `npm run keys`
// for a new account, a sign-in given to that account with `keys login`, and
// the dashboard showing the CLI's key to whoever signs in with it.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../api/src/adapters/db/index.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { type RunningApi, startApi } from "../api/helpers.ts";
import { FormClient } from "./client.ts";

const TSX = join(ROOT, "node_modules", ".bin", "tsx");
const { DATABASE_URL: _, ...environment } = process.env;

/** The key CLI on a PGlite directory, with `stdin` as its standard input. */
function keysCli(
  directory: string,
  args: string[],
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      TSX,
      ["api/src/cli/keys.ts", ...args],
      { cwd: ROOT, env: { ...environment, PGLITE_DIRECTORY: directory, LOG_LEVEL: "silent" } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

describe("keys login: a CLI-made account signs in to the dashboard", () => {
  let dir: string;
  let directory: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "zsd-cli-login-"));
    directory = join(dir, "api");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives the account a login from standard input and shows its CLI key on the dashboard", async () => {
    const created = await keysCli(directory, ["create", "--env", "sandbox", "--name", "ops script"]);
    expect(created.code, created.stderr).toBe(0);
    const { account, id } = JSON.parse(created.stdout) as { account: string; id: string };

    const short = await keysCli(directory, ["login", "--account", account, "--email", "ops@example.com"], "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("12 to 256 characters");
    const unknown = await keysCli(
      directory,
      ["login", "--account", "acct_nonexistent000000", "--email", "ops@example.com"],
      "a long enough password\n",
    );
    expect(unknown.code).toBe(2);
    const login = await keysCli(
      directory,
      ["login", "--account", account, "--email", "Ops@Example.com"],
      "a long enough password\n",
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`${account} signs in to /dashboard as ops@example.com`);

    const db = await openDatabase({ directory });
    let api: RunningApi | undefined;
    try {
      api = await startApi(db);
      const client = new FormClient(api.url);
      expect((await client.signIn("ops@example.com", "a long enough password")).status).toBe(303);
      const keys = await client.get("/dashboard/keys");
      expect(keys.html).toContain("ops script");
      expect(keys.html).toContain(`/dashboard/keys/${id}`);
      expect((await client.get("/dashboard/account")).html).toContain(account);
    } finally {
      await api?.close();
      await db.close();
    }
  });
});
