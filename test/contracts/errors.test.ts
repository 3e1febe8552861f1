// A revert carries only a 4-byte selector: a client (viem, an explorer, the
// API) decodes it with the ABIs it has. Two errors behind one selector, or one
// name meaning two things, make it decode the wrong one without noticing.
// Like OpenZeppelin's custom-errors-duplication check, on the compiled output.
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Abi, toFunctionSelector } from "viem";
import { formatAbiItem } from "viem/utils";
import { describe, expect, it } from "vitest";
import { ARTIFACTS_DIR } from "../../scripts/lib/paths.ts";

const OURS = join(ARTIFACTS_DIR, "contracts");

type AbiError = Extract<Abi[number], { type: "error" }>;

interface ErrorUse {
  name: string;
  selector: string;
  signature: string;
  /** With parameter names: two errors of one signature can still differ in meaning. */
  fragment: string;
  contract: string;
}

interface AstNode {
  nodeType?: string;
  name?: string;
  [key: string]: unknown;
}

/** Every artifact file of a contract under contracts/ (not the .dbg.json beside it). */
function artifactFiles(dir = OURS): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return artifactFiles(path);
    return entry.name.endsWith(".json") && !entry.name.endsWith(".dbg.json") ? [path] : [];
  });
}

function errorUses(): ErrorUse[] {
  return artifactFiles().flatMap((file) => {
    const { contractName, abi } = JSON.parse(readFileSync(file, "utf8")) as { contractName: string; abi: Abi };
    return abi
      .filter((item): item is AbiError => item.type === "error")
      .map((error) => {
        const signature = formatAbiItem(error);
        return {
          name: error.name,
          selector: toFunctionSelector(signature),
          signature,
          fragment: formatAbiItem(error, { includeName: true }),
          contract: contractName,
        };
      });
  });
}

/**
 * Where each error name is declared, from the compiler's ASTs. An incremental
 * compile leaves unchanged contracts pointing at an older build-info, which
 * still holds the old text of the recompiled files: each of our files is read
 * from the build-info its own artifacts point at.
 */
function declarations(): Map<string, Set<string>> {
  const buildInfoOf = new Map<string, string>();
  for (const file of artifactFiles()) {
    const { sourceName } = JSON.parse(readFileSync(file, "utf8")) as { sourceName: string };
    const dbg = JSON.parse(readFileSync(file.replace(/\.json$/, ".dbg.json"), "utf8")) as { buildInfo: string };
    buildInfoOf.set(sourceName, resolve(file, "..", dbg.buildInfo));
  }
  const declared = new Map<string, Set<string>>();
  const visit = (node: unknown, source: string): void => {
    if (Array.isArray(node)) return node.forEach((child) => visit(child, source));
    if (typeof node !== "object" || node === null) return;
    const { nodeType, name } = node as AstNode;
    if (nodeType === "ErrorDefinition" && name) {
      declared.set(name, (declared.get(name) ?? new Set()).add(source));
    }
    for (const child of Object.values(node)) visit(child, source);
  };
  const visited = new Set<string>();
  for (const file of new Set(buildInfoOf.values())) {
    const { output } = JSON.parse(readFileSync(file, "utf8")) as {
      output: { sources: Record<string, { ast: unknown }> };
    };
    for (const [source, { ast }] of Object.entries(output.sources)) {
      const current = source.startsWith("contracts/") ? buildInfoOf.get(source) === file : !visited.has(source);
      if (!current) continue;
      visited.add(source);
      visit(ast, source);
    }
  }
  return declared;
}

/** Keys that map to more than one value, with the contracts that use each value. */
function clashes(uses: ErrorUse[], key: keyof ErrorUse, value: keyof ErrorUse) {
  const byKey = new Map<string, Map<string, Set<string>>>();
  for (const use of uses) {
    const values = byKey.get(use[key]) ?? new Map<string, Set<string>>();
    values.set(use[value], (values.get(use[value]) ?? new Set()).add(use.contract));
    byKey.set(use[key], values);
  }
  return [...byKey]
    .filter(([, values]) => values.size > 1)
    .map(
      ([k, values]) =>
        `${k}: ${[...values].map(([v, contracts]) => `${v} in ${[...contracts].join(", ")}`).join(" / ")}`,
    );
}

describe("custom errors of our contracts", () => {
  const uses = errorUses();

  it("were read from the artifacts", () => {
    expect(uses.map((use) => use.contract)).toContain("StableMinter");
  });

  it("have one error behind each selector", () => {
    expect(clashes(uses, "selector", "fragment")).toEqual([]);
  });

  it("have one signature for each name", () => {
    expect(clashes(uses, "name", "signature")).toEqual([]);
  });

  it("are each declared once, and not under a name a library already declares", () => {
    const repeated = [...declarations()]
      .filter(([, sources]) => sources.size > 1 && [...sources].some((source) => source.startsWith("contracts/")))
      .map(([name, sources]) => `${name}: ${[...sources].join(", ")}`);
    expect(repeated).toEqual([]);
  });
});
