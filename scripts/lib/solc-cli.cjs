#!/usr/bin/env node
// The native solc command line (`--version`, `--standard-json` on stdin) over the pinned solc npm
// package, so that forge can compile with the same compiler as Hardhat: forge would otherwise
// download a native solc from binaries.soliditylang.org, which these machines cannot reach.
// scripts/lint-contracts.ts passes it to `forge lint --use`. CommonJS, because forge runs it as a
// program and solc-js is CommonJS.
"use strict";
const { readFileSync } = require("node:fs");
const { resolve } = require("node:path");
const solc = require("solc");

const args = process.argv.slice(2);
if (args.includes("--version")) {
  // forge reads the version from the second line; solc-js names its build "Emscripten.clang".
  const version = solc.version().replace(/\.Emscripten\.clang$/, "");
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${version}\n`);
  process.exit(0);
}
if (!args.includes("--standard-json")) {
  process.stderr.write(`solc-cli: only --version and --standard-json are supported, got ${args.join(" ")}\n`);
  process.exit(2);
}
const at = args.indexOf("--base-path");
const basePath = at >= 0 && args[at + 1] ? args[at + 1] : process.cwd();
const input = readFileSync(0, "utf8");
// forge sends every source's content; an import it did not resolve is read from the base path.
const findImports = (path) => {
  try {
    return { contents: readFileSync(resolve(basePath, path), "utf8") };
  } catch (error) {
    return { error: String(error) };
  }
};
process.stdout.write(solc.compile(input, { import: findImports }));
