import { readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Reporter, TestModule, TestRunEndReason, Vitest } from "vitest/node";
import { DURATIONS_FILE, type Durations } from "./durations.ts";

/**
 * Writes test/durations.json at the end of a run that passed and ran every test file whole. vitest's
 * configuration adds it in CI (.ci/run sets CI) and `npm run test:durations` names it on the command
 * line: a developer's `npm test` leaves the committed file alone. A file's time is what it took in the
 * suite, beside the files the other worker ran, which is the time the sequencer has to plan with.
 */
export default class DurationsReporter implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest) {
    this.#vitest = vitest;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason) {
    const vitest = this.#vitest;
    if (!vitest || reason !== "passed" || vitest.config.testNamePattern) return;
    const root = vitest.config.root;
    const path = (file: string) => relative(root, file).split("\\").join("/");
    const durations: Durations = {};
    for (const m of [...modules].sort((a, b) => a.moduleId.localeCompare(b.moduleId))) {
      const d = m.diagnostic();
      const ms = d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
      durations[path(m.moduleId)] = Math.round(ms / 100) / 10;
    }
    // A run of some files (`vitest run test/api`, `--project alone`) would leave the others with no time.
    const everyFile = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".test.ts"))
      .map((file) => path(join(root, "test", file)));
    if (everyFile.some((file) => !(file in durations))) return;
    writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
    vitest.logger.log(
      `durations of ${modules.length} test files written to ${relative(process.cwd(), DURATIONS_FILE)}`,
    );
  }
}
