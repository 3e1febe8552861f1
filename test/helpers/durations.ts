import { readFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * Each test file's time: its path (relative to the repository, "/" separated) → the seconds it took in the
 * last full run that wrote the file (test/helpers/durations-reporter.ts). The sequencer starts the longest
 * first by it.
 */
export const DURATIONS_FILE = join(import.meta.dirname, "..", "durations.json");

export type Durations = Record<string, number>;

/** The reporter that writes it, as vitest's configuration and command line name it. */
export const DURATIONS_REPORTER = "./test/helpers/durations-reporter.ts";

export function readDurations(file = DURATIONS_FILE): Durations {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Durations;
  } catch {
    return {};
  }
}

/**
 * Each file's time by its path, else by its name when one timed file alone has that name (a file moved to
 * another folder keeps its time until the next full run); undefined for a file the times do not know.
 */
export function timesFor(paths: string[], durations: Durations): Map<string, number | undefined> {
  const byName = new Map<string, number | null>();
  for (const [path, s] of Object.entries(durations)) {
    const name = basename(path);
    byName.set(name, byName.has(name) ? null : s);
  }
  return new Map(paths.map((path) => [path, durations[path] ?? byName.get(basename(path)) ?? undefined]));
}
