// scripts/lint-contracts.ts, forge lint over contracts/ (npm run lint runs it on the repository):
// here a seeded project shows that a finding fails the run and that a justified line does not.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

function lint(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, "node_modules", ".bin", "tsx"), join(ROOT, "scripts", "lint-contracts.ts"), ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("close", (code) => done({ code, output }));
  });
}

describe("contract lint (forge lint)", () => {
  it("fails on the seeded cast and timestamp comparison, and passes the justified cast", async () => {
    const { code, output } = await lint(["--root", join(ROOT, "test", "contracts", "fixtures", "forge-lint")]);
    expect(output).toMatch(/warning\[unsafe-typecast\][^\n]*\n\s*╭▸ contracts\/Seeded\.sol:10:/);
    expect(output).toMatch(/warning\[block-timestamp\][^\n]*\n\s*╭▸ contracts\/Seeded\.sol:14:/);
    expect(output).not.toContain("Seeded.sol:20:");
    expect(output).toContain("aborting due to 2 linter warning(s)");
    expect(code, output).toBe(1);
  });

  it("finds nothing in contracts/: every finding there is fixed or justified on its line", async () => {
    const { code, output } = await lint([]);
    expect(output).toContain("forge lint: no high, med, low finding");
    expect(code, output).toBe(0);
  });
});
