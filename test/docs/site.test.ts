// The documentation site, built once as `npm run docs` builds it (VitePress, offline): every link
// and anchor of every built page and of the README resolves, and every page renders in Debian's
// Chromium (through playwright-core), served as the API serves it at /docs/site/ (its router, its
// CSP), with its title, its sidebar, no error, no request leaving the machine and no sideways
// scroll on a phone; the local search finds a setting.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import express from "express";
import { type Browser, chromium } from "playwright-core";
import { DOCS_SITE_PATH, siteRouter } from "../../api/src/http/openapi/site.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { DOCS, docPages, readDoc } from "../helpers/docs.ts";

const executablePath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => Boolean(p) && existsSync(p!),
);

/** The built file a path under the site names ("/guide/curl.html", "/guide/curl", "/"), or null. */
function fileOf(out: string, path: string): string | null {
  const file = join(out, decodeURIComponent(path));
  for (const candidate of [file, `${file}.html`, join(file, "index.html")])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

/** The ids an HTML page declares, as anchors resolve them. */
const idsCache = new Map<string, Set<string>>();
function idsOf(file: string): Set<string> {
  let ids = idsCache.get(file);
  if (!ids) {
    const html = readFileSync(file, "utf8");
    ids = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]!.replaceAll("&amp;", "&")));
    idsCache.set(file, ids);
  }
  return ids;
}

/** The site path of a page of docs/ ("guide/curl.md" → "/guide/curl.html", "index.md" → "/"). */
const pathOf = (page: string) => (page === "index.md" ? "/" : `/${page.replace(/\.md$/, ".html")}`);

/** The text of a page's first heading, as a reader sees it. */
function titleOf(page: string): string {
  const heading = /^# (.*)$/m.exec(readDoc(page));
  if (!heading) throw new Error(`docs/${page} has no title`);
  return heading[1]!.replace(/[`*_]/g, "").trim();
}

describe("the documentation site", () => {
  let out: string;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "zsd-docs-"));
    // The build `npm run docs` runs, into a directory of its own.
    const build = spawn(
      process.execPath,
      [join(ROOT, "node_modules", "vitepress", "bin", "vitepress.js"), "build", "docs", "--outDir", out],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } },
    );
    let log = "";
    build.stdout.on("data", (d: Buffer) => (log += d));
    build.stderr.on("data", (d: Buffer) => (log += d));
    const code = await new Promise<number | null>((resolve) => build.on("close", resolve));
    if (code !== 0) throw new Error(`vitepress build failed (${code}):\n${log}`);
  });
  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("has a page for every Markdown file of docs/, and each in the sidebar", () => {
    const pages = docPages();
    expect(pages).toContain("guide/curl.md");
    const index = readFileSync(join(out, "index.html"), "utf8");
    for (const page of pages) {
      expect(fileOf(out, pathOf(page)), page).not.toBeNull();
      if (page !== "index.md")
        expect(index, `the sidebar links ${page}`).toContain(`href="${DOCS_SITE_PATH.slice(0, -1)}${pathOf(page)}"`);
    }
  });

  it("resolves every relative link and anchor of every built page", () => {
    const broken: string[] = [];
    const html = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".html"));
    expect(html.length).toBeGreaterThan(20);
    let checked = 0;
    for (const file of html) {
      const text = readFileSync(join(out, file), "utf8");
      const base = new URL(`${DOCS_SITE_PATH}${file}`, "http://site");
      for (const [, link] of text.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
        if (/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(link!)) continue; // another site, mail, data
        const url = new URL(link!.replaceAll("&amp;", "&"), base);
        // Built under the base the API serves it at: a link elsewhere on that server would not be the site's.
        const target = url.pathname.startsWith(DOCS_SITE_PATH)
          ? fileOf(out, url.pathname.slice(DOCS_SITE_PATH.length - 1))
          : null;
        checked++;
        if (!target) broken.push(`${file}: ${link} (no such file under ${DOCS_SITE_PATH})`);
        else if (url.hash && !idsOf(target).has(decodeURIComponent(url.hash.slice(1))))
          broken.push(`${file}: ${link} (no such anchor)`);
      }
    }
    expect(checked).toBeGreaterThan(1000);
    expect(broken).toEqual([]);
  });

  it("resolves every link of the README: files of the repository, pages and anchors of the site", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const broken: string[] = [];
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/i.test(l));
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) {
      const [path, hash] = link.split("#") as [string, string | undefined];
      const file = join(ROOT, path);
      if (!existsSync(file)) {
        broken.push(`${link} (no such file)`);
        continue;
      }
      const page = relative(DOCS, file);
      if (!hash) continue;
      if (page.startsWith("..") || !page.endsWith(".md")) {
        broken.push(`${link} (an anchor outside the site's pages, which the test cannot check)`);
        continue;
      }
      if (!idsOf(fileOf(out, pathOf(page))!).has(hash)) broken.push(`${link} (no such anchor)`);
    }
    expect(broken).toEqual([]);
  });

  // In CI a missing browser is a failure, as in the dashboard's browser tests.
  describe.skipIf(!executablePath && process.env.CI !== "true")("in headless Chromium", () => {
    let server: Server;
    let site: string;
    let browser: Browser;

    beforeAll(async () => {
      if (!executablePath) throw new Error("no chromium: apt-get install -y chromium, or set CHROMIUM_PATH");
      // As the API serves it: its router, its CSP (a page whose own script it blocked would log an error).
      const app = express();
      app.use(siteRouter(out, (_req, _res, next) => next()));
      server = app.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      site = `http://127.0.0.1:${(server.address() as AddressInfo).port}${DOCS_SITE_PATH.slice(0, -1)}`;
      browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
    });
    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => server?.close(resolve));
    });

    it.each([1280, 390])(
      "renders every page at %i px: title, navigation, no error, nothing fetched elsewhere",
      async (width) => {
        const context = await browser.newContext({ viewport: { width, height: 900 } });
        const problems: string[] = [];
        // Nothing leaves the machine: a request to any other host is refused and reported.
        await context.route("**/*", (route) => {
          const url = new URL(route.request().url());
          if (url.hostname === "127.0.0.1") return route.continue();
          problems.push(`fetched ${url.href}`);
          return route.abort();
        });
        const page = await context.newPage();
        page.on("console", (message) => {
          if (message.type() === "error" || message.type() === "warning") problems.push(`console: ${message.text()}`);
        });
        page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
        // Prefetches of linked pages cut short by the next goto are aborted, not failed.
        page.on("requestfailed", (request) => {
          if (request.failure()?.errorText !== "net::ERR_ABORTED") problems.push(`failed: ${request.url()}`);
        });
        page.on("response", (response) => {
          if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
        });
        try {
          for (const doc of docPages()) {
            await page.goto(`${site}${pathOf(doc)}`, { waitUntil: "load" });
            const h1 = page.locator(".vp-doc h1").first();
            await h1.waitFor();
            expect((await h1.innerText()).replace(/\u200b/g, "").trim(), doc).toBe(titleOf(doc));
            const layout = await page.evaluate(() => ({
              sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
              sidebarLinks: document.querySelectorAll(".VPSidebar a.link").length,
            }));
            expect(layout.sideways, `${doc} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
            expect(layout.sidebarLinks, doc).toBeGreaterThan(20);
          }
          if (width === 1280) {
            // Client-side navigation from the home page, as a reader clicks through.
            await page.goto(`${site}/`);
            await page.locator(".VPSidebar a.link", { hasText: "Mint and redeem with curl" }).click();
            await page.waitForURL(/\/guide\/curl\.html$/);
            await expect
              .poll(async () => (await page.locator(".vp-doc h1").first().innerText()).replace(/\u200b/g, "").trim())
              .toBe(titleOf("guide/curl.md"));
            // The local search (no service behind it) finds a setting's page.
            await page.locator(".VPNavBarSearch button").click();
            await page.locator("#localsearch-input").fill("TRUST_PROXY");
            const found = () =>
              page
                .locator(".VPLocalSearchBox a.result")
                .evaluateAll(
                  (links, settings) => links.some((a) => a.getAttribute("href")?.startsWith(settings)),
                  `${DOCS_SITE_PATH}reference/configuration`,
                );
            await expect.poll(found).toBe(true);
          }
        } finally {
          await context.close();
        }
        expect(problems).toEqual([]);
      },
    );
  });
});
