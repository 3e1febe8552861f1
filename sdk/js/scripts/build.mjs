// Builds the zsd CLI to JavaScript (dist/), so that a call does not compile
// TypeScript first (2.7 s on a quiet machine, through tsx). `npm ci` runs it
// (the workspace's prepare script); bin/zsd.js runs it again when the source
// is newer than the build (an edited or pulled checkout).
//
// Two bundles: zsd.js checks the flags with nothing but node:util loaded, and
// imports zsd-commands.js (the client, viem, the prover) only for a command
// that will run. npm packages stay outside both and load from node_modules.
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = join(PACKAGE, "src");
export const DIST = join(PACKAGE, "dist");
const OUTPUTS = ["zsd.js", "zsd-commands.js"];

function newestSource(dir = SOURCE) {
  let newest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is missing or older than any source file (or this script). */
export function stale() {
  let built;
  try {
    built = Math.min(...OUTPUTS.map((name) => statSync(join(DIST, name)).mtimeMs));
  } catch {
    return true;
  }
  return newestSource() > built;
}

export async function build() {
  const { build: esbuild } = await import("esbuild");
  const common = {
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    write: false,
    logLevel: "error",
  };
  const [commands, entry] = await Promise.all([
    esbuild({ ...common, entryPoints: [join(SOURCE, "cli", "commands.ts")], outfile: join(DIST, "zsd-commands.js") }),
    esbuild({
      ...common,
      entryPoints: [join(SOURCE, "cli", "main.ts")],
      outfile: join(DIST, "zsd.js"),
      plugins: [
        {
          name: "lazy-commands",
          setup(b) {
            // The commands stay a separate file, loaded by the dynamic import only when one runs.
            b.onResolve({ filter: /^\.\/commands\.ts$/ }, () => ({ path: "./zsd-commands.js", external: true }));
          },
        },
      ],
    }),
  ]);
  mkdirSync(DIST, { recursive: true });
  // Written beside and renamed: a CLI started meanwhile (tests run several) never reads half a file.
  // The entry goes last, so that its newer mtime never hides an unwritten commands file.
  for (const file of [...commands.outputFiles, ...entry.outputFiles]) {
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
