// Writes the documentation's generated pages: the settings (docs/reference/configuration.md) from
// the API's and the indexer's config schemas, and the contracts (docs/reference/contracts.md) from
// their NatSpec in the Hardhat artifacts (run `npm run compile` first). test/readme.test.ts and
// test/docs/contracts-page.test.ts fail when a page is not the one this writes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { contractsPage } from "./lib/contracts-page.ts";
import { formatPage } from "./lib/docs-pages.ts";
import { ROOT } from "./lib/paths.ts";
import { settingsPage } from "./lib/settings-page.ts";

for (const [page, markdown] of [
  ["reference/configuration.md", settingsPage()],
  ["reference/contracts.md", contractsPage()],
] as const) {
  const out = join(ROOT, "docs", page);
  writeFileSync(out, await formatPage(page, markdown));
  console.log(`wrote ${out}`);
}
