// Accounts as users expect, over HTTP with the mail going through a real SMTP
// server (smtp-server, parsed with mailparser): a sign-up that answers the
// same for a new and a taken address, email verification and password reset
// by single-use mailed links, sign-in limits a stranger cannot use to lock the
// owner out, and the sandbox's own mailbox. PostgreSQL, and Redis for the limits.
import { createHash } from "node:crypto";
import { randomInt } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOGIN_LIMITS } from "../../api/src/http/dashboard/account-routes.ts";
import { type RunningApi, openStorage, startApi } from "../api/helpers.ts";
import { TestMailbox, linkTo } from "../helpers/mailbox.ts";
import { FormClient, shownSecret } from "./client.ts";

const PASSWORD = "correct horse battery";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
// Limits live in a Redis other test runs share: this run's addresses and emails are its own.
const run = `${randomInt(1, 255)}.${randomInt(1, 255)}`;
let counter = 0;
const address = () => `10.${run}.${++counter % 250}`;
const freshAddress = () => `10.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`;
const email = () => `acct${String(++counter).padStart(4, "0")}-${Date.now()}@example.com`;

/** A browser at a client address: the API trusts the loopback proxy's X-Forwarded-For. */
class ClientAt extends FormClient {
  constructor(
    base: string,
    readonly ip = address(),
  ) {
    super(base);
  }
  override request(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
    return super.request(path, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), "x-forwarded-for": this.ip },
    });
  }
}

/** The CSRF token of the form posting to `action` (a signed-in page also has the sign-out form's). */
const csrfOf = (html: string, action: string) => {
  const form = html.slice(html.indexOf(`action="${action}"`));
  return FormClient.csrf(form);
};

const alertText = (html: string) => /role="alert"[\s\S]*?<li>([^<]+)<\/li>/.exec(html)?.[1];

describe("dashboard accounts by mail (PostgreSQL, Redis, a real SMTP server)", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let mailbox: TestMailbox;
  let redis: Redis;

  beforeAll(async () => {
    mailbox = await TestMailbox.start();
    storage = await openStorage("postgres");
    redis = new Redis(REDIS_URL, { enableOfflineQueue: false });
    await new Promise((resolve, reject) => redis.once("ready", resolve).once("error", reject));
    api = await startApi(
      storage.db,
      {
        SMTP_URL: mailbox.url,
        MAIL_FROM: "ZSD test <dashboard@zsd.example>",
        TRUST_PROXY: "loopback",
        SANDBOX_BASE_URL: "https://sandbox.zsd.example/v1",
      },
      { redis },
    );
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    await redis?.quit();
    await mailbox?.close();
  });

  const signUp = async (address: string, password = PASSWORD) => {
    const page = await new ClientAt(api.url).signUp(address, password);
    expect(page.status, page.html).toBe(200);
  };
  const signedIn = async (address: string, password = PASSWORD) => {
    const client = new ClientAt(api.url);
    expect((await client.signIn(address, password)).status).toBe(303);
    return client;
  };
  const verifiedAt = async (address: string) =>
    (
      await api.db.query<{ email_verified_at: Date | null }>(
        "SELECT email_verified_at FROM accounts WHERE email = $1",
        [address],
      )
    )[0]!.email_verified_at;

  it("answers a sign-up alike for a new and a taken address, and mails each what concerns them", async () => {
    const taken = email();
    await signUp(taken);
    await mailbox.waitFor(taken, /Confirm your email/);
    const fresh = email();
    expect(fresh.length).toBe(taken.length);

    // Raw responses, to compare every header.
    const post = async (address: string) => {
      const client = new ClientAt(api.url);
      const form = await client.get("/dashboard/signup");
      return fetch(`${api.url}/dashboard/signup`, {
        method: "POST",
        redirect: "manual",
        headers: {
          cookie: client.cookieHeader,
          origin: api.url,
          "x-forwarded-for": client.ip,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({
          _csrf: FormClient.csrf(form.html),
          email: address,
          password: "another long passphrase",
        }).toString(),
      });
    };
    const [forNew, forTaken] = [await post(fresh), await post(taken)];
    expect(forNew.status).toBe(200);
    expect(forTaken.status).toBe(forNew.status);
    const headers = (r: Response) =>
      [...r.headers].filter(([name]) => !["date", "etag", "x-request-id"].includes(name)).sort();
    expect(headers(forTaken)).toEqual(headers(forNew));
    const [newBody, takenBody] = [await forNew.text(), await forTaken.text()];
    expect(newBody).toContain("Check your email");
    expect(takenBody.replaceAll(taken, "EMAIL")).toBe(newBody.replaceAll(fresh, "EMAIL"));

    // The new address gets its link (naming the configured origin); the owner of the taken one, a warning.
    const confirm = await mailbox.waitFor(fresh, /Confirm your email/);
    expect(confirm.from).toContain("dashboard@zsd.example");
    expect(confirm.text).toContain("https://sandbox.zsd.example/dashboard/verify?token=");
    const warning = await mailbox.waitFor(taken, /Someone tried to sign up/);
    expect(warning.text).not.toContain("token=");
    // The attempt changed nothing: the owner's password still signs in, the attempted one does not.
    expect((await new ClientAt(api.url).signIn(taken, "another long passphrase")).status).toBe(401);
    await signedIn(taken);
  });

  it("verifies the address by a click on the mailed link, once; production keys wait for it", async () => {
    const address = email();
    await signUp(address);
    const client = await signedIn(address);
    // Unverified: the sandbox works, production keys do not.
    const refused = await client.submit("/dashboard/keys", "/dashboard/keys", {
      name: "live",
      environment: "production",
    });
    expect(refused.status).toBe(403);
    expect(alertText(refused.html)).toMatch(/Verify your email before making production keys/);
    expect(await api.db.query("SELECT 1 FROM api_keys WHERE name = 'live'")).toHaveLength(0);
    const sandbox = await client.submit("/dashboard/keys", "/dashboard/keys", {
      name: "test",
      environment: "sandbox",
    });
    expect(sandbox.status).toBe(200);
    expect((await client.get("/dashboard/account")).html).toContain("not verified");

    const link = linkTo(await mailbox.waitFor(address, /Confirm your email/), "/dashboard/verify");
    const token = new URL(link, api.url).searchParams.get("token")!;
    // Only a hash of the secret is kept.
    const [row] = await api.db.query<{ id: string; secret_hash: string }>(
      "SELECT t.id, t.secret_hash FROM account_tokens t JOIN accounts a ON a.id = t.account_id WHERE a.email = $1",
      [address],
    );
    const secret = token.split(".")[1]!;
    expect(row!.secret_hash).toBe(createHash("sha256").update(secret).digest("hex"));
    expect(JSON.stringify(await api.db.query("SELECT * FROM account_tokens"))).not.toContain(secret);

    // A tampered secret opens nothing.
    const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    expect((await client.get(`/dashboard/verify?token=${tampered}`)).status).toBe(400);
    // The link's GET shows a button and verifies nothing (mail scanners fetch links).
    const form = await client.get(link);
    expect(form.status).toBe(200);
    expect(await verifiedAt(address)).toBeNull();
    const tamperedPost = await client.post("/dashboard/verify", {
      _csrf: csrfOf(form.html, "/dashboard/verify"),
      token: tampered,
    });
    expect(tamperedPost.status).toBe(400);
    expect(await verifiedAt(address)).toBeNull();
    const confirmed = await client.post("/dashboard/verify", { _csrf: csrfOf(form.html, "/dashboard/verify"), token });
    expect(confirmed.status).toBe(200);
    expect(confirmed.html).toContain("Email verified.");
    expect(await verifiedAt(address)).not.toBeNull();
    // Once only.
    expect((await client.get(link)).status).toBe(400);
    expect(
      (await client.post("/dashboard/verify", { _csrf: csrfOf(form.html, "/dashboard/verify"), token })).status,
    ).toBe(400);

    const live = await client.submit("/dashboard/keys", "/dashboard/keys", { name: "live", environment: "production" });
    expect(live.status).toBe(200);
    expect(shownSecret(live.html)).toMatch(/^sk_live_/);
  });

  it("refuses an expired verification link and sends a new one from the Account tab", async () => {
    const address = email();
    await signUp(address);
    const client = await signedIn(address);
    const first = linkTo(await mailbox.waitFor(address, /Confirm your email/), "/dashboard/verify");
    await api.db.query(
      "UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE account_id = (SELECT id FROM accounts WHERE email = $1)",
      [address],
    );
    const expired = await client.get(first);
    expect(expired.status).toBe(400);
    expect(expired.html).toContain("expired");

    const resent = await client.submit("/dashboard/account", "/dashboard/account/verification", {});
    expect(resent.status).toBe(200);
    await expect.poll(() => mailbox.to(address).length, { timeout: 15_000 }).toBe(2);
    const second = linkTo(mailbox.to(address)[1]!, "/dashboard/verify");
    expect(second).not.toBe(first);
    const form = await client.get(second);
    expect(form.status).toBe(200);
    const token = new URL(second, api.url).searchParams.get("token")!;
    expect(
      (await client.post("/dashboard/verify", { _csrf: csrfOf(form.html, "/dashboard/verify"), token })).status,
    ).toBe(200);
    expect(await verifiedAt(address)).not.toBeNull();
  });

  it("resets a password by a mailed link: every session signed out, the link used once; an unknown address gets the same page and no mail", async () => {
    const address = email();
    await signUp(address);
    const [one, two] = [await signedIn(address), await signedIn(address)];
    const unknown = email();

    const ask = async (who: string) => {
      const client = new ClientAt(api.url);
      const form = await client.get("/dashboard/reset");
      return client.post("/dashboard/reset", { _csrf: FormClient.csrf(form.html), email: who });
    };
    const [forAccount, forNobody] = [await ask(address), await ask(unknown)];
    expect(forAccount.status).toBe(200);
    expect(forNobody.status).toBe(200);
    expect(forNobody.html.replaceAll(unknown, "EMAIL")).toBe(forAccount.html.replaceAll(address, "EMAIL"));
    const mail = await mailbox.waitFor(address, /Reset your ZSD dashboard password/);
    await api.mailer.idle();
    expect(mailbox.to(unknown)).toHaveLength(0);

    const link = linkTo(mail, "/dashboard/reset/confirm");
    const token = new URL(link, api.url).searchParams.get("token")!;
    const browser = new ClientAt(api.url);
    const form = await browser.get(link);
    expect(form.status).toBe(200);
    // A bad new password spends nothing: the link still works after.
    const short = await browser.post("/dashboard/reset/confirm", {
      _csrf: FormClient.csrf(form.html),
      token,
      password: "short",
    });
    expect(short.status).toBe(400);
    const done = await browser.post("/dashboard/reset/confirm", {
      _csrf: FormClient.csrf(form.html),
      token,
      password: "a brand new passphrase",
    });
    expect(done.status).toBe(200);
    expect(done.html).toContain("every session signed out");

    for (const client of [one, two]) expect((await client.get("/dashboard/keys")).status).toBe(303);
    expect((await new ClientAt(api.url).signIn(address, PASSWORD)).status).toBe(401);
    await signedIn(address, "a brand new passphrase");
    // The link reached the mailbox: the address is verified. It works once.
    expect(await verifiedAt(address)).not.toBeNull();
    expect((await browser.get(link)).status).toBe(400);
    const again = await browser.post("/dashboard/reset/confirm", {
      _csrf: FormClient.csrf(form.html),
      token,
      password: "a third passphrase here",
    });
    expect(again.status).toBe(400);
    await mailbox.waitFor(address, /password was reset/);

    // A reset link lasts an hour.
    expect((await ask(address)).status).toBe(200);
    await expect
      .poll(() => mailbox.to(address).filter((m) => /Reset your/.test(m.subject)).length, { timeout: 15_000 })
      .toBe(2);
    const later = linkTo(
      mailbox.to(address).filter((m) => /Reset your/.test(m.subject))[1]!,
      "/dashboard/reset/confirm",
    );
    await api.db.query(
      "UPDATE account_tokens SET expires_at = now() - interval '1 second' WHERE purpose = 'reset_password'",
    );
    expect((await browser.get(later)).status).toBe(400);
  });

  it("limits sign-in per email and address: a stranger's guesses do not lock the owner out elsewhere; a spread-out attack meets the per-email limit, and a reset lifts it", async () => {
    const owner = email();
    await signUp(owner);
    const stranger = new ClientAt(api.url);
    const { points } = LOGIN_LIMITS.perEmailAndAddress;
    for (let i = 0; i < points; i++) expect((await stranger.signIn(owner, `guess number ${i}`)).status).toBe(401);
    const stopped = await stranger.signIn(owner, `guess number ${points}`);
    expect(stopped.status).toBe(429);
    expect((await stranger.signIn(owner, PASSWORD)).status).toBe(429);

    // The owner, from their own address, is not locked out.
    await signedIn(owner);

    // Guesses from many addresses: each address is within its own budget, the email's is spent.
    const spent = points + 1;
    const remaining = LOGIN_LIMITS.perEmail.points - spent;
    for (let i = 0; i < remaining; i += 4) {
      const batch = Array.from({ length: Math.min(4, remaining - i) }, (_, j) =>
        new ClientAt(api.url, freshAddress()).signIn(owner, `spread guess ${i + j}`),
      );
      for (const page of await Promise.all(batch)) expect(page.status).toBe(401);
    }
    expect((await new ClientAt(api.url, freshAddress()).signIn(owner, "one guess too many")).status).toBe(429);
    const locked = await new ClientAt(api.url, freshAddress()).signIn(owner, PASSWORD);
    expect(locked.status).toBe(429);
    expect(alertText(locked.html)).toMatch(/Too many sign-in attempts/);

    // The owner's way out: a reset link, which proves the mailbox, clears the per-email count.
    const client = new ClientAt(api.url);
    const form = await client.get("/dashboard/reset");
    expect((await client.post("/dashboard/reset", { _csrf: FormClient.csrf(form.html), email: owner })).status).toBe(
      200,
    );
    const link = linkTo(await mailbox.waitFor(owner, /Reset your/), "/dashboard/reset/confirm");
    const resetForm = await client.get(link);
    const reset = await client.post("/dashboard/reset/confirm", {
      _csrf: FormClient.csrf(resetForm.html),
      token: new URL(link, api.url).searchParams.get("token")!,
      password: "the owner's new passphrase",
    });
    expect(reset.status).toBe(200);
    expect((await new ClientAt(api.url, freshAddress()).signIn(owner, "the owner's new passphrase")).status).toBe(303);
  });
});

describe("the sandbox's mailbox (no SMTP_URL: an SMTP capture in the API)", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  it("shows the mail this sandbox sent to a browser on this machine, and to no one else", async () => {
    const address = email();
    const client = new FormClient(api.url);
    const page = await client.signUp(address, PASSWORD);
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/dashboard/mail"');
    let mailbox = await client.get("/dashboard/mail");
    for (let i = 0; i < 300 && !mailbox.html.includes(address); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      mailbox = await client.get("/dashboard/mail");
    }
    expect(mailbox.status).toBe(200);
    expect(mailbox.html).toContain("Confirm your email for the ZSD dashboard");
    // The mail names the configured origin; its link opens on this server.
    expect(mailbox.html).toMatch(/>http:\/\/127\.0\.0\.1:3000\/dashboard\/verify\?token=/);
    const href = /href="(\/dashboard\/verify\?token=[^"]+)"/.exec(mailbox.html)![1]!;

    // Through a proxy, or named by another host, the mailbox is not there.
    const proxied = await fetch(`${api.url}/dashboard/mail`, { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(proxied.status).toBe(404);
    expect(await proxied.text()).not.toContain(address);

    // The captured link verifies the account.
    const form = await client.get(href.replaceAll("&amp;", "&"));
    expect(form.status).toBe(200);
    const token = new URL(href, api.url).searchParams.get("token")!;
    expect(
      (await client.post("/dashboard/verify", { _csrf: csrfOf(form.html, "/dashboard/verify"), token })).status,
    ).toBe(200);
    const [row] = await api.db.query<{ email_verified_at: Date | null }>(
      "SELECT email_verified_at FROM accounts WHERE email = $1",
      [address],
    );
    expect(row!.email_verified_at).not.toBeNull();
  });
});
