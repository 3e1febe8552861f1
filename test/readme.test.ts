// The README's Settings table names every environment variable the code reads, and its first
// screen installs every Debian package CI installs for `npm test`.
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { configSchema } from "../api/src/config.ts";
import { indexerConfigSchema } from "../indexer/config.ts";
import { ROOT } from "../scripts/lib/paths.ts";

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

function namesInReadme(): Set<string> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.split(/^## Settings$/m)[1]?.split(/^## /m)[0] ?? "";
  const names = new Set<string>();
  for (const line of section.split("\n").filter((l) => l.startsWith("|"))) {
    const firstCell = line.split("|")[1] ?? "";
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]!);
  }
  return names;
}

describe("README Settings", () => {
  it("lists every environment variable the code reads", () => {
    const code = namesInCode();
    const readme = namesInReadme();
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
