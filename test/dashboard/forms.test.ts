// The dashboard over HTTP, as a browser and as an attacker would use it:
// accounts, sessions, CSRF, key restrictions enforced by the API, the request
// log and analytics, and hostile form input (answered 4xx, changing nothing).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, type Storage, openStorage, startApi } from "../api/helpers.ts";
import { FormClient, shownSecret } from "./client.ts";
import { LOGIN_LIMITS } from "../../api/src/http/dashboard/account-routes.ts";

const LOGIN_ATTEMPTS_PER_EMAIL = LOGIN_LIMITS.perEmailAndAddress.points;
import {
  LATENCY_BOUNDS_MS,
  MAX_PENDING_LOG,
  RequestAnalytics,
  quantile,
} from "../../api/src/domain/analytics/analytics.ts";

const PASSWORD = "correct horse battery";
let counter = 0;
const email = () => `dev${++counter}-${Date.now()}@example.com`;

// Both storages: the sessions' and the analytics' SQL (arrays, partial unique index) must run on each.
describe.each(["pglite", "postgres"] as Storage[])("developer dashboard (HTTP) on %s", (kind) => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    storage = await openStorage(kind);
    // Behind a proxy on loopback: the Secure-cookie test sends X-Forwarded-Proto as one would.
    api = await startApi(storage.db, { ANALYTICS_FLUSH_MS: "600000", TRUST_PROXY: "loopback" });
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  const keyCount = async (accountId?: string) =>
    Number(
      (
        await api.db.query<{ n: number | string }>(
          "SELECT count(*) AS n FROM api_keys WHERE ($1::text IS NULL OR account_id = $1)",
          [accountId ?? null],
        )
      )[0]!.n,
    );
  const accountIdOf = async (client: FormClient) => {
    const page = await client.get("/dashboard/account");
    return /<code>(acct_[0-9A-Za-z]+)<\/code>/.exec(page.html)![1]!;
  };
  // Signed up and signed in, unverified: the sandbox needs no verified email (production keys do: accounts-mail.test.ts).
  const signedUp = async () => {
    const client = new FormClient(api.url);
    const address = email();
    expect((await client.signUp(address, PASSWORD)).status).toBe(200);
    expect((await client.signIn(address, PASSWORD)).status).toBe(303);
    return { client, address };
  };
  const createKey = async (client: FormClient, fields: Record<string, string | string[]> = {}) => {
    const page = await client.submit("/dashboard/keys", "/dashboard/keys", {
      name: "test key",
      environment: "sandbox",
      ...fields,
    });
    expect(page.status, page.html).toBe(200);
    const secret = shownSecret(page.html);
    const id = (await api.db.query<{ id: string }>("SELECT id FROM api_keys WHERE last4 = $1", [secret.slice(-4)]))[0]!
      .id;
    return { secret, id };
  };

  it("serves its own scripts and styles from node_modules under a CSP that allows nothing else", async () => {
    const page = await fetch(`${api.url}/dashboard/signin`);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toMatch(/https?:/);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const path of [...assets, "/dashboard/assets/uPlot.iife.min.js", "/dashboard/assets/uPlot.min.css"]) {
      const asset = await fetch(`${api.url}${path}`);
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get("content-type"), path).toMatch(path.endsWith(".js") ? /javascript/ : /text\/css/);
      expect((await asset.text()).length, path).toBeGreaterThan(100);
    }
    expect((await fetch(`${api.url}/dashboard/assets/../../package.json`)).status).toBe(404);
  });

  describe("accounts and sessions", () => {
    it("signs up, then signs in with a session cookie that is HttpOnly, SameSite=Lax, scoped to /dashboard; Secure off loopback", async () => {
      const response = await fetch(`${api.url}/dashboard/signup`);
      const csrfCookie = response.headers.getSetCookie().find((c) => c.startsWith("zsd_csrf="))!;
      expect(csrfCookie).toMatch(/HttpOnly/);
      expect(csrfCookie).toMatch(/SameSite=Lax/);
      expect(csrfCookie).not.toMatch(/Secure/);

      const client = new FormClient(api.url);
      const address = email();
      const form = (path: string) =>
        client.get(path).then((page) => ({
          method: "POST",
          redirect: "manual" as const,
          headers: { cookie: client.cookieHeader, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            _csrf: FormClient.csrf(page.html),
            email: address,
            password: PASSWORD,
          }).toString(),
        }));
      // A sign-up signs no one in: it answers "check your email" whether or not the address had an account.
      const signup = await fetch(`${api.url}/dashboard/signup`, await form("/dashboard/signup"));
      expect(signup.status).toBe(200);
      expect(signup.headers.getSetCookie().find((c) => c.startsWith("zsd_session="))).toBeUndefined();
      const signin = await fetch(`${api.url}/dashboard/signin`, await form("/dashboard/signin"));
      expect(signin.status).toBe(303);
      const session = signin.headers.getSetCookie().find((c) => c.startsWith("zsd_session="))!;
      expect(session).toMatch(/HttpOnly/);
      expect(session).toMatch(/SameSite=Lax/);
      expect(session).toMatch(/Path=\/dashboard/);

      // Served under another name (behind a proxy, or on a real host), the cookies are Secure.
      const remote = await fetch(`${api.url}/dashboard/signin`, {
        headers: { "x-forwarded-proto": "https", "x-forwarded-host": "dashboard.zsd.example" },
      });
      expect(remote.headers.getSetCookie().find((c) => c.startsWith("zsd_csrf="))).toMatch(/Secure/);
    });

    it("keeps only a hash of the password and of the session token", async () => {
      const { client, address } = await signedUp();
      const [row] = await api.db.query<{ password_hash: string }>(
        "SELECT password_hash FROM accounts WHERE email = $1",
        [address],
      );
      expect(row!.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
      expect(row!.password_hash).not.toContain(PASSWORD);
      const token = client.jar.get("zsd_session")!;
      expect(await api.db.query("SELECT 1 FROM dashboard_sessions WHERE id = $1", [token])).toHaveLength(0);
    });

    it("answers a wrong password and an unknown email with the same generic error", async () => {
      const { address } = await signedUp();
      const wrong = await new FormClient(api.url).signIn(address, "not the password at all");
      const unknown = await new FormClient(api.url).signIn(email(), "not the password at all");
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      const message = (html: string) => /role="alert"[\s\S]*?<li>([^<]+)<\/li>/.exec(html)![1];
      expect(message(wrong.html)).toBe("Email or password is incorrect.");
      expect(message(unknown.html)).toBe(message(wrong.html));
    });

    it("limits sign-in attempts per email from one address: after the budget even the right password is refused", async () => {
      const { address } = await signedUp();
      const client = new FormClient(api.url);
      for (let i = 0; i < LOGIN_ATTEMPTS_PER_EMAIL; i++) {
        expect((await client.signIn(address, `wrong password ${i}`)).status).toBe(401);
      }
      const limited = await client.signIn(address, PASSWORD);
      expect(limited.status).toBe(429);
      expect(limited.html).toContain("Too many sign-in attempts");
      expect(client.jar.has("zsd_session")).toBe(false);
    });

    it("signs out: the old session token no longer opens the dashboard", async () => {
      const { client } = await signedUp();
      const token = client.jar.get("zsd_session")!;
      const out = await client.submit("/dashboard/keys", "/dashboard/signout", {});
      expect(out.status).toBe(303);
      const replay = await fetch(`${api.url}/dashboard/keys`, {
        redirect: "manual",
        headers: { cookie: `zsd_session=${token}` },
      });
      expect(replay.status).toBe(303);
      expect(replay.headers.get("location")).toBe("/dashboard/signin");
    });

    it("refuses an expired session, and the next sign-in sweeps it away", async () => {
      const { client, address } = await signedUp();
      await api.db.query("UPDATE dashboard_sessions SET expires_at = now() - interval '1 minute'");
      expect((await client.get("/dashboard/keys")).status).toBe(303);
      expect((await new FormClient(api.url).signIn(address, PASSWORD)).status).toBe(303);
      expect(await api.db.query("SELECT 1 FROM dashboard_sessions WHERE expires_at <= now()")).toHaveLength(0);
    });

    it("changes the password: the current one is checked, other sessions end, the new one signs in", async () => {
      const { client, address } = await signedUp();
      const other = new FormClient(api.url);
      expect((await other.signIn(address, PASSWORD)).status).toBe(303);

      const refused = await client.submit("/dashboard/account", "/dashboard/account/password", {
        current: "not my password",
        next: "a brand new passphrase",
      });
      expect(refused.status).toBe(400);
      const changed = await client.submit("/dashboard/account", "/dashboard/account/password", {
        current: PASSWORD,
        next: "a brand new passphrase",
      });
      expect(changed.status).toBe(200);
      expect(changed.html).toContain("Password changed.");
      expect((await client.get("/dashboard/keys")).status).toBe(200);
      expect((await other.get("/dashboard/keys")).status).toBe(303);
      expect((await new FormClient(api.url).signIn(address, PASSWORD)).status).toBe(401);
      expect((await new FormClient(api.url).signIn(address, "a brand new passphrase")).status).toBe(303);
    });
    it("counts wrong current passwords against the sign-in budget: a session cannot guess the password freely", async () => {
      // A stolen session would otherwise learn the password (reused elsewhere, perhaps) at scrypt speed.
      const { client } = await signedUp();
      for (let i = 0; i < LOGIN_ATTEMPTS_PER_EMAIL; i++) {
        const wrong = await client.submit("/dashboard/account", "/dashboard/account/password", {
          current: `guess number ${i}`,
          next: "a brand new passphrase",
        });
        expect(wrong.status).toBe(400);
      }
      const limited = await client.submit("/dashboard/account", "/dashboard/account/password", {
        current: PASSWORD,
        next: "a brand new passphrase",
      });
      expect(limited.status).toBe(429);
      expect(limited.html).toContain("Too many attempts");
    });
  });

  describe("CSRF and session fixation", () => {
    it("refuses a form without the token, with another session's token, or from another origin; nothing is created", async () => {
      const { client } = await signedUp();
      const victim = await accountIdOf(client);
      const { client: attacker } = await signedUp();
      const attackerToken = FormClient.csrf((await attacker.get("/dashboard/keys")).html);
      const before = await keyCount(victim);

      const missing = await client.post("/dashboard/keys", { name: "csrf", environment: "sandbox" });
      const foreign = await client.post("/dashboard/keys", {
        _csrf: attackerToken,
        name: "csrf",
        environment: "sandbox",
      });
      const ownToken = FormClient.csrf((await client.get("/dashboard/keys")).html);
      const crossSite = await client.post(
        "/dashboard/keys",
        { _csrf: ownToken, name: "csrf", environment: "sandbox" },
        { origin: "https://evil.example" },
      );
      const fetchMetadata = await client.post(
        "/dashboard/keys",
        { _csrf: ownToken, name: "csrf", environment: "sandbox" },
        { "sec-fetch-site": "cross-site" },
      );
      for (const page of [missing, foreign, crossSite, fetchMetadata]) expect(page.status).toBe(403);
      expect(await keyCount(victim)).toBe(before);

      // The same form with the page's own token works: the refusals were the token's and the origin's.
      expect(
        (await client.post("/dashboard/keys", { _csrf: ownToken, name: "fine", environment: "sandbox" })).status,
      ).toBe(200);
      expect(await keyCount(victim)).toBe(before + 1);
    });

    it("refuses a sign-in form posted without the double-submit token", async () => {
      const { address } = await signedUp();
      const client = new FormClient(api.url);
      await client.get("/dashboard/signin");
      const page = await client.post("/dashboard/signin", {
        _csrf: "x".repeat(43),
        email: address,
        password: PASSWORD,
      });
      expect(page.status).toBe(403);
      expect(client.jar.has("zsd_session")).toBe(false);
    });

    it("never promotes a session token planted before sign-in", async () => {
      const { address } = await signedUp();
      // The attacker's own valid session, planted in the victim's browser.
      const { client: attacker } = await signedUp();
      const planted = attacker.jar.get("zsd_session")!;
      const victim = new FormClient(api.url);
      const form = await victim.get("/dashboard/signin");
      victim.jar.set("zsd_session", planted);
      const signin = await victim.post("/dashboard/signin", {
        _csrf: FormClient.csrf(form.html),
        email: address,
        password: PASSWORD,
      });
      expect(signin.status).toBe(303);
      const issued = victim.jar.get("zsd_session")!;
      expect(issued).not.toBe(planted);
      // The planted token was ended at sign-in; the new one is the victim's account, not the attacker's.
      const replay = await fetch(`${api.url}/dashboard/account`, {
        redirect: "manual",
        headers: { cookie: `zsd_session=${planted}` },
      });
      expect(replay.status).toBe(303);
      expect((await victim.get("/dashboard/account")).html).toContain(address);

      // A made-up token is just as useless.
      const guessed = new FormClient(api.url);
      guessed.jar.set("zsd_session", "attacker-chosen-value");
      expect((await guessed.signIn(address, PASSWORD)).status).toBe(303);
      expect(guessed.jar.get("zsd_session")).not.toBe("attacker-chosen-value");
    });
  });

  describe("keys made on the dashboard, enforced by the API", () => {
    it("shows a CLI-made key of the same account: one accounts row", async () => {
      const { client } = await signedUp();
      const accountId = await accountIdOf(client);
      // What `npm run keys -- create --account <id>` does.
      const cli = await api.keys.create(accountId, "sandbox", "made with the CLI");
      const page = await client.get("/dashboard/keys");
      expect(page.html).toContain("made with the CLI");
      expect(page.html).toContain(`sk_test_…${cli.last4}`);
      const call = await api.call("/v1/keys", { key: cli.secret });
      const listed = (await call.json()) as { data: { id: string }[] };
      expect(listed.data.map((k) => k.id)).toContain(cli.id);
    });

    it("enforces read-only, resources and IP bindings with 403 problems, and revocation with 401", async () => {
      const { client } = await signedUp();
      const { secret, id } = await createKey(client, { readOnly: "on" });
      expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);
      const post = await api.call("/v1/keys", {
        key: secret,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "escalation" }),
      });
      expect(post.status).toBe(403);
      expect(((await post.json()) as { code: string }).code).toBe("key_read_only");

      const restrict = (fields: Record<string, string | string[]>) =>
        client.submit(`/dashboard/keys/${id}`, `/dashboard/keys/${id}/restrictions`, fields);
      expect((await restrict({ resources: ["ledger", "mints"] })).status).toBe(200);
      const keysCall = await api.call("/v1/keys", { key: secret });
      expect(keysCall.status).toBe(403);
      expect(((await keysCall.json()) as { code: string }).code).toBe("key_resource_not_allowed");

      expect((await restrict({ allowedIps: "10.1.2.3\n192.168.0.0/16" })).status).toBe(200);
      const elsewhere = await api.call("/v1/keys", { key: secret });
      expect(elsewhere.status).toBe(403);
      expect(((await elsewhere.json()) as { code: string }).code).toBe("key_ip_not_allowed");
      expect((await restrict({ allowedIps: "10.1.2.3, 127.0.0.0/8" })).status).toBe(200);
      expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);

      const confirm = await client.get(`/dashboard/keys/${id}/revoke`);
      expect(confirm.html).toContain("Yes, revoke this key");
      const revoked = await client.post(`/dashboard/keys/${id}/revoke`, { _csrf: FormClient.csrf(confirm.html) });
      expect(revoked.status).toBe(200);
      const after = await api.call("/v1/keys", { key: secret });
      expect(after.status).toBe(401);
      expect(((await after.json()) as { code: string }).code).toBe("revoked_api_key");
    });

    it("lets a restricted key make only keys as restricted as itself through /v1/keys", async () => {
      const { client } = await signedUp();
      const { secret } = await createKey(client, { resources: ["keys"], allowedIps: "127.0.0.1" });
      const made = await api.call("/v1/keys", {
        key: secret,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "child" }),
      });
      expect(made.status).toBe(201);
      const child = (await made.json()) as { secret: string; id: string };
      const ledger = await api.call("/v1/supply", { key: child.secret });
      expect(ledger.status).toBe(403);
      expect(((await ledger.json()) as { code: string }).code).toBe("key_resource_not_allowed");
      const page = await client.get(`/dashboard/keys/${child.id}`);
      expect(page.html).toContain("resources: keys; IPs: 127.0.0.1");
    });

    it("logs the key's calls (no bodies, no secrets) and counts them in analytics", async () => {
      const { client } = await signedUp();
      const { secret, id } = await createKey(client);
      const call = await api.call("/v1/keys", { key: secret, headers: { "x-request-id": "req_dashboard_test_1" } });
      expect(call.status).toBe(200);
      const refused = await api.call("/v1/keys/key_0000000000000000", {
        key: secret,
        method: "DELETE",
        headers: { "idempotency-key": "idem-123" },
      });
      expect(refused.status).toBe(404);

      const log = await client.get(`/dashboard/requests?key=${id}`);
      expect(log.html).toContain("req_dashboard_test_1");
      expect(log.html).toContain("/v1/keys/:keyId");
      expect(log.html).toContain("idem-123");
      expect(log.html).not.toContain(secret);
      const only404 = await client.get(`/dashboard/requests?key=${id}&status=4xx`);
      expect(only404.html).not.toContain("req_dashboard_test_1");
      expect(only404.html).toContain("/v1/keys/:keyId");
      const byRoute = await client.get(`/dashboard/requests?route=${encodeURIComponent("/v1/keys")}`);
      expect(byRoute.html).toContain("req_dashboard_test_1");
      expect(byRoute.html).not.toContain("idem-123");

      const analytics = await client.get(`/dashboard/analytics?period=24h&key=${id}`);
      expect(/data-total-requests>(\d+)</.exec(analytics.html)![1]).toBe("2");
      expect(analytics.html).toContain("GET /v1/keys");
      expect(analytics.html).toContain("50.0 %");
    });

    it("pages the request log fifty requests at a time, newest first, its filters kept from page to page", async () => {
      const { client } = await signedUp();
      const { id } = await createKey(client);
      const account = await accountIdOf(client);
      // 120 requests of the key, as the analytics flush writes them (the oldest first).
      for (let i = 0; i < 120; i++)
        await api.db.query(
          `INSERT INTO request_log (api_key_id, account_id, at, method, route, status, latency_ms, request_id)
           VALUES ($1, $2, now() - make_interval(secs => $3), 'GET', '/v1/supply', 200, 1.5, $4)`,
          [id, account, 120 - i, `req_page_${String(i).padStart(3, "0")}`],
        );
      const shown = (html: string) => [...html.matchAll(/data-request-id="(req_page_\d+)"/g)].map((m) => m[1]!);
      const link = (html: string, text: string) =>
        new RegExp(`<a href="([^"]+)"[^>]*>${text}</a>`).exec(html)?.[1]?.replaceAll("&amp;", "&");

      const first = await client.get(`/dashboard/requests?key=${id}`);
      expect(shown(first.html)).toEqual(
        Array.from({ length: 50 }, (_, i) => `req_page_${String(119 - i).padStart(3, "0")}`),
      );
      expect(link(first.html, "Newest")).toBeUndefined();
      const older = link(first.html, "Older requests")!;
      expect(older).toMatch(new RegExp(`^/dashboard/requests\\?key=${id}&before=\\d+$`));

      const second = await client.get(older);
      expect(shown(second.html)).toEqual(
        Array.from({ length: 50 }, (_, i) => `req_page_${String(69 - i).padStart(3, "0")}`),
      );
      expect(link(second.html, "Newest")).toBe(`/dashboard/requests?key=${id}`);
      // A request logged meanwhile does not shift the next page.
      await api.db.query(
        `INSERT INTO request_log (api_key_id, account_id, at, method, route, status, latency_ms, request_id)
         VALUES ($1, $2, now(), 'GET', '/v1/supply', 200, 1.5, 'req_page_new')`,
        [id, account],
      );
      const third = await client.get(link(second.html, "Older requests")!);
      expect(shown(third.html)).toEqual(
        Array.from({ length: 20 }, (_, i) => `req_page_${String(19 - i).padStart(3, "0")}`),
      );
      expect(link(third.html, "Older requests")).toBeUndefined();

      // A page address that names no place in the log is refused, as any bad page address is.
      for (const before of ["abc", "0", "-5", "9999999999999999999", "99999999999999999999"]) {
        const refused = await client.get(`/dashboard/requests?key=${id}&before=${before}`);
        expect(refused.status, before).toBe(400);
        expect(refused.html).toContain("before (in the page address)");
      }
    });
  });

  describe("hostile form input: 4xx, nothing changes", () => {
    it("refuses bad key forms", async () => {
      const { client } = await signedUp();
      const accountId = await accountIdOf(client);
      const before = await keyCount(accountId);
      const cases: Record<string, string | string[]>[] = [
        { name: "", environment: "sandbox" },
        { name: "x".repeat(101), environment: "sandbox" },
        { name: "nul\u0000", environment: "sandbox" },
        { name: ["a", "b"], environment: "sandbox" },
        { name: "k", environment: "staging" },
        { name: "k", environment: "sandbox", resources: "everything" },
        { name: "k", environment: "sandbox", resources: ["__proto__"] },
        { name: "k", environment: "sandbox", readOnly: "yes" },
        { name: "k", environment: "sandbox", allowedIps: "300.1.1.1" },
        { name: "k", environment: "sandbox", allowedIps: "10.0.0.0/99" },
        { name: "k", environment: "sandbox", allowedIps: "<script>alert(1)</script>" },
      ];
      for (const fields of cases) {
        const page = await client.submit("/dashboard/keys", "/dashboard/keys", fields);
        expect(page.status, JSON.stringify(fields)).toBe(400);
        expect(page.html).not.toContain("<script>alert(1)</script>");
      }
      // Any name with an environment that is not one: refused, whatever the name holds.
      await fc.assert(
        fc.asyncProperty(
          fc.string({ maxLength: 300 }),
          fc.string({ maxLength: 40 }).filter((e) => e !== "sandbox" && e !== "production"),
          async (name, environment) => {
            const page = await client.submit("/dashboard/keys", "/dashboard/keys", { name, environment });
            expect(page.status).toBe(400);
          },
        ),
        { numRuns: 25, seed: 20261123 },
      );
      expect(await keyCount(accountId)).toBe(before);
    });

    it("refuses JSON, oversized and malformed bodies, and other accounts' keys", async () => {
      const { client } = await signedUp();
      const accountId = await accountIdOf(client);
      const token = FormClient.csrf((await client.get("/dashboard/keys")).html);
      const json = await client.request("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": "application/json", origin: api.url },
        body: JSON.stringify({ _csrf: token, name: "json", environment: "sandbox" }),
      });
      expect(json.status).toBe(415);
      const huge = await client.post("/dashboard/keys", {
        _csrf: token,
        name: "x".repeat(20_000),
        environment: "sandbox",
      });
      expect(huge.status).toBe(413);
      const charset = await client.request("/dashboard/keys", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded; charset=koi8-r", origin: api.url },
        body: `_csrf=${token}&name=k&environment=sandbox`,
      });
      expect(charset.status).toBe(415);
      expect(await keyCount(accountId)).toBe(0);

      // Another account's key: not found, and not revoked.
      const other = await api.keys.create(api.accountId, "sandbox", "someone else's");
      const foreign = await client.post(`/dashboard/keys/${other.id}/revoke`, { _csrf: token });
      expect(foreign.status).toBe(404);
      expect((await api.call("/v1/keys", { key: other.secret })).status).toBe(200);
      const restricted = await client.post(`/dashboard/keys/${other.id}/restrictions`, {
        _csrf: token,
        readOnly: "on",
      });
      expect(restricted.status).toBe(404);
    });

    it("refuses bad sign-up and password forms", async () => {
      const client = new FormClient(api.url);
      for (const [address, password] of [
        ["not-an-email", PASSWORD],
        [email(), "short"],
        [email(), "x".repeat(300)],
        ["a@b.c\u0000", PASSWORD],
      ] as const) {
        expect((await client.signUp(address, password)).status).toBe(400);
      }
      const taken = await signedUp();
      // A taken address gets the same "check your email" as a new one (accounts-mail.test.ts compares them).
      expect((await new FormClient(api.url).signUp(taken.address, PASSWORD)).status).toBe(200);
      const short = await taken.client.submit("/dashboard/account", "/dashboard/account/password", {
        current: PASSWORD,
        next: "short",
      });
      expect(short.status).toBe(400);
      expect((await new FormClient(api.url).signIn(taken.address, PASSWORD)).status).toBe(303);
    });

    it("refuses a sandbox deposit with a bad amount or commitment", async () => {
      const { client } = await signedUp();
      const bad: Record<string, string>[] = [
        { amount: "-1" },
        { amount: "0" },
        { amount: "1.123456789" },
        { amount: "1", noteCommitment: "0xZZ" },
        { amount: "1", noteCommitment: "0" },
      ];
      for (const fields of bad) {
        const page = await client.submit("/dashboard/sandbox", "/dashboard/sandbox/deposits", fields);
        expect(page.status, JSON.stringify(fields)).toBe(400);
      }
      // Valid input without a custody configured: 503, said plainly.
      const page = await client.submit("/dashboard/sandbox", "/dashboard/sandbox/deposits", { amount: "1.5" });
      expect(page.status).toBe(503);
    });
  });
});

describe("request analytics", () => {
  it("estimates quantiles from the histogram within a bucket's width", () => {
    const buckets = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
    // 90 requests near 2 ms, 10 near 300 ms.
    const bucket = (ms: number) => LATENCY_BOUNDS_MS.findIndex((b) => ms <= b);
    buckets[bucket(2)] = 90;
    buckets[bucket(300)] = 10;
    expect(quantile(buckets, 0.5)).toBeGreaterThanOrEqual(2);
    expect(quantile(buckets, 0.5)).toBeLessThan(2 * 1.25);
    expect(quantile(buckets, 0.99)).toBeGreaterThanOrEqual(300);
    expect(quantile(buckets, 0.99)).toBeLessThan(300 * 1.25);
    expect(quantile(new Array<number>(57).fill(0), 0.5)).toBeNull();
  });

  it("holds at most MAX_PENDING_LOG log entries between flushes, the newest, and every request in the counts", async () => {
    const storage = await openStorage("pglite");
    try {
      await storage.db.query("INSERT INTO accounts (id, name) VALUES ('acct_b', 'b')");
      const analytics = new RequestAnalytics(storage.db, { retentionDays: 1, logPerKey: 100_000, flushMs: 60_000 });
      const total = 2 * MAX_PENDING_LOG + 7;
      for (let i = 0; i < total; i++)
        analytics.record({
          apiKeyId: "key_b",
          accountId: "acct_b",
          method: "GET",
          route: "/v1/supply",
          status: 200,
          latencyMs: 1,
          requestId: `req_${i}`,
        });
      await analytics.flush();
      const [logged] = await storage.db.query<{ n: number; first: string }>(
        "SELECT count(*)::int AS n, min(substr(request_id, 5)::int)::text AS first FROM request_log",
      );
      expect(Number(logged!.n)).toBe(MAX_PENDING_LOG);
      expect(Number(logged!.first)).toBe(total - MAX_PENDING_LOG);
      expect((await analytics.report("acct_b", "24h")).total.requests).toBe(total);
    } finally {
      await storage.close();
    }
  });

  it.each(["pglite", "postgres"] as Storage[])(
    "adds up what two replicas flush for the same minute, trims the log per key and prunes past retention (%s)",
    async (kind) => {
      const storage = await openStorage(kind);
      try {
        const db = storage.db;
        await db.query("INSERT INTO accounts (id, name) VALUES ('acct_a', 'a')");
        const options = { retentionDays: 1, logPerKey: 3, flushMs: 60_000 };
        const one = new RequestAnalytics(db, options);
        const two = new RequestAnalytics(db, options);
        const at = new Date();
        const sample = (status: number, latencyMs: number, n: number) => ({
          apiKeyId: "key_a",
          accountId: "acct_a",
          method: "GET",
          route: "/v1/supply",
          status,
          latencyMs,
          requestId: `req_${n}`,
          at,
        });
        one.record(sample(200, 1, 1));
        one.record(sample(200, 2, 2));
        two.record(sample(200, 100, 3));
        two.record(sample(500, 5, 4));
        await one.flush();
        await two.flush();
        const rows = await db.query<{ status: number; count: number }>(
          "SELECT status, count FROM request_stats ORDER BY status",
        );
        expect(rows.map((r) => [Number(r.status), Number(r.count)])).toEqual([
          [200, 3],
          [500, 1],
        ]);
        const report = await one.report("acct_a", "24h");
        expect(report.total.requests).toBe(4);
        expect(report.total.errors).toBe(1);
        expect(report.byRoute[0]!.label).toBe("GET /v1/supply");
        expect(report.total.p99).toBeGreaterThanOrEqual(100);
        // The log keeps the last three of the key.
        const log = await one.requests("acct_a", { limit: 10 });
        expect(log.map((e) => e.requestId)).toEqual(["req_4", "req_3", "req_2"]);

        // Older than the retention: pruned.
        const old = new Date(Date.now() - 2 * 86_400_000);
        one.record({ ...sample(200, 1, 5), at: old });
        await one.flush();
        await one.prune();
        expect(await db.query("SELECT 1 FROM request_stats WHERE minute < now() - interval '1 day'")).toHaveLength(0);
        expect((await one.report("acct_a", "24h")).total.requests).toBe(4);
      } finally {
        await storage.close();
      }
    },
  );
});
