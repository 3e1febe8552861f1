// The dashboard in a real browser: Debian's chromium driven by playwright-core.
// A developer signs up, makes a sandbox key, calls the API with it, finds the
// call in the request log and in analytics, makes the key read-only and sees a
// POST refused, revokes it and sees the next call refused. A page on another
// origin cannot post the dashboard's forms, and a session token planted before
// sign-in is never the one signed in. Screenshots go to docs/dashboard/.
import { existsSync, mkdirSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { SANDBOX_REFUSED_ADDRESS } from "../../api/src/sandbox/refused-address.ts";
import { type System, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, json, openStorage, startRelayApi } from "../api/helpers.ts";

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/lib/chromium/chromium",
].filter((p): p is string => Boolean(p));
const executablePath = CANDIDATES.find((p) => existsSync(p));
const MISSING =
  `no chromium found (looked at ${CANDIDATES.join(", ")}): install Debian's package ` +
  "(`apt-get install -y chromium`, as .ci/run does) or set CHROMIUM_PATH";

const SCREENSHOTS = join(ROOT, "docs", "dashboard");
const PASSWORD = "a long test passphrase";

// In CI a missing browser is a failure, never a quiet skip; on a developer's machine the file says why it skipped.
if (!executablePath && process.env.CI !== "true") console.warn(`browser tests skipped: ${MISSING}`);

describe.skipIf(!executablePath && process.env.CI !== "true")("developer dashboard in headless Chromium", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let attacker: Server;
  let attackerUrl: string;
  let secret: string;
  let keyId: string;
  let system: System;

  beforeAll(async () => {
    if (!executablePath) throw new Error(`browser tests cannot run: ${MISSING}`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    storage = await openStorage("postgres");
    // Contracts and the local custody, so that the sandbox's deposit simulator records a real deposit.
    system = await deploySystem();
    api = await startRelayApi(system, storage.db, { ANALYTICS_FLUSH_MS: "600000" });
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
    context = await browser.newContext({ viewport: { width: 1100, height: 800 }, colorScheme: "light" });
    page = await context.newPage();
    // Another origin (another port of the same host: same-site, so the Lax cookie does travel) whose page posts the dashboard's forms.
    attacker = createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><form id="f" method="post" action="${api.url}/dashboard/keys">
        <input name="name" value="planted by another site"><input name="environment" value="sandbox">
        <input name="_csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`);
    }).listen(0, "127.0.0.1");
    await new Promise((resolve) => attacker.once("listening", resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await api?.close();
    await storage?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const sessionCookie = async () => (await context.cookies()).find((c) => c.name === "zsd_session")?.value;

  it("signs up, confirms the email from the sandbox's mailbox, and signs in, with a session token planted beforehand never promoted", async () => {
    await page.goto(`${api.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/signin");
    await page.getByRole("link", { name: "Create one" }).click();
    // What an attacker who can set a cookie for this host would plant before the victim signs up.
    await context.addCookies([{ name: "zsd_session", value: "planted-by-attacker", url: `${api.url}/dashboard` }]);
    await page.getByLabel("Email").fill("dev@example.com");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    // The sandbox's SMTP capture has the verification mail: its link, then the button, confirm the address.
    await page.getByRole("link", { name: "mailbox" }).click();
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole("link", { name: /\/dashboard\/verify\?token=/ }).count();
      })
      .toBe(1);
    await shot("mailbox");
    await page.getByRole("link", { name: /\/dashboard\/verify\?token=/ }).click();
    await page.getByRole("button", { name: "Confirm my email" }).click();
    await page.getByText("Email verified: sign in to continue.").waitFor();
    expect(await page.getByLabel("Email").inputValue()).toBe("dev@example.com");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/dashboard\/keys$/);
    const issued = await sessionCookie();
    expect(issued).toBeTruthy();
    expect(issued).not.toBe("planted-by-attacker");
    const cookie = (await context.cookies()).find((c) => c.name === "zsd_session")!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe("Lax");
  });

  it("creates a sandbox key and shows its secret once, with a copy button", async () => {
    // By keyboard: the label names the field, Enter submits the form.
    await page.getByLabel("Name", { exact: true }).focus();
    await page.keyboard.type("browser test key");
    await page.keyboard.press("Enter");
    const output = page.locator("output[data-secret]");
    await output.waitFor();
    secret = (await output.textContent())!.trim();
    expect(secret).toMatch(/^sk_test_[0-9A-Za-z]{48}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("[data-copied]").textContent()).toMatch(/Copied|Selected/);
    await shot("key-created");
    keyId = (await page.getByRole("link", { name: "browser test key" }).getAttribute("href"))!.split("/").pop()!;
    // Listed by prefix and last four; the secret is on no other page.
    await page.goto(`${api.url}/dashboard/keys`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByRole("cell", { name: `sk_test_…${secret.slice(-4)}` }).count()).toBe(1);
  });

  it("shows a call made with the key in the request log and in analytics", async () => {
    const call = await api.call("/v1/keys", { key: secret, headers: { "x-request-id": "req_from_the_browser_test" } });
    expect(call.status).toBe(200);
    const missing = await api.call("/v1/mints/mint_00000000000000000000", { key: secret });
    expect(missing.status).toBeGreaterThanOrEqual(400);

    await page.getByRole("link", { name: "Request log" }).click();
    const row = page.locator('tr[data-request-id="req_from_the_browser_test"]');
    await row.waitFor();
    expect(await row.textContent()).toContain("/v1/keys");
    expect(await row.textContent()).toContain("200");
    // Filtered by status class, the 200 goes and the error stays.
    await page.getByLabel("Status").fill("4xx");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/status=4xx/);
    expect(await page.locator('tr[data-request-id="req_from_the_browser_test"]').count()).toBe(0);
    expect(await page.locator("tbody tr").count()).toBeGreaterThan(0);
    await page.getByLabel("Status").fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await shot("request-log");

    await page.getByRole("link", { name: "Analytics" }).click();
    expect(await page.locator("[data-total-requests]").textContent()).toBe("2");
    // uPlot drew the series into a canvas.
    await page.locator("#chart canvas").first().waitFor();
    expect(await page.getByRole("rowheader", { name: "GET /v1/keys" }).count()).toBe(1);
    await page.getByLabel("Period").selectOption("7d");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/period=7d/);
    expect(await page.locator("[data-total-requests]").textContent()).toBe("2");
    await shot("analytics");
  });

  it("makes the key read-only: a GET passes, a POST is refused with 403 key_read_only", async () => {
    await page.goto(`${api.url}/dashboard/keys/${keyId}`);
    await page.getByLabel("Read-only (GET requests only)").check();
    await page.getByRole("button", { name: "Save restrictions" }).click();
    await page.getByText("Restrictions saved.").waitFor();
    expect(await page.getByText("read-only").first().isVisible()).toBe(true);

    expect((await api.call("/v1/keys", { key: secret })).status).toBe(200);
    const post = await api.call("/v1/keys", { key: secret, ...json({ name: "should not exist" }) });
    expect(post.status).toBe(403);
    expect(((await post.json()) as { code: string }).code).toBe("key_read_only");
  });

  it("refuses a form posted by a page on another origin", async () => {
    const before = await api.db.query("SELECT id FROM api_keys WHERE name = 'planted by another site'");
    expect(before).toHaveLength(0);
    const answer = page.waitForResponse(
      (r) => r.url() === `${api.url}/dashboard/keys` && r.request().method() === "POST",
    );
    await page.goto(attackerUrl);
    expect((await answer).status()).toBe(403);
    expect(await api.db.query("SELECT id FROM api_keys WHERE name = 'planted by another site'")).toHaveLength(0);
  });

  it("lists agents with their delivery log and redelivers", async () => {
    const registered = await api.call("/v1/agents/register", {
      key: api.secret,
      ...json({ name: "desk", webhookUrl: "http://127.0.0.1:9/hook", events: ["alert.raised"], role: "observer" }),
    });
    expect(registered.status).toBe(201);
    // The agent is on the test account; the browser's account sees its own, none yet.
    await page.goto(`${api.url}/dashboard/agents`);
    expect(await page.getByText("No agents yet.").isVisible()).toBe(true);

    const accountId = (
      await api.db.query<{ id: string }>("SELECT id FROM accounts WHERE email = 'dev@example.com'")
    )[0]!.id;
    const own = await api.keys.create(accountId, "sandbox", "agents");
    const agent = (await (
      await api.call("/v1/agents/register", {
        key: own.secret,
        ...json({ name: "my desk", webhookUrl: "http://127.0.0.1:9/hook", events: ["alert.raised"], role: "observer" }),
      })
    ).json()) as { agentId: string };
    expect((await api.call(`/v1/agents/${agent.agentId}/test`, { key: own.secret, method: "POST" })).status).toBe(202);
    // No webhook worker runs here: the ping is marked failed as the worker would after its attempts.
    await api.db.query("UPDATE webhook_deliveries SET status = 'failed', attempts = 1 WHERE agent_id = $1", [
      agent.agentId,
    ]);

    await page.goto(`${api.url}/dashboard/agents`);
    await page.getByRole("link", { name: "my desk" }).click();
    expect(await page.getByRole("cell", { name: "failed" }).count()).toBe(1);
    await page.getByRole("button", { name: "Redeliver" }).click();
    await page.getByText("Delivery queued again.").waitFor();
    expect(await page.getByRole("cell", { name: "pending" }).count()).toBe(1);
  });

  it("simulates a sandbox deposit from a form and shows the magic values", async () => {
    await page.getByRole("link", { name: "Sandbox" }).click();
    expect(await page.getByText(".13", { exact: true }).isVisible()).toBe(true);
    expect(await page.getByText(".14", { exact: true }).isVisible()).toBe(true);
    expect(await page.getByText("dead", { exact: true }).isVisible()).toBe(true);
    // The failing-payout address, as the sandbox's node refuses it, and what it is for.
    await page.getByRole("heading", { name: "A payout custody cannot pay" }).waitFor();
    expect(await page.locator("output#failing-payout-address").textContent()).toBe(SANDBOX_REFUSED_ADDRESS);
    expect(await page.getByText("so that you can try a redirect").isVisible()).toBe(true);
    await page.getByLabel("Amount (ZEC)").fill("1.5");
    await page.getByRole("button", { name: "Record deposit" }).click();
    await page.getByRole("heading", { name: "Deposit recorded" }).waitFor();
    // A note was made for the developer (shown once) and its deposit recorded on-chain by the attestor.
    expect((await page.locator("output#note").textContent())!.length).toBeGreaterThan(40);
    const leafIndex = Number(await page.locator("dt:has-text('Leaf index') + dd").textContent());
    expect(Number(await system.read.registry.read.size())).toBe(leafIndex + 1);
    await shot("sandbox-deposit");
  });

  it("labels every field, and fits a phone-sized screen", async () => {
    for (const path of ["/dashboard/keys", `/dashboard/keys/${keyId}`, "/dashboard/requests", "/dashboard/analytics"]) {
      await page.goto(`${api.url}${path}`);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLInputElement>("input:not([type=hidden]), select, textarea")]
          .filter((el) => el.labels === null || el.labels.length === 0)
          .map((el) => el.name),
      );
      expect(unlabelled, path).toEqual([]);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of ["/dashboard/keys", "/dashboard/analytics", "/dashboard/requests", "/dashboard/sandbox"]) {
      await page.goto(`${api.url}${path}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await page.goto(`${api.url}/dashboard/keys`);
    await shot("phone-keys");
    await page.setViewportSize({ width: 1100, height: 800 });
  });

  it("revokes the key after a confirmation: the next call is refused", async () => {
    await page.goto(`${api.url}/dashboard/keys/${keyId}`);
    await page.getByRole("link", { name: "Revoke this key…" }).click();
    await page.getByRole("button", { name: "Yes, revoke this key" }).click();
    await page.getByText("revoked.").waitFor();
    const after = await api.call("/v1/keys", { key: secret });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe("revoked_api_key");
    await shot("keys");
  });

  it("signs out", async () => {
    const token = await sessionCookie();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/dashboard\/signin$/);
    const replay = await fetch(`${api.url}/dashboard/keys`, {
      redirect: "manual",
      headers: { cookie: `zsd_session=${token}` },
    });
    expect(replay.status).toBe(303);
  });
});
