import { BaseSequencer, type TestSpecification } from "vitest/node";

// The files that took longest in a full run, longest first. Two files run at a
// time: started last, one of these would leave the other worker idle for
// minutes at the end. A clean clone has no timings cached for vitest to go by.
const LONGEST = [
  "test/sdk/client-e2e.test.ts",
  "test/api/process.test.ts",
  "test/api/lifecycle.test.ts",
  "test/contracts/books.test.ts",
  "test/contracts/mint.test.ts",
  "test/indexer/indexer.test.ts",
  "test/api/relay-crash.test.ts",
  "test/api/governance-crash.test.ts",
  "test/indexer/watchdog.test.ts",
  "test/dashboard/dev-account.test.ts",
  "test/api/relay-nonces.test.ts",
  "test/api/keys-cli.test.ts",
  "test/api/webhooks-crash.test.ts",
  "test/readme-walkthrough.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST.findIndex((path) => file.moduleId.endsWith(path));
      return at === -1 ? LONGEST.length : at;
    };
    const sorted = await super.sort(files);
    // Stable: within the rest, vitest's order (its cached timings, when it has them).
    return sorted
      .map((file, i) => ({ file, i }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.i - b.i)
      .map((x) => x.file);
  }
}
