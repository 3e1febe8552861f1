// One account behind the CLI and the dashboard: a key made with `npm run keys`
// for a new account, a sign-in given to that account with `keys login`, and
// the dashboard showing the CLI's key to whoever signs in with it. The CLI runs
// from its bundle on PostgreSQL: under tsx on PGlite each of its four runs spent
// seconds of CPU compiling and starting the embedded database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../api/src/adapters/db/index.ts";
import { createTestDatabase } from "@zsd/testkit";
import { runTool } from "../helpers/api-bundle.ts";
import { type RunningApi, startApi } from "../api/helpers.ts";
import { FormClient } from "./client.ts";

/** The key CLI on the database at `url`, with `stdin` as its standard input. */
const keysCli = (url: string, args: string[], stdin = "") =>
  runTool("keys", args, { ...process.env, DATABASE_URL: url }, stdin);

describe("keys login: a CLI-made account signs in to the dashboard", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let url: string;

  beforeAll(async () => {
    database = await createTestDatabase("zsd_cli_login");
    url = database.url;
  });
  afterAll(() => database?.drop());

  it("gives the account a login from standard input and shows its CLI key on the dashboard", async () => {
    const created = await keysCli(url, ["create", "--env", "sandbox", "--name", "ops script"]);
    expect(created.code, created.stderr).toBe(0);
    const { account, id } = JSON.parse(created.stdout) as { account: string; id: string };

    const short = await keysCli(url, ["login", "--account", account, "--email", "ops@example.com"], "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("12 to 256 characters");
    const unknown = await keysCli(
      url,
      ["login", "--account", "acct_nonexistent000000", "--email", "ops@example.com"],
      "a long enough password\n",
    );
    expect(unknown.code).toBe(2);
    const login = await keysCli(
      url,
      ["login", "--account", account, "--email", "Ops@Example.com"],
      "a long enough password\n",
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`${account} signs in to /dashboard as ops@example.com`);

    const db = await openDatabase({ url });
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
