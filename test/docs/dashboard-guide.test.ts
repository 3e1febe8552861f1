// The dashboard guide's two commands, run as the page writes them (through npm, the password on
// standard input from $PASSWORD) on a database of their own: a key added to an account the CLI
// made, then a sign-in given to it, which the dashboard accepts.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "@zsd/testkit";
import { openDatabase } from "../../api/src/adapters/db/index.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { runTool } from "../helpers/api-bundle.ts";
import { readDoc } from "../helpers/docs.ts";
import { startApi } from "../api/helpers.ts";
import { FormClient } from "../dashboard/client.ts";

/** The page's inline command that starts with `start`, whole. */
function command(start: string): string {
  const found = readDoc("guide/dashboard.md")
    .replaceAll("\n", " ")
    .match(/`([^`]+)`/g)
    ?.map((span) => span.slice(1, -1))
    .find((span) => span.startsWith(start));
  if (!found) throw new Error(`docs/guide/dashboard.md no longer shows \`${start}…\``);
  return found;
}

/** Runs a shell line from the repository's root, as a reader would paste it. */
function shell(line: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["-c", line], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the dashboard guide's key and sign-in commands", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    database = await createTestDatabase("zsd_dashboard_guide");
  });
  afterAll(() => database?.drop());

  it("add a key to an account and give it a sign-in the dashboard accepts", async () => {
    // The account, as `npm start` or a first `keys create` makes it.
    const first = await runTool("keys", ["create", "--env", "sandbox", "--name", "first"], {
      ...process.env,
      DATABASE_URL: database.url,
    });
    expect(first.code, first.stderr).toBe(0);
    const { account } = JSON.parse(first.stdout) as { account: string };

    const create = command("npm run keys -- create --env sandbox --name <name>")
      .replace("<name>", "'reader script'")
      .replace("<id>", account);
    const created = await shell(create, { DATABASE_URL: database.url });
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout.slice(created.stdout.indexOf("{"))) as { account: string; id: string };
    expect(key.account).toBe(account);

    const login = command(`printf '%s' "$PASSWORD" | npm run keys -- login`)
      .replace("<id>", account)
      .replace("<email>", "reader@example.com");
    const password = "the reader's own password";
    const signedIn = await shell(login, { DATABASE_URL: database.url, PASSWORD: password });
    expect(signedIn.code, signedIn.stderr).toBe(0);
    expect(signedIn.stdout).toContain(`${account} signs in to /dashboard as reader@example.com`);

    const db = await openDatabase({ url: database.url });
    const api = await startApi(db);
    try {
      const client = new FormClient(api.url);
      expect((await client.signIn("reader@example.com", password)).status).toBe(303);
      expect((await client.get("/dashboard/keys")).html).toContain(`/dashboard/keys/${key.id}`);
    } finally {
      await api.close();
      await db.close();
    }
  });
});
