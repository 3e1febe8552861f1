// The dashboard's tables fit the page in a real browser (Debian's chromium
// through playwright-core) at a laptop's 1280 px and a phone's 390 px: no
// table scrolls sideways and neither does the page (the request log ran past
// its column at 1280 px), and no word is cut across two lines to make them fit
// (a phone showed "Nam e"). Screenshots go to docs/dashboard/.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountService } from "../../api/src/domain/accounts/accounts.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { type RunningApi, json, openStorage, startApi } from "../api/helpers.ts";

const executablePath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => Boolean(p) && existsSync(p!),
);
const SCREENSHOTS = join(ROOT, "docs", "dashboard");
const EMAIL = "tables@example.com";
const PASSWORD = "a long test passphrase";

// In CI a missing browser is a failure (browser.test.ts says how to install it); here the file says why it skipped.
describe.skipIf(!executablePath && process.env.CI !== "true")("dashboard tables in headless Chromium", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let browser: Browser;
  const paths = ["/dashboard/keys", "/dashboard/requests", "/dashboard/analytics", "/dashboard/agents"];

  beforeAll(async () => {
    if (!executablePath) throw new Error("no chromium: apt-get install -y chromium, or set CHROMIUM_PATH");
    mkdirSync(SCREENSHOTS, { recursive: true });
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
    await new AccountService(storage.db, 12).setLogin(api.accountId, EMAIL, PASSWORD);
    // Rows as wide as they come: long key names, requests with idempotency keys and long ids, errors,
    // an agent with a long webhook address and its delivery log.
    const key = await api.keys.create(api.accountId, "sandbox", "a key with a rather long name for a table cell");
    paths.push(`/dashboard/keys/${key.id}`);
    for (let i = 0; i < 6; i++) {
      await api.call(i % 2 ? "/v1/keys" : "/v1/mints/mint_00000000000000000000", {
        key: key.secret,
        headers: {
          "idempotency-key": `3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f6${i}`,
          "x-request-id": `req_a_rather_long_request_id_000${i}`,
        },
      });
    }
    const agent = await api.call("/v1/agents/register", {
      key: key.secret,
      ...json({
        name: "screening desk with a long name",
        webhookUrl: "http://127.0.0.1:9/a/rather/long/path/for/the/compliance/webhook/receiver?token=abcdef",
        events: ["mint.queued", "mint.held", "alert.raised", "redemption.requested"],
        role: "screener",
      }),
    });
    const { agentId } = (await agent.json()) as { agentId: string };
    await api.call(`/v1/agents/${agentId}/test`, { key: key.secret, method: "POST" });
    paths.push(`/dashboard/agents/${agentId}`);
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await storage?.close();
  });

  it.each([1280, 390])("fits every table at %i px", async (width) => {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: "light" });
    const page = await context.newPage();
    try {
      await page.goto(`${api.url}/dashboard/signin`);
      await page.getByLabel("Email").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(/\/dashboard\/keys$/);
      for (const path of paths) {
        await page.goto(`${api.url}${path}`);
        const found = await page.evaluate(() => {
          const over = (el: Element) => el.scrollWidth - el.clientWidth;
          const tables = document.querySelectorAll("table");
          return {
            tables: tables.length,
            page: over(document.documentElement),
            scrolling: [...document.querySelectorAll("figure.scroll")].map(over).filter((d) => d > 0),
          };
        });
        // Every page but a key's own has a table to check.
        if (!path.startsWith("/dashboard/keys/")) expect(found.tables, path).toBeGreaterThan(0);
        expect({ path, page: found.page, scrolling: found.scrolling }).toEqual({ path, page: 0, scrolling: [] });
        // Words wrap between words: none is cut across two lines ("Nam e", "Rev oke"). Ids, keys and addresses
        // (in code) may break anywhere: one of them can be wider than a phone.
        const broken = await page.evaluate(() => {
          const cut: string[] = [];
          for (const cell of document.querySelectorAll("table th, table td")) {
            // A head kept for screen readers only (a phone's stacked rows name each cell) is not read on screen.
            if (cell.closest("thead") && cell.closest("thead")!.getBoundingClientRect().width <= 1) continue;
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              if (node.parentElement?.closest("code, .visually-hidden")) continue;
              for (const word of (node.textContent ?? "").matchAll(/\S+/g)) {
                const range = document.createRange();
                range.setStart(node, word.index!);
                range.setEnd(node, word.index! + word[0].length);
                const lines = new Set(
                  [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
                );
                if (lines.size > 1) cut.push(word[0]);
              }
            }
          }
          return cut;
        });
        expect({ path, broken }).toEqual({ path, broken: [] });
      }
      await page.goto(`${api.url}/dashboard/requests`);
      await page.screenshot({ path: join(SCREENSHOTS, `request-log-${width}.png`), fullPage: true });
    } finally {
      await context.close();
    }
  });
});
