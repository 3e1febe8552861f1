// `npm start`'s one account: the sandbox key it prints and the dashboard
// sign-in it prints belong to the same account, and `npm run keys -- list`
// needs no --account on the dev stack.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../api/src/adapters/db/index.ts";
import { DEV_ACCOUNT_EMAIL, type DevAccount, provisionDevAccount } from "../../api/src/cli/dev-account.ts";
import { runTool } from "../helpers/api-bundle.ts";
import { type RunningApi, startApi } from "../api/helpers.ts";
import { FormClient } from "./client.ts";

const { DATABASE_URL: _, ...environment } = process.env;

/**
 * `npm run keys -- …` on a PGlite directory (through the API's socket when one holds it), from its
 * bundle: under tsx each run compiled the API's sources anew.
 */
const keysCli = (directory: string, args: string[]) =>
  runTool("keys", args, { ...environment, PGLITE_DIRECTORY: directory });

describe("the dev stack's one account", () => {
  let dir: string;
  let directory: string;
  let db: Database;
  let api: RunningApi;
  let dev: DevAccount;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "zsd-dev-account-"));
    directory = join(dir, "api");
    db = await openDatabase({ directory });
    dev = await provisionDevAccount(db);
    // The test helper adds an account of its own: the dev account is then one of two.
    api = await startApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("signs in to the dashboard with the printed email and password, and shows the printed key there", async () => {
    expect(dev.email).toBe(DEV_ACCOUNT_EMAIL);
    expect(dev.password.length).toBeGreaterThanOrEqual(12);
    const keys = (await (await api.call("/v1/keys", { key: dev.secret })).json()) as {
      data: { id: string; name: string; prefix: string }[];
    };
    expect(keys.data).toHaveLength(1);
    const [key] = keys.data;
    const client = new FormClient(api.url);
    expect((await client.signIn(dev.email, dev.password)).status).toBe(303);
    const page = await client.get("/dashboard/keys");
    expect(page.status).toBe(200);
    expect(page.html).toContain(`/dashboard/keys/${key!.id}`);
    expect((await client.get("/dashboard/account")).html).toContain(dev.accountId);
    // Made with the key, seen on the dashboard: an agent registered through the API.
    const agent = await api.call("/v1/agents/register", {
      key: dev.secret,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: "desk of the dev",
        webhookUrl: "http://127.0.0.1:9/hook",
        events: ["mint.queued"],
        role: "observer",
      }),
    });
    expect(agent.status).toBe(201);
    expect((await client.get("/dashboard/agents")).html).toContain("desk of the dev");
  });

  it("lists the dev account's keys with npm run keys -- list and no --account", async () => {
    const listed = await keysCli(directory, ["list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("npm start");
    expect(listed.stdout).not.toContain("test key");
  });

  it("takes the only account of another database, and names the choices when there are several", async () => {
    const other = join(dir, "other");
    const created = await keysCli(other, ["create", "--env", "sandbox", "--name", "first app"]);
    expect(created.code, created.stderr).toBe(0);
    const first = JSON.parse(created.stdout) as { account: string; id: string };
    const only = await keysCli(other, ["list"]);
    expect(only.code, only.stderr).toBe(0);
    expect(only.stdout).toContain(first.id);

    const second = await keysCli(other, ["create", "--env", "sandbox", "--name", "second app"]);
    const { account } = JSON.parse(second.stdout) as { account: string };
    const ambiguous = await keysCli(other, ["list"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`--account is required: there are 2 accounts (${first.account} (first app)`);
    expect(ambiguous.stderr).toContain(`${account} (second app)`);
  });
});
