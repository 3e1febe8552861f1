import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { readDurations, timesFor } from "./durations.ts";

/**
 * Longest files first, by the times in test/durations.json. Two files run at a time: started last, a long
 * file would leave the other worker idle for minutes at the end, and a clean clone has no timings cached
 * for vitest to go by.
 *
 * The times are written by a full run, not kept by hand: CI writes test/durations.json on every full run
 * that passes (.ci/run sets CI; test/helpers/durations-reporter.ts), and `npm run test:durations` runs
 * the suite and rewrites it here, to commit when files were added or their times moved.
 *
 * A file the times do not name yet goes first: a short file started early costs nothing, a long one
 * started last costs the other worker's idle minutes.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const path = (file: TestSpecification) => relative(file.project.config.root, file.moduleId).split("\\").join("/");
    const seconds = timesFor(files.map(path), readDurations());
    const sorted = await super.sort(files);
    // Stable: between equal times, vitest's order (its cached timings, when it has them).
    return sorted
      .map((file, i) => ({ file, i, s: seconds.get(path(file)) ?? Infinity }))
      .sort((a, b) => (a.s === b.s ? a.i - b.i : b.s - a.s))
      .map((x) => x.file);
  }
}
