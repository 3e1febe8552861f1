// The documentation site (docs/, built by `npm run docs` into docs/.vitepress/dist) at /docs/site/,
// beside the API reference it links to and that links to it. The build is read from disk as it is
// at each request, so a site built after the API started is served without a restart; a server
// where it was never built says how to build it. Each page's inline scripts (VitePress writes a
// few: the colour scheme, the page hashes) are allowed by their hashes, nothing else inline.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { type RequestHandler, Router } from "express";
import { Problem, problems } from "../problems.ts";
import { DOCS_SITE_PATH } from "./site-path.ts";

export { DOCS_SITE_PATH };

const notBuilt = () =>
  new Problem(
    404,
    "not_found",
    "Not found",
    "The documentation site is not built on this server: `npm run docs` builds it from docs/ (its pages read as " +
      "Markdown there too); the API reference is at /docs.",
  );

/** The CSP of a page: this origin's scripts and the page's own inline ones, by hash. */
function pagePolicy(html: string): string {
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
    .filter((m) => m[1]!.trim() !== "")
    .map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`);
  return [
    "default-src 'none'",
    `script-src 'self' ${[...new Set(hashes)].join(" ")}`.trim(),
    // Shiki colours code with style attributes.
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "manifest-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() === true;

/** The built file a path under the site names, as the VitePress preview finds it, or null. */
async function fileFor(root: string, path: string): Promise<string | null> {
  const file = resolve(root, `.${path.endsWith("/") ? `${path}index.html` : path}`);
  // resolve() has collapsed every "..": what is left must still be under the site.
  if (file !== root && !file.startsWith(root + sep)) return null;
  if (await isFile(file)) return file;
  // Pages are linked as /guide/curl.html; /guide/curl is the same page.
  if (!extname(file) && (await isFile(`${file}.html`))) return `${file}.html`;
  return null;
}

export function siteRouter(directory: string, limiter: RequestHandler): Router {
  const root = resolve(directory);
  const base = DOCS_SITE_PATH.slice(0, -1);
  const router = Router();
  router.use(base, limiter, async (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    try {
      // Mounted, /docs/site and /docs/site/ both arrive as "/": the first is sent to the second, so
      // that the pages' relative links resolve under the site.
      if (!req.originalUrl.startsWith(DOCS_SITE_PATH)) return res.redirect(301, DOCS_SITE_PATH);
      let path: string;
      try {
        path = decodeURIComponent(req.path);
      } catch {
        return next(problems.malformedPath());
      }
      if (!(await stat(root).catch(() => null))?.isDirectory()) return next(notBuilt());
      const file = await fileFor(root, path);
      if (!file) return next(problems.notFound(`${base}${req.path}`));
      const body = await readFile(file);
      const type = TYPES[extname(file)] ?? "application/octet-stream";
      res.setHeader("Content-Type", type);
      if (type.startsWith("text/html")) {
        res.setHeader("Content-Security-Policy", pagePolicy(body.toString("utf8")));
        res.setHeader("Cache-Control", "no-cache");
      } else if (file.startsWith(join(root, "assets") + sep)) {
        // Named by their content's hash: a new build names them anew.
        res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
      } else res.setHeader("Cache-Control", "no-cache");
      res.send(body);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
