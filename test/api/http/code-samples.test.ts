// The reference's code samples are our SDKs' calls, and they are right: every operation of the
// OpenAPI document carries a JS and a Python sample (curl for the few no SDK calls), each JS sample
// type-checks against @zsd/sdk (tsc) and each Python one against the zsd package (pyright), and in
// Chromium the reference at /docs shows them and none of Scalar's generic clients.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODE_SAMPLES, CURL_ONLY, type CodeSample } from "../../../api/src/http/openapi/code-samples.ts";
import { ROOT } from "../../../scripts/lib/paths.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

const run = promisify(execFile);
const executablePath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => Boolean(p) && existsSync(p!),
);

interface Operation {
  operationId: string;
  "x-codeSamples"?: CodeSample[];
}

/** A sample's lines after its set-up (the import and the client), which each file below writes once. */
const body = (source: string, setUp: RegExp) => source.split("\n").filter((line) => !setUp.test(line));

describe("the reference's code samples", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;
  let operations: Operation[];
  // Inside the repository, so that the samples resolve @zsd/sdk and zsd as a reader's project would.
  const dir = join(ROOT, "build", `code-samples-${process.pid}`);

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
    const doc = (await (await api.call("/v1/openapi.json", { key: null })).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    operations = Object.values(doc.paths).flatMap((methods) => Object.values(methods));
    mkdirSync(dir, { recursive: true });
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives every operation our SDKs' samples, JS and Python (curl where no SDK calls it)", () => {
    expect(operations.length).toBeGreaterThan(60);
    for (const op of operations) {
      const samples = (op["x-codeSamples"] ?? []).map((s) => s.label);
      expect(samples, op.operationId).toEqual(CURL_ONLY.has(op.operationId) ? ["curl"] : ["JS SDK", "Python SDK"]);
    }
    // None kept for an operation that is gone.
    const ids = new Set(operations.map((op) => op.operationId));
    expect(Object.keys(CODE_SAMPLES).filter((id) => !ids.has(id))).toEqual([]);
  });

  it("type-checks every JS sample against @zsd/sdk and every Python sample against zsd", async () => {
    const samples = (lang: string) =>
      operations.flatMap((op) => (op["x-codeSamples"] ?? []).filter((s) => s.lang === lang).map((s) => ({ op, s })));
    const js = [
      'import { Zsd } from "@zsd/sdk/client";',
      "const zsd = new Zsd(process.env.ZSD_API_KEY);",
      ...samples("JavaScript").map(({ op, s }) =>
        [
          `export async function ${op.operationId}() {`,
          ...body(s.source, /^(import |const zsd = |$)/),
          "  return answer;",
          "}",
        ].join("\n"),
      ),
    ].join("\n");
    const python = [
      "import os",
      "from typing import Any",
      "import zsd",
      'client = zsd.Client(os.environ["ZSD_API_KEY"])',
      ...samples("Python").map(({ op, s }) =>
        [
          `def sample_${op.operationId}() -> Any:`,
          ...body(s.source, /^(import |client = |$)/).map((line) => `    ${line}`),
          "    return answer",
        ].join("\n"),
      ),
    ].join("\n\n");
    expect(js.match(/^export async function/gm)?.length).toBeGreaterThan(60);
    writeFileSync(join(dir, "samples.ts"), js);
    writeFileSync(
      join(dir, "tsconfig.json"),
      // The SDK's own declarations of the untyped packages it uses come along, as in its build.
      JSON.stringify({ extends: "../../tsconfig.json", include: ["samples.ts", "../../sdk/js/src/snarkjs.d.ts"] }),
    );
    writeFileSync(join(dir, "samples.py"), python);
    writeFileSync(
      join(dir, "pyrightconfig.json"),
      JSON.stringify({ include: ["samples.py"], extraPaths: ["../../sdk/python"], pythonVersion: "3.9" }),
    );
    const check = async (command: string, args: string[]) => {
      try {
        await run(join(ROOT, "node_modules", ".bin", command), args, { cwd: dir, maxBuffer: 1 << 24 });
        return "";
      } catch (error) {
        const { stdout, stderr } = error as { stdout: string; stderr: string };
        return `${stdout}${stderr}`;
      }
    };
    const [tsc, pyright] = await Promise.all([
      check("tsc", ["--noEmit", "-p", "tsconfig.json"]),
      check("pyright", ["-p", "pyrightconfig.json"]),
    ]);
    expect(tsc).toBe("");
    expect(pyright).toBe("");
    // The check can fail: a method the SDK does not have is refused by both.
    writeFileSync(join(dir, "samples.ts"), `${js}\nexport const wrong = () => zsd.mints.fetch("mint_x");\n`);
    writeFileSync(join(dir, "samples.py"), `${python}\n\nwrong = client.mints.fetch("mint_x")\n`);
    const [tscWrong, pyrightWrong] = await Promise.all([
      check("tsc", ["--noEmit", "-p", "tsconfig.json"]),
      check("pyright", ["-p", "pyrightconfig.json"]),
    ]);
    expect(tscWrong).toContain("Property 'fetch' does not exist");
    expect(pyrightWrong).toMatch(/Cannot access attribute "fetch"|"fetch" is not a known attribute/);
  });

  // In CI a missing browser is a failure, as in the dashboard's browser tests.
  describe.skipIf(!executablePath && process.env.CI !== "true")("in headless Chromium", () => {
    let browser: Browser;
    beforeAll(async () => {
      if (!executablePath) throw new Error("no chromium: apt-get install -y chromium, or set CHROMIUM_PATH");
      browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
    });
    afterAll(async () => {
      await browser?.close();
    });

    it("shows an operation's JS and Python samples at /docs, and no generic client", async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      try {
        await page.goto(`${api.url}/docs#tag/mint/GET/v1/mints/{mintId}`, { waitUntil: "load" });
        const card = page.locator(".request-card", { hasText: 'zsd.mints.get("mint_7KpX2mN9qR4tV6wY8zA1")' }).first();
        await card.waitFor({ timeout: 60_000 });
        // The picker offers our two SDKs and nothing of Scalar's (curl, fetch, requests…).
        const picker = card.getByTestId("client-picker");
        expect((await picker.innerText()).trim()).toBe("JS SDK");
        await picker.click();
        const python = page
          .getByRole("option", { name: "Python SDK" })
          .or(page.getByText("Python SDK", { exact: true }));
        await python.first().waitFor();
        const offered = await page.evaluate(() =>
          [...document.querySelectorAll("[role=option], [role=menuitem], [role=listbox] li")].map((o) =>
            (o.textContent ?? "").trim(),
          ),
        );
        expect(offered.filter(Boolean).sort()).toEqual(["JS SDK", "Python SDK"]);
        await python.first().click();
        await page.getByText('client.mints.retrieve("mint_7KpX2mN9qR4tV6wY8zA1")').first().waitFor();
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    });
  });
});
