// The JS client works in a browser bundle: built for the browser platform it
// resolves with no Node built-in (proving fetches the circuit's files from
// the API, not from disk).
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { ROOT } from "../../scripts/lib/paths.ts";

describe("the JS client in a browser bundle", () => {
  it("bundles for the browser platform without Node built-ins", async () => {
    const result = await build({
      entryPoints: [join(ROOT, "sdk", "js", "src", "client", "index.ts")],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
      metafile: true,
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith("node:"))).toEqual([]);
    expect(inputs.some((input) => input.includes("sdk/js/src/client/flows.ts"))).toBe(true);
  });
});
