import { BaseSequencer, type TestSpecification } from "vitest/node";

// The files that took longest in a full run, longest first (a full run on
// a43e16b with isolate: false, on a quiet host). Two files run at a time:
// started last, one of these would leave the other worker idle for minutes at
// the end. A clean clone has no timings cached for vitest to go by.
const LONGEST = [
  "test/sdk/client-e2e.test.ts",
  "test/indexer/indexer.test.ts",
  "test/sdk/python.test.ts",
  "test/contracts/positions.test.ts",
  "test/api/relay-crash.test.ts",
  "test/api/leaf-inserter.test.ts",
  "test/contracts/books.test.ts",
  "test/api/process.test.ts",
  "test/contracts/invariants.test.ts",
  "test/api/mints.test.ts",
  "test/api/compliance.test.ts",
  "test/indexer/watchdog.test.ts",
  "test/docs/walkthroughs.test.ts",
  "test/sdk/client-pending.test.ts",
  "test/api/ledger.test.ts",
  "test/api/payouts.test.ts",
  "test/contracts/mint.test.ts",
  "test/api/spend-batch-relay.test.ts",
  "test/api/lifecycle.test.ts",
  "test/dashboard/forms.test.ts",
  "test/api/positions.test.ts",
  "test/indexer/resting-transport.test.ts",
  "test/api/keys-cli.test.ts",
  "test/api/reverts.test.ts",
  "test/dashboard/dev-account.test.ts",
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
