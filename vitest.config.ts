import { defineConfig } from "vitest/config";
import { DURATIONS_REPORTER } from "./test/helpers/durations.ts";
import LongestFirst from "./test/helpers/sequencer.ts";
import { TEST_WORKERS } from "./test/helpers/workers.ts";

// Files that measure time against a bound (latency percentiles, timing ratios)
// run after the others, one at a time, so that no other file shares the cores.
const ALONE = ["test/dashboard/account-timing.test.ts", "test/api/workers/webhooks-fairness.test.ts"];

const limits = { testTimeout: 120_000, hookTimeout: 180_000 };

export default defineConfig({
  test: {
    // Runs once for both projects: one Hardhat node per worker.
    globalSetup: ["test/helpers/global-setup.ts"],
    sequence: { sequencer: LongestFirst },
    // In CI a full run that passes also writes each file's time to test/durations.json, which the
    // sequencer orders by (`npm run test:durations` does the same here).
    reporters: ["default", ...(process.env.CI ? [DURATIONS_REPORTER] : [])],
    pool: "forks",
    // A worker runs its files one after another in one process: each file
    // imported viem, snarkjs, the API and PGlite anew, 230 s of the suite's time
    // in all (25 s shared). Files stop what they start in afterAll. (Set here:
    // vitest 3 reads a project's own isolate only under poolOptions.)
    poolOptions: { forks: { minForks: 1, maxForks: TEST_WORKERS, isolate: false } },
    projects: [
      {
        test: {
          ...limits,
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: ALONE,
          // Each worker has its own Hardhat node; files in a worker snapshot and revert it.
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...limits,
          name: "alone",
          include: ALONE,
          // One fork: these files run one after the other.
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
