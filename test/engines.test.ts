// Every package `npm ci` installs runs on the Node.js the project says it
// needs: a package that asks for a newer one prints an EBADENGINE warning on
// every install (26 of them from @scalar/* and @whatwg-node/promise-helpers
// 2, which ask for Node 22), and may use what Node 20 does not have.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { ROOT } from "../scripts/lib/paths.ts";

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
}

/** Installed packages whose `engines.node` excludes every Node.js version `range` allows. */
export function enginesOutside(lock: { packages: Record<string, LockEntry> }, range: string): string[] {
  return Object.entries(lock.packages).flatMap(([path, entry]) => {
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    // npm leaves out an optional package that does not fit (a platform build), without a warning.
    if (!path || !node || entry.optional) return [];
    return semver.intersects(range, node) ? [] : [`${path}@${entry.version} wants node ${node}`];
  });
}

describe("engines", () => {
  it("installs nothing that asks for another Node.js than package.json's engines", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    };
    expect(root.engines.node).toBe(">=20.19 <21");
    expect(semver.satisfies(process.version, root.engines.node), process.version).toBe(true);
    expect(enginesOutside(lock, root.engines.node)).toEqual([]);
  });
});
