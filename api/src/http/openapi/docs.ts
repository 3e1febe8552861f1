// /docs: the API reference, rendered in the browser by Scalar from this
// server's OpenAPI document. Scalar's standalone bundle is served from its npm
// package by this server, so the page works offline and nothing is fetched
// from anywhere else; /docs/problems, where each problem's `type` points, is
// plain HTML made here from the catalog; /docs/site/ is the documentation site
// (./site.ts), which both link to.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type RequestHandler, Router } from "express";
import { PROBLEM_CATALOG, type ProblemCode, type ProblemEntry } from "../problem-catalog.ts";
import { ANY_REQUEST, operationProblems } from "../operation-problems.ts";
import type { AnyRoute } from "../routes.ts";
import { DOCS_SITE_PATH, siteRouter } from "./site.ts";

const escape = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** `code` spans of the catalog's plain text, the rest escaped. */
const prose = (s: string) => escape(s).replace(/`([^`]+)`/g, "<code>$1</code>");

// The package exports no path to its browser build: it sits beside the entry point.
const scalarPackage = join(dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "..");
const SCALAR_VERSION = (JSON.parse(readFileSync(join(scalarPackage, "package.json"), "utf8")) as { version: string })
  .version;
const SCALAR_BUNDLE = join(scalarPackage, "dist", "browser", "standalone.js");

/** Named by version, so that a browser may keep it. */
export const SCALAR_BUNDLE_PATH = `/docs/assets/scalar-api-reference-${SCALAR_VERSION}.js`;
const REFERENCE_SCRIPT_PATH = "/docs/assets/reference.js";

// A file rather than an inline script: the CSP allows this origin's scripts only.
// No fonts, telemetry or AI agent from Scalar's servers, and no request console:
// API keys do not belong in a browser. Scalar's generic clients (curl, fetch,
// requests…) are hidden: each operation's x-codeSamples are our SDKs' calls.
const REFERENCE_SCRIPT = `Scalar.createApiReference("#reference", {
  url: "/v1/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  hideClientButton: true,
  hideTestRequestButton: true,
  hiddenClients: true,
  documentDownloadType: "json",
});
`;

/**
 * The reference needs this origin's scripts, the styles Scalar injects and a
 * fetch of the document; the rest of the API keeps helmet's stricter policy.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

function referencePage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
</head>
<body>
<noscript><p>The reference needs JavaScript. The document itself: <a href="/v1/openapi.json">/v1/openapi.json</a>; every error code: <a href="/docs/problems">/docs/problems</a>; guides and concepts: <a href="${DOCS_SITE_PATH}">the documentation</a>.</p></noscript>
<div id="reference"></div>
<script src="${SCALAR_BUNDLE_PATH}"></script>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
</body>
</html>
`;
}

/** Every problem code: status, title, meaning, extension members and which operations answer it. */
export function problemsPage(title: string, routes: AnyRoute[]): string {
  const answeredBy = new Map<ProblemCode, string[]>();
  for (const route of routes) {
    for (const code of operationProblems(route)) {
      answeredBy.set(code, [...(answeredBy.get(code) ?? []), `${route.method.toUpperCase()} /v1${route.path}`]);
    }
  }
  const everywhere = new Set<ProblemCode>(ANY_REQUEST);
  const sections = (Object.entries(PROBLEM_CATALOG) as [ProblemCode, ProblemEntry][])
    .map(([code, entry]) => {
      const operations = everywhere.has(code)
        ? "any request"
        : (answeredBy.get(code) ?? []).map((op) => `<code>${escape(op)}</code>`).join(", ") || "no operation here";
      const fields = entry.fields?.length
        ? `<p>Carries ${entry.fields.map((f) => `<code>${f}</code>`).join(", ")}.</p>`
        : "";
      const headers = entry.headers?.length
        ? `<p>Header${entry.headers.length > 1 ? "s" : ""}: ${entry.headers.map((h) => `<code>${h}</code>`).join(", ")}.</p>`
        : "";
      return `<section id="${code}"><h2><code>${code}</code> <small>${entry.status} ${escape(entry.title)}</small></h2>
<p>${prose(entry.meaning)}</p>${fields}${headers}<p class="ops">Answered by: ${operations}</p></section>`;
    })
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}: problem codes</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:54rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}small{font-weight:normal;color:#555}section{border-top:1px solid #ddd}section:target{background:#fffbe6}.ops{color:#555;font-size:.9em}</style>
</head><body><h1>Problem codes</h1>
<p>Every error of the ${escape(title)} is an RFC 9457 problem (<code>application/problem+json</code>) with a stable <code>code</code>; its <code>type</code> links here. Branch on <code>code</code>: <code>title</code> and <code>detail</code> are words for people. The <a href="/docs">API reference</a> shows each operation's codes with an example; <a href="${DOCS_SITE_PATH}reference/api.html">the API's conventions</a> (errors, retries, idempotency, rate limits) are in the documentation.</p>
${sections}</body></html>`;
}

export function docsRouter(
  title: string,
  routes: AnyRoute[],
  limiter: RequestHandler,
  /** The built documentation site, served at /docs/site/. */
  siteDirectory: string,
): Router {
  const reference = referencePage(title);
  const problems = problemsPage(title, routes);
  const router = Router();
  router.get("/docs", limiter, (_req, res) => {
    res.setHeader("Content-Security-Policy", DOCS_CSP);
    res.type("html").send(reference);
  });
  router.get("/docs/problems", limiter, (_req, res) => void res.type("html").send(problems));
  router.use(siteRouter(siteDirectory, limiter));
  router.get(REFERENCE_SCRIPT_PATH, limiter, (_req, res) => void res.type("text/javascript").send(REFERENCE_SCRIPT));
  router.get(SCALAR_BUNDLE_PATH, limiter, (_req, res, next) => {
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type("text/javascript").sendFile(SCALAR_BUNDLE, (error) => error && next(error));
  });
  return router;
}
