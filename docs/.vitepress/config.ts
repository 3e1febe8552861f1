// The documentation site: `npm run docs` builds docs/ into docs/.vitepress/dist, offline (the
// default theme's fonts and the local search index are bundled; nothing is fetched at build or
// in the browser). test/docs/site.test.ts builds it once, checks every link and anchor, and
// renders each page in Chromium.
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type DefaultTheme, defineConfig } from "vitepress";
import { DOCS_SITE_PATH } from "../../api/src/http/openapi/site-path.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const SIDEBAR: DefaultTheme.SidebarItem[] = [
  {
    text: "Guides",
    items: [
      { text: "On a fresh machine", link: "/guide/getting-started" },
      { text: "Quick start", link: "/guide/quick-start" },
      { text: "Mint and redeem with curl", link: "/guide/curl" },
      { text: "Sandbox cheat sheet", link: "/guide/sandbox" },
      { text: "A held mint", link: "/guide/held-mint" },
      { text: "Positions", link: "/guide/positions" },
      { text: "Redirecting a failed payout", link: "/guide/redirect" },
      { text: "Python SDK", link: "/guide/python" },
      { text: "Compliance agents and webhooks", link: "/guide/compliance" },
      { text: "Governance", link: "/guide/governance" },
      { text: "Developer dashboard", link: "/guide/dashboard" },
      { text: "Deploying to a testnet", link: "/guide/deploying" },
      { text: "Operating custody", link: "/guide/custody" },
    ],
  },
  {
    text: "Concepts",
    items: [
      { text: "Trust model", link: "/trust" },
      { text: "How money moves", link: "/concepts/money" },
      { text: "The price", link: "/concepts/price" },
      { text: "The books", link: "/concepts/books" },
      { text: "The proof", link: "/concepts/proof" },
      { text: "What the chain shows", link: "/concepts/chain" },
    ],
  },
  {
    text: "Reference",
    items: [
      { text: "Settings", link: "/reference/configuration" },
      { text: "On-chain data", link: "/reference/on-chain-data" },
      { text: "The relay API", link: "/reference/api" },
      { text: "Commands", link: "/reference/commands" },
      { text: "Contracts", link: "/reference/contracts" },
      { text: "Layout", link: "/reference/layout" },
      { text: "The indexer", link: "/reference/indexer" },
      { text: "Static analysis", link: "/reference/static-analysis" },
      { text: "Benchmarks", link: "/reference/benchmarks" },
    ],
  },
];

export default defineConfig({
  // Where the relay API serves the built site (beside its reference at /docs); `npm run docs:preview`
  // serves it there too.
  base: DOCS_SITE_PATH,
  title: "Shielded Dollar (ZSD)",
  description: "A privacy-preserving stablecoin minted against shielded ZEC: guides, concepts and reference",
  lastUpdated: false,
  themeConfig: {
    nav: [
      { text: "Guides", link: "/guide/quick-start" },
      { text: "Concepts", link: "/trust" },
      { text: "Reference", link: "/reference/configuration" },
    ],
    sidebar: SIDEBAR,
    outline: [2, 3],
    search: { provider: "local" },
  },
  markdown: {
    config(md) {
      // A file included from the repository's root (BENCHMARKS.md) names its images from the root:
      // such a path is rewritten relative to the page that includes it.
      md.core.ruler.after("inline", "root-relative-images", (state) => {
        const page = (state.env as { realPath?: string; path?: string }).realPath ?? state.env.path;
        if (typeof page !== "string") return;
        for (const token of state.tokens)
          for (const child of token.children ?? []) {
            const src = child.type === "image" ? child.attrGet("src") : null;
            if (!src || /^([a-z]+:|\/|#)/i.test(src)) continue;
            if (existsSync(resolve(dirname(page), src)) || !existsSync(join(ROOT, src))) continue;
            child.attrSet("src", relative(dirname(page), join(ROOT, src)));
          }
      });
    },
  },
});
