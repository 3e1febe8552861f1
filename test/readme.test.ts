// The settings page (docs/reference/configuration.md) names every environment variable the code
// reads; the README's first screen installs every Debian package CI installs for `npm test`, its
// sandbox mint is the quick start's (which test/sdk/client-e2e.test.ts runs), and its figures are
// BENCHMARKS.md's.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../api/src/config.ts";
import { indexerConfigSchema } from "../indexer/config.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import { readDoc, section } from "./helpers/docs.ts";

/** The platform's own, read by no setting of ours. */
const STANDARD = new Set(["CI", "HOME", "PATH", "NODE_ENV", "NODE_OPTIONS"]);

/** Where code reads variables by name: `process.env` or an `env` object, dotted or indexed with a string. */
const SOURCES = ["scripts", "testkit/src", "test", "bench", "api/src", "indexer", "hardhat.config.cts"];

function sourceFiles(entry: string): string[] {
  const path = join(ROOT, entry);
  if (/\.[cm]?ts$/.test(entry)) return [path];
  return readdirSync(path, { recursive: true, encoding: "utf8" })
    .filter(
      (file) =>
        /\.[cm]?ts$/.test(file) && !file.split(/[\\/]/).some((part) => part === "node_modules" || part.startsWith(".")),
    )
    .map((file) => join(path, file));
}

function namesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  const add = (name: string, where: string) => {
    if (!STANDARD.has(name) && !found.has(name)) found.set(name, where);
  };
  for (const key of Object.keys(configSchema.shape)) add(key, "api/src/config.ts");
  for (const key of Object.keys(indexerConfigSchema.shape)) add(key, "indexer/config.ts");
  for (const file of SOURCES.flatMap(sourceFiles)) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\])/g))
      add((match[1] ?? match[2])!, relative(ROOT, file));
  }
  // Variables the code reads through a helper (the deploy script's role addresses): their .env.example files.
  for (const file of [".env.example", "api/.env.example"])
    for (const match of readFileSync(join(ROOT, file), "utf8").matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm))
      add(match[1]!, file);
  return found;
}

/** The names in the first column of the settings page's table. */
function namesInSettings(): Set<string> {
  const names = new Set<string>();
  for (const line of readDoc("reference/configuration.md")
    .split("\n")
    .filter((l) => l.startsWith("|"))) {
    const firstCell = line.split("|")[1] ?? "";
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]!);
  }
  return names;
}

describe("the settings page", () => {
  it("lists every environment variable the code reads", () => {
    const code = namesInCode();
    const readme = namesInSettings();
    // The collection itself works: the API's, the indexer's, the dev stack's, the deploy script's and the tests' variables.
    for (const name of ["BODY_LIMIT", "POLLING_INTERVAL_MS", "CHAIN_PORT", "PAUSER_ADDRESS", "TEST_POSTGRES_URL"])
      expect(code.has(name), name).toBe(true);
    const missing = [...code].filter(([name]) => !readme.has(name)).map(([name, where]) => `${name} (${where})`);
    expect(missing).toEqual([]);
  });
});

/** Every package `.ci/run` installs with apt-get: what `npm test` needs beyond npm. */
function packagesCiInstalls(): Set<string> {
  const script = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  const packages = new Set<string>();
  for (const match of script.matchAll(/apt-get install((?:\s+[\w.+-]+)+)/g))
    for (const word of match[1]!.trim().split(/\s+/)) if (!word.startsWith("-")) packages.add(word);
  return packages;
}

/** The packages of the apt-get line in the README's "On a fresh machine" section. */
function packagesReadmeInstalls(): Set<string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.split(/^## On a fresh machine$/m)[1]?.split(/^## /m)[0] ?? "";
  const lines = [...section.matchAll(/apt-get install((?:\s+[\w.+-]+)+)/g)];
  // One line to copy: a second one would be a step a newcomer can miss.
  expect(lines).toHaveLength(1);
  return new Set(
    lines[0]![1]!
      .trim()
      .split(/\s+/)
      .filter((word) => !word.startsWith("-")),
  );
}

describe("README first screen", () => {
  it("installs every Debian package CI installs", () => {
    const ci = packagesCiInstalls();
    // The parse itself works: packages CI installs in separate steps are all found.
    for (const name of ["redis-server", "chromium", "z3", "python3-cryptography"])
      expect(ci.has(name), name).toBe(true);
    const readme = packagesReadmeInstalls();
    expect([...ci].filter((name) => !readme.has(name))).toEqual([]);
  });
});

const README = () => readFileSync(join(ROOT, "README.md"), "utf8");

/** A shell block's lines that run: comments and blank lines dropped, a trailing comment cut. */
const commands = (block: string) =>
  block
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trimEnd())
    .filter((line) => line !== "" && !line.startsWith("#"));

describe("README sandbox mint", () => {
  it("is the quick start's first commands, which the client's end-to-end test runs", () => {
    const readme = /```sh\n([\s\S]*?)```/.exec(section(README(), "A mint in the sandbox"))![1]!;
    const quick = /```sh\n([\s\S]*?)```/.exec(
      section(readDoc("guide/quick-start.md"), "Quick start: a mint and a redemption in the sandbox"),
    )![1]!;
    const mint = commands(readme);
    // Three commands and the two exports they need.
    expect(mint.filter((line) => line.startsWith("zsd ") || line.startsWith("NOTE="))).toHaveLength(3);
    expect(commands(quick).slice(0, mint.length)).toEqual(mint);
  });
});

/** A figure's value as a number: "≈ 486k gas" → 486000, "9,303 req/s" → 9303. */
function value(text: string): number {
  const found = /([\d,]+(?:\.\d+)?)\s*(k)?/.exec(text.replace(/\*\*.*$/, ""));
  if (!found) throw new Error(`no number in "${text}"`);
  return Number(found[1]!.replaceAll(",", "")) * (found[2] ? 1000 : 1);
}

/** The rows of a Markdown table, by its first cell: the second cell. */
function rows(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of text.split("\n").filter((l) => l.startsWith("|"))) {
    const cells = line.split("|").map((cell) => cell.trim());
    if (cells[1] && cells[2] !== undefined) found.set(cells[1], cells[2]);
  }
  return found;
}

describe("README figures", () => {
  it("are BENCHMARKS.md's, rounded (within 10%)", () => {
    const readme = rows(section(README(), "Figures"));
    const benchmarks = rows(readFileSync(join(ROOT, "BENCHMARKS.md"), "utf8"));
    const figures = [...readme].filter(([name]) => !name.startsWith("Figure") && !/^-+$/.test(name));
    expect(figures.length).toBeGreaterThanOrEqual(3);
    for (const [name, said] of figures) {
      const measured = benchmarks.get(name);
      expect(measured, `${name} is not a figure of BENCHMARKS.md`).toBeDefined();
      const ratio = value(said) / value(measured!);
      expect(Math.abs(ratio - 1), `${name}: README says ${said}, BENCHMARKS.md ${measured}`).toBeLessThanOrEqual(0.1);
    }
  });
});
