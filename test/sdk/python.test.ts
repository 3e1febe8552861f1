// The Python SDK's own suite (sdk/python/tests: unit tests against a fake
// server, then end-to-end tests and examples/python against a stack of their
// own from scripts/test-stack.ts), run as one file of vitest's pool rather
// than after it: most of its three minutes are spent waiting on that stack,
// and another file uses the cores meanwhile. `npm run test:python` runs it alone.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

it("passes the Python SDK's unit and end-to-end tests", { timeout: 900_000 }, async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn("python3", ["-m", "unittest", "discover", "-s", "tests", "-t", "."], {
      cwd: join(ROOT, "sdk", "python"),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d));
    child.stderr.on("data", (d: Buffer) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
  // unittest's summary ("Ran 90 tests … OK") and, on a failure, its tracebacks.
  const summary = output.slice(-20_000);
  expect(summary, summary).toMatch(/^Ran \d+ tests? in /m);
  expect(code, summary).toBe(0);
  expect(summary).toMatch(/^OK/m);
});
