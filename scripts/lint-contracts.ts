// Foundry's linter (`forge lint`, from the @foundry-rs/forge npm package) over contracts/: the
// static analyzer that reaches every contract in seconds, where solc's SMTChecker
// (scripts/analyze-contracts.ts) does not finish on StableMinter and PositionManager. It runs the
// high, medium and low lints and fails on any finding: each is fixed, or disabled on its line with
// a comment that says why it cannot happen (`forge-lint: disable-next-line(<lint>)`).
//
// Usage: tsx scripts/lint-contracts.ts [--root DIR] [file ...]
// (--root lints another Hardhat-shaped project, which the tests use for a seeded fixture.)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ROOT } from "./lib/paths.ts";

const SEVERITIES = ["high", "med", "low"];

/**
 * The platform's forge binary, from the optional package @foundry-rs/forge installed beside it.
 * Its own `forge` launcher (bin.mjs in 1.7.1) exits 0 whatever forge returns, so a finding would
 * pass the lint: the binary is run directly.
 */
function forgeBinary(): string {
  const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string];
  const name = `@foundry-rs/forge-${process.platform === "win32" ? "win32" : process.platform}-${arch}`;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    return join(dirname(manifest), "bin", process.platform === "win32" ? "forge.exe" : "forge");
  } catch {
    throw new Error(`${name} is not installed: forge lint has no binary for ${process.platform}/${process.arch}`);
  }
}

const args = process.argv.slice(2);
let root = ROOT;
const rootAt = args.indexOf("--root");
if (rootAt >= 0) {
  const given = args[rootAt + 1];
  if (!given) throw new Error("--root needs a directory");
  root = resolve(given);
  args.splice(rootAt, 2);
}

// Compiler output goes to a scratch directory: forge compiles (ABIs only) before it lints, and
// the repository's build/ belongs to Hardhat.
const scratch = mkdtempSync(join(tmpdir(), "forge-lint-"));
try {
  const result = spawnSync(
    forgeBinary(),
    [
      "lint",
      // Only the contracts: with --hardhat forge also takes test/ as sources, where fixtures are seeded.
      ...(args.length > 0 ? args : [join(root, "contracts")]),
      "--hardhat",
      "--root",
      root,
      "--use",
      join(ROOT, "scripts", "lib", "solc-cli.cjs"),
      "--offline",
      "--no-cache",
      "--out",
      join(scratch, "out"),
      "--deny",
      "warnings",
      "--severity",
      ...SEVERITIES,
    ],
    { cwd: root, stdio: "inherit" },
  );
  if (result.error) throw result.error;
  if (result.status === 0) console.log(`forge lint: no ${SEVERITIES.join(", ")} finding under ${root}/contracts`);
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
