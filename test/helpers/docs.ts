// The documentation's pages (docs/, built into the site by `npm run docs`) as the tests read them:
// the walkthroughs they run and the tables they check against the code.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../scripts/lib/paths.ts";

export const DOCS = join(ROOT, "docs");

/** A page of docs/ by its path there ("guide/curl.md"). */
export function readDoc(page: string): string {
  return readFileSync(join(DOCS, page), "utf8");
}

/** Every Markdown page of the site, by its path under docs/. */
export function docPages(): string[] {
  return readdirSync(DOCS, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md") && !file.split(/[\\/]/).some((part) => part.startsWith(".")))
    .sort();
}

/**
 * The text under a heading, whatever its level ("A mint, end to end (sandbox)"), up to the next
 * heading of the same level or higher; headings inside code blocks do not count.
 */
export function section(text: string, heading: string): string {
  const lines = text.split("\n");
  let fenced = false;
  let level = 0;
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith("```")) fenced = !fenced;
    const found = fenced ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (level === 0) {
      if (found && found[2] === heading) level = found[1]!.length;
      continue;
    }
    if (found && found[1]!.length <= level) break;
    out.push(line);
  }
  if (level === 0) throw new Error(`no heading "${heading}"`);
  return out.join("\n");
}
