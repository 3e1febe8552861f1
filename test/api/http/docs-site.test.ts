// The API serves the documentation site at /docs/site/ once `npm run docs` has built it (a site of a
// few files stands in for the build here; test/docs/site.test.ts serves the real one through the same
// router in Chromium): pages by their links and clean paths, each with a CSP naming its own inline
// scripts by hash, assets cached for good, and a 404 problem for what is not there, for a path that
// climbs out of the site, and for a server where it was never built. The reference and the problem
// page link into it.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOCS } from "../../helpers/docs.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

const INLINE = 'document.documentElement.classList.add("dark")';
const PAGE = `<!doctype html><html><head><script>${INLINE}</script><script type="module" src="/docs/site/assets/app.1a2b.js"></script></head><body><a href="/docs/site/guide/curl.html">curl</a></body></html>`;

describe("the documentation site at /docs/site/", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let unbuilt: RunningApi;
  let site: string;

  beforeAll(async () => {
    site = mkdtempSync(join(tmpdir(), "zsd-site-"));
    mkdirSync(join(site, "guide"));
    mkdirSync(join(site, "assets"));
    writeFileSync(join(site, "index.html"), PAGE);
    writeFileSync(join(site, "guide", "curl.html"), PAGE.replace("curl</a>", "curl, again</a>"));
    writeFileSync(join(site, "assets", "app.1a2b.js"), "export {};\n");
    writeFileSync(join(site, "hashmap.json"), "{}");
    storage = await openStorage("postgres");
    api = await startApi(storage.db, { DOCS_SITE_DIRECTORY: site });
    unbuilt = await startApi(storage.db, { DOCS_SITE_DIRECTORY: join(site, "never-built") });
  });
  afterAll(async () => {
    await api?.close();
    await unbuilt?.close();
    await storage?.close();
    rmSync(site, { recursive: true, force: true });
  });

  it("serves its pages with a CSP that allows their own inline scripts by hash, nothing else inline", async () => {
    const home = await api.call("/docs/site/", { key: null });
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await home.text()).toBe(PAGE);
    const csp = home.headers.get("content-security-policy")!;
    const hash = createHash("sha256").update(INLINE).digest("base64");
    expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline|https?:/);
    // A page by its link and by its clean path; /docs/site goes to /docs/site/, where relative links resolve.
    for (const path of ["/docs/site/guide/curl.html", "/docs/site/guide/curl"]) {
      const page = await api.call(path, { key: null });
      expect(page.status, path).toBe(200);
      expect(await page.text(), path).toContain("curl, again");
    }
    const bare = await api.call("/docs/site", { key: null, redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/docs/site/");
    // Assets are named by their content: kept for good. Other files are asked again.
    const asset = await api.call("/docs/site/assets/app.1a2b.js", { key: null });
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    const json = await api.call("/docs/site/hashmap.json", { key: null });
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    expect(json.headers.get("cache-control")).toBe("no-cache");
  });

  it("answers a 404 problem for a page it does not have, or a path that climbs out of the site", async () => {
    for (const path of [
      "/docs/site/guide/nothing.html",
      "/docs/site/guide/",
      "/docs/site/%2e%2e/%2e%2e/package.json",
      "/docs/site/..%2f..%2fpackage.json",
    ]) {
      const refused = await api.call(path, { key: null });
      expect(refused.status, path).toBe(404);
      expect(refused.headers.get("content-type"), path).toMatch(/^application\/problem\+json/);
      expect(((await refused.json()) as { code: string }).code, path).toBe("not_found");
    }
    const malformed = await api.call("/docs/site/%E0%A4%A", { key: null });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe("malformed_path");
  });

  it("says how to build it where it was never built", async () => {
    const refused = await unbuilt.call("/docs/site/", { key: null });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const body = (await refused.json()) as { code: string; detail: string };
    expect(body.code).toBe("not_found");
    expect(body.detail).toContain("npm run docs");
  });

  it("is linked from the reference (its description and each tag) and from the problem codes' page", async () => {
    const doc = (await (await api.call("/v1/openapi.json", { key: null })).json()) as {
      info: { description: string };
      tags: { name: string; externalDocs?: { url: string } }[];
    };
    expect(doc.info.description).toContain("](/docs/site/)");
    // Each tag names the guide of its operations: a page of docs/ that exists.
    for (const tag of doc.tags) {
      const url = tag.externalDocs?.url ?? "";
      expect(url, tag.name).toMatch(/^\/docs\/site\/[\w/-]+\.html$/);
      expect(existsSync(join(DOCS, url.slice("/docs/site/".length).replace(/\.html$/, ".md"))), url).toBe(true);
    }
    const problems = await (await api.call("/docs/problems", { key: null })).text();
    expect(problems).toContain('href="/docs/site/reference/api.html"');
    const reference = await (await api.call("/docs", { key: null })).text();
    expect(reference).toContain('href="/docs/site/"');
  });
});
