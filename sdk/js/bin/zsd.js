#!/usr/bin/env node
// The zsd command line, compiled to dist/ by `npm ci` (the prepare script).
// A checkout whose source changed since is rebuilt first (esbuild, ~0.1 s):
// the CLI never runs older code than the SDK beside it.
import { existsSync } from "node:fs";

const source = new URL("../src/", import.meta.url);
if (existsSync(source)) {
  const { build, stale } = await import("../scripts/build.mjs");
  if (stale()) {
    try {
      await build();
    } catch (error) {
      // Without esbuild (an install without devDependencies) the last build still runs, said aloud.
      if (!existsSync(new URL("../dist/zsd.js", import.meta.url))) throw error;
      process.stderr.write(`zsd: the source is newer than dist/ and could not be rebuilt (${error.message})\n`);
    }
  }
}
await import("../dist/zsd.js");
