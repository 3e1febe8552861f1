// Pages that describe the code hold to it: the layout page names only paths that exist, every
// top-level folder, and every file of a folder whose row names its files; the proof page says
// what the minter does with a change leaf, as StableMinter.sol does it.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { readDoc } from "../helpers/docs.ts";

interface Row {
  /** The paths of the first cell, from the repository's root ("api/src/workers/relay/", "README.md"). */
  paths: string[];
  /** The backticked words of the second cell. */
  named: string[];
}

/** The rows of every table of the layout page. */
function layoutRows(): Row[] {
  const rows: Row[] = [];
  for (const line of readDoc("reference/layout.md").split("\n")) {
    if (!line.startsWith("|") || /^\|\s*-+/.test(line)) continue;
    const [, first = "", second = ""] = line.split(/(?<!\\)\|/);
    const paths = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (paths.length === 0) continue; // a table's head
    rows.push({ paths, named: [...second.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) });
  }
  return rows;
}

/** A file name of a folder (`worker.ts`) or a folder of one (`custody/`): what a row names in its folder. */
const FILE = /^[\w.-]+\.(ts|mjs|cjs|cts|sol|py|json|circom|md|wasm|zkey)$/;
const FOLDER = /^[\w.-]+\/$/;
/** The files whose list a row must give whole once it names one of them. */
const SOURCE = /\.(ts|sol|py|circom)$/;

const folderOf = (path: string) => (path.endsWith("/") ? path : `${dirname(path)}/`);
const isDir = (path: string) => existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isDirectory();

describe("the layout page", () => {
  const rows = layoutRows();

  it("names only paths that exist, and each file or folder a row names is in that row's folder", () => {
    expect(rows.length).toBeGreaterThan(40);
    const missing: string[] = [];
    for (const row of rows) {
      for (const path of row.paths) if (!existsSync(join(ROOT, path))) missing.push(path);
      const folders = row.paths.map(folderOf);
      for (const word of row.named.filter((w) => FILE.test(w) || FOLDER.test(w)))
        if (!folders.some((folder) => existsSync(join(ROOT, folder, word))))
          missing.push(`${word} (in ${folders.join(" or ")})`);
    }
    expect(missing).toEqual([]);
  });

  it("has a row for every top-level folder the repository commits", () => {
    const listed = new Set(rows.flatMap((r) => r.paths).map((p) => p.split("/")[0]));
    const ignored = new Set(["node_modules", ".git"]);
    const folders = readdirSync(ROOT).filter((name) => !ignored.has(name) && isDir(name));
    expect(folders).toContain("contracts");
    expect(folders.filter((name) => !listed.has(name))).toEqual([]);
  });

  it("names every source file of a folder whose row names one (the relay worker's twenty files among them)", () => {
    const partial: string[] = [];
    let whole = 0;
    for (const row of rows.filter((r) => r.paths.length === 1 && r.paths[0]!.endsWith("/"))) {
      const folder = row.paths[0]!;
      const named = new Set(row.named.filter((w) => FILE.test(w) && SOURCE.test(w)));
      if (named.size === 0) continue;
      whole++;
      const files = readdirSync(join(ROOT, folder)).filter((f) => SOURCE.test(f) && !isDir(join(folder, f)));
      for (const file of files) if (!named.has(file)) partial.push(`${folder}${file}`);
    }
    expect(whole).toBeGreaterThan(10);
    expect(partial).toEqual([]);
  });
});

describe("the proof page", () => {
  it("says the minter queues a change leaf in the registry, with the calls StableMinter.sol makes", () => {
    const minter = readFileSync(join(ROOT, "contracts", "StableMinter.sol"), "utf8");
    // What the minter calls on the registry with a change leaf.
    const calls = new Set([...minter.matchAll(/registry\.(\w+)\(\s*(?:spend\.)?change/gi)].map((m) => m[1]!));
    expect([...calls].sort()).toEqual(["queueLeaf", "queueLeaves"]);
    const page = readDoc("concepts/proof.md");
    for (const call of calls) expect(page, call).toContain(`\`${call}\``);
    expect(page).not.toMatch(/contract inserts|minter inserts/);
  });
});
