// Hardhat's own commands, as a Hardhat user types them. Hardhat 2 loads tests
// and scripts through ts-node's CommonJS hook, which cannot load this ESM
// package's TypeScript: hardhat.config.cts sends them to vitest and tsx.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

function hardhat(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules", ".bin", "hardhat"), ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("close", (code) => done({ code, output }));
  });
}

describe("Hardhat's own commands", () => {
  it("hardhat test runs the given vitest files", async () => {
    // --no-compile: the artifacts exist, and a compile here would race other runs.
    const { code, output } = await hardhat(["test", "--no-compile", "test/contracts/errors.test.ts"]);
    expect(output).toMatch(/test\/contracts\/errors\.test\.ts \(\d+ tests\)/);
    expect(output).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(code, output).toBe(0);
  });

  it("hardhat test exits non-zero when vitest fails", async () => {
    const { code } = await hardhat(["test", "--no-compile", "test/contracts/no-such-file.test.ts"]);
    expect(code).not.toBe(0);
  });

  it("hardhat run starts an ESM TypeScript script with the network and its URL", async () => {
    const script = join("test", "contracts", "fixtures", "hardhat-run-script.ts");
    const { code, output } = await hardhat(["run", "--no-compile", script, "--network", "localhost"]);
    expect(code, output).toBe(0);
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as Record<string, string>;
    expect(report).toEqual({ self: join(ROOT, script), network: "localhost", rpcUrl: "http://127.0.0.1:8545" });
  });
});
