// Key scope on the dashboard: it acts with the account owner's session, which
// holds every right, so it lists and revokes every key of the account, while
// a restricted key made there acts through the API only on keys no broader
// than itself. Its key form offers every resource a restriction can name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountService } from "../../api/src/domain/accounts/accounts.ts";
import { KEY_RESOURCES } from "../../api/src/domain/accounts/keys.ts";
import { type RunningApi, openStorage, startApi } from "../api/helpers.ts";
import { FormClient, shownSecret } from "./client.ts";

const PASSWORD = "correct horse battery";

describe("key scope on the dashboard", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db, { ANALYTICS_FLUSH_MS: "600000" });
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  // An account signed in as its owner: a login given the way `npm run keys -- login` gives one
  // (verified by the operator), so that this test does not depend on how sign-up confirms an email.
  let accounts = 0;
  const signedUp = async () => {
    const account = await api.keys.createAccount("scope");
    const email = `scope-${++accounts}-${Date.now()}@example.com`;
    await new AccountService(api.db, 12).setLogin(account.id, email, PASSWORD);
    const client = new FormClient(api.url);
    expect((await client.signIn(email, PASSWORD)).status).toBe(303);
    return client;
  };
  const createKey = async (client: FormClient, fields: Record<string, string | string[]> = {}) => {
    const page = await client.submit("/dashboard/keys", "/dashboard/keys", {
      name: "scoped",
      environment: "sandbox",
      ...fields,
    });
    expect(page.status, page.html).toBe(200);
    const secret = shownSecret(page.html);
    const [row] = await api.db.query<{ id: string }>("SELECT id FROM api_keys WHERE last4 = $1", [secret.slice(-4)]);
    return { secret, id: row!.id };
  };

  it("offers every resource in its key form, positions and withdrawals included, and they work", async () => {
    const client = await signedUp();
    const form = await client.get("/dashboard/keys");
    for (const resource of Object.keys(KEY_RESOURCES)) {
      expect(form.html, resource).toMatch(new RegExp(`name="resources"\\s+value="${resource}"`));
    }
    const { secret } = await createKey(client, { resources: ["positions", "withdrawals"] });
    for (const path of ["/v1/positions/1", `/v1/withdrawals/wdr_${"a".repeat(20)}`]) {
      const response = await api.call(path, { key: secret });
      expect(response.status, path).not.toBe(403);
    }
    expect((await api.call("/v1/keys", { key: secret })).status).toBe(403);
  });

  it("the owner's session revokes any key; a restricted key made there cannot revoke a broader one", async () => {
    const client = await signedUp();
    const broad = await createKey(client);
    const keysOnly = await createKey(client, { resources: ["keys"] });

    // Through the API, with the restricted key: refused, and the broad key's last four withheld.
    const refused = await api.call(`/v1/keys/${broad.id}`, { key: keysOnly.secret, method: "DELETE" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("key_broader_than_caller");
    const listed = (await (await api.call("/v1/keys", { key: keysOnly.secret })).json()) as {
      data: { id: string; last4: string | null }[];
    };
    expect(listed.data.find((k) => k.id === broad.id)!.last4).toBeNull();

    // On the dashboard, the session is the account's owner: every key shows its last four, and any may be revoked.
    const page = await client.get("/dashboard/keys");
    expect(page.html).toContain(`sk_test_…${broad.secret.slice(-4)}`);
    expect(page.html).toContain(`sk_test_…${keysOnly.secret.slice(-4)}`);
    const confirm = await client.get(`/dashboard/keys/${broad.id}/revoke`);
    const revoked = await client.post(`/dashboard/keys/${broad.id}/revoke`, { _csrf: FormClient.csrf(confirm.html) });
    expect(revoked.status).toBe(200);
    expect((await api.call("/v1/keys", { key: broad.secret })).status).toBe(401);
  });
});
