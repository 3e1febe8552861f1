// The API (or one of its command-line tools) as one JavaScript file, for tests
// that start it as a process many times: `tsx api/src/index.ts` compiles the
// API on every start (seconds of CPU each, more on a loaded machine); a bundle
// is built once per test process.
//
// The repository's TypeScript (the API and the workspace packages it imports)
// is bundled; every npm package stays outside, imported by the absolute path
// it resolves to from the file that imports it (so each workspace keeps its
// own versions). Each file's import.meta.url is its source file's, so paths
// relative to a source file (circuits, assets) still point where they did.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "../../scripts/lib/paths.ts";

const built = new Map<string, Promise<string>>();

/** Builds api/src/index.ts into api/dist/ (once per test process) and returns the file's path. */
export function apiBundle(): Promise<string> {
  return bundle("index.ts");
}

/** Builds `api/src/<entry>` (a tool such as "cli/keys.ts") as apiBundle does, once per test process. */
export function bundle(entry: string): Promise<string> {
  let file = built.get(entry);
  if (!file) built.set(entry, (file = build(entry)));
  return file;
}

/**
 * Runs the tool api/src/cli/<name>.ts from its bundle in `env` (logs silenced), `stdin` as its standard
 * input; resolves with its exit code and output, failing or not.
 */
export async function runTool(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = await bundle(`cli/${name}.ts`);
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [file, ...args],
      { cwd: ROOT, env: { ...env, LOG_LEVEL: "silent" } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}

async function build(entry: string): Promise<string> {
  const { build: esbuild } = await import("esbuild");
  // Under api/ so that Node finds what the bundle imports where the API would.
  const dir = join(ROOT, "api", "dist");
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `test-${entry.replace(/\.ts$/, "").replaceAll("/", "-")}-${process.pid}.mjs`);
  process.once("exit", () => rmSync(outfile, { force: true }));
  await esbuild({
    entryPoints: [join(ROOT, "api", "src", entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    plugins: [
      {
        name: "npm-outside",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.path.startsWith("node:") || args.pluginData === "resolving") return undefined;
            if (args.path.startsWith("@zsd/")) return undefined;
            const resolved = await b.resolve(args.path, {
              resolveDir: args.resolveDir,
              kind: args.kind,
              pluginData: "resolving",
            });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            // Node's own modules ("fs", "crypto") stay as written.
            if (resolved.external || !resolved.path) return { path: args.path, external: true };
            return { path: pathToFileURL(resolved.path).href, external: true };
          });
          b.onLoad({ filter: /\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, "utf8").replaceAll(
              "import.meta.url",
              JSON.stringify(pathToFileURL(args.path).href),
            ),
            loader: "ts",
          }));
        },
      },
    ],
  });
  return outfile;
}
