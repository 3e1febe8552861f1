// The figures BENCHMARKS.md shows, where each is read from in bench/results,
// which way is better, how far it may move before `npm run bench -- --check`
// calls it a regression, and the baseline it stands beside. Timings on this
// 2-core machine are noisy: where a baseline is measured in the same run the
// check compares the ratio, which the load moves far less than either figure.

export type Better = "higher" | "lower";

export interface Figure {
  id: string;
  label: string;
  unit: string;
  /** The file in bench/results and the dotted path of the value in it. */
  file: string;
  path: string;
  better: Better;
  /** The relative change against the committed figure that counts as a regression. */
  tolerance: number;
  /** A bound the figure must keep whatever it was before (BENCHMARKS.md's Target column). */
  target?: number;
  baseline?: { label: string; path?: string; value?: number; source?: string };
}

// Tornado Cash's own figures, from its README ("Specs"), for comparison with a private mint.
const TORNADO = "https://github.com/tornadocash/tornado-core#specs";
const TORNADO_WITHDRAW_GAS = 301_233;

/** Gas is deterministic but for the tree's state: 2 % covers a deeper insertion path. */
const GAS = 0.02;
/** Timings alone: the machine's load moves them by half between runs. */
const TIMING = 0.5;
/** Ratios against a baseline of the same run. */
const RATIO = 0.15;

export const FIGURES: Figure[] = [
  {
    id: "api.throughputRatio",
    label: "GET /v1/supply throughput, share of bare Express",
    unit: "×",
    file: "api.json",
    path: "throughputRatio",
    better: "higher",
    tolerance: RATIO,
    target: 0.5,
    baseline: { label: "bare Express hello", value: 1 },
  },
  {
    id: "api.supplyRps",
    label: "GET /v1/supply throughput",
    unit: "req/s",
    file: "api.json",
    path: "supplyWithKey.requestsPerSecond",
    better: "higher",
    tolerance: TIMING,
    baseline: { label: "bare Express hello", path: "bareExpressHello.requestsPerSecond" },
  },
  {
    id: "api.supplyP50",
    label: "GET /v1/supply latency p50",
    unit: "ms",
    file: "api.json",
    path: "supplyWithKey.latencyMs.p50",
    better: "lower",
    tolerance: TIMING,
    baseline: { label: "bare Express hello", path: "bareExpressHello.latencyMs.p50" },
  },
  {
    id: "api.supplyP99",
    label: "GET /v1/supply latency p99",
    unit: "ms",
    file: "api.json",
    path: "supplyWithKey.latencyMs.p99",
    better: "lower",
    tolerance: TIMING,
    target: 20,
    baseline: { label: "bare Express hello", path: "bareExpressHello.latencyMs.p99" },
  },
  {
    id: "gas.mintTypical",
    label: "Mint, typical (proof, note spent, fee)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.mintTypical",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "Tornado Cash withdraw (published)", value: TORNADO_WITHDRAW_GAS, source: TORNADO },
  },
  {
    id: "gas.mintWithChangeLeaf",
    label: "Mint opening a position with change (single proof, change queued)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.positions.mintWithChangeLeaf",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "Tornado Cash withdraw (published)", value: TORNADO_WITHDRAW_GAS, source: TORNADO },
  },
  {
    id: "gas.mintTypicalWithChange",
    label: "Mint, typical, leaving a change note (change queued)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.mintTypicalWithChange",
    better: "lower",
    tolerance: GAS,
    target: 400_000,
    baseline: { label: "the same mint without change", path: "gas.mintTypicalWithoutChange" },
  },
  {
    id: "gas.mintBatchOf8WithChange",
    label: "Mint with change in a mintBatch of 8 (change queued), per mint",
    unit: "gas",
    file: "contracts.json",
    path: "gas.mintBatchPerMint.withChange.8",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "Tornado Cash withdraw (published)", value: TORNADO_WITHDRAW_GAS, source: TORNADO },
  },
  {
    id: "gas.mintBatchOf8WithChangeAndInsertion",
    label: "The same, plus its leaf's share of inserting 16 queued leaves",
    unit: "gas",
    file: "contracts.json",
    path: "gas.mintBatchOf8WithChangeAndInsertion",
    better: "lower",
    tolerance: GAS,
    target: 260_000,
    baseline: { label: "Tornado Cash withdraw (published)", value: TORNADO_WITHDRAW_GAS, source: TORNADO },
  },
  {
    id: "gas.insertPendingOf16",
    label: "Queued change leaf inserted in a batch of 16, per leaf",
    unit: "gas",
    file: "contracts.json",
    path: "gas.insertPendingPerLeaf.16",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "inserted alone", path: "gas.positions.insertOneQueuedLeaf" },
  },
  {
    id: "gas.spendBatchOf8TopUps",
    label: "Top-up with change in a spendBatch of 8, per top-up",
    unit: "gas",
    file: "contracts.json",
    path: "gas.spendBatchPerTopUp.8",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "the same top-up alone", path: "gas.topUpWithChange" },
  },
  {
    id: "gas.closeToNote",
    label: "Close a position to a note (signed; the note queued)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.positions.closeWithSigToNote",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "closed to a Zcash address", path: "gas.positions.closeWithSigToAddress" },
  },
  {
    id: "gas.recordDeposit",
    label: "Deposit leaf at 1,024 leaves (median)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.recordDepositAt1024Leaves.median",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "into an empty tree", path: "gas.recordDepositEmptyTree" },
  },
  {
    id: "gas.redeem",
    label: "Redeem",
    unit: "gas",
    file: "contracts.json",
    path: "gas.redeem",
    better: "lower",
    tolerance: GAS,
  },
  {
    id: "gas.repay",
    label: "Repay",
    unit: "gas",
    file: "contracts.json",
    path: "gas.positions.repay",
    better: "lower",
    tolerance: GAS,
  },
  ...(["mint", "repay", "topUp"] as const).map((op): Figure => ({
    id: `gas.crowdedBucket.${op}`,
    label: `${op === "topUp" ? "Top-up" : op === "mint" ? "Mint" : "Repay"} into a bucket of 5,000 positions, hinted (ratio order alone)`,
    unit: "gas",
    file: "contracts.json",
    path: `gas.crowdedBucket.of5000.${op}`,
    better: "lower",
    tolerance: GAS,
    baseline: { label: "the same into an empty bucket", path: `gas.crowdedBucket.empty.${op}` },
  })),
  {
    id: "gas.crowdedBucket.mintUnhinted",
    label: "Mint into a bucket of 500 positions without a hint (ratio order alone)",
    unit: "gas",
    file: "contracts.json",
    path: "gas.crowdedBucket.of500.mintUnhinted",
    better: "lower",
    tolerance: GAS,
    baseline: { label: "the same with its hint", path: "gas.crowdedBucket.of500.mint" },
  },
  {
    id: "gas.redistribute",
    label: "Redistribute a position under 100%",
    unit: "gas",
    file: "contracts.json",
    path: "gas.positions.redistributeToAddress",
    better: "lower",
    tolerance: GAS,
  },
  {
    id: "proof.proveMedian",
    label: "Mint proof, prove (median)",
    unit: "ms",
    file: "contracts.json",
    path: "proveMs.median",
    better: "lower",
    tolerance: TIMING,
    target: 1000,
  },
  {
    id: "proof.verifyMedian",
    label: "Mint proof, verify off-chain (median)",
    unit: "ms",
    file: "contracts.json",
    path: "verifyMs.median",
    better: "lower",
    tolerance: TIMING,
    target: 50,
  },
  {
    id: "relay.confirmedPerSecond",
    label: "Relayed mints confirmed, in batches of up to 16",
    unit: "mints/s",
    file: "relay.json",
    path: "batched.confirmedPerSecond",
    better: "higher",
    tolerance: TIMING,
    target: 60,
    baseline: { label: "one a transaction, same run", path: "unbatched.confirmedPerSecond" },
  },
  {
    id: "relay.batchSpeedup",
    label: "Relayed mints confirmed, batched over one a transaction",
    unit: "×",
    file: "relay.json",
    path: "speedup",
    better: "higher",
    tolerance: RATIO,
    target: 3,
  },
  {
    id: "relay.submitToConfirmedMedian",
    label: "Relayed mint in a batch, submit to confirmed (median)",
    unit: "ms",
    file: "relay.json",
    path: "batched.stagesMs.submitToConfirmed.median",
    better: "lower",
    tolerance: TIMING,
  },
  {
    id: "webhooks.backlogPerSecond",
    label: "Webhook backlog drained",
    unit: "deliveries/s",
    file: "webhooks.json",
    path: "backlog.deliveredPerSecond",
    better: "higher",
    tolerance: TIMING,
  },
  {
    id: "webhooks.liveP99",
    label: "Webhook, change to 2xx p99 (live traffic)",
    unit: "ms",
    file: "webhooks.json",
    path: "live.changeTo2xxMs.p99",
    better: "lower",
    tolerance: TIMING,
    baseline: { label: "p50", path: "live.changeTo2xxMs.median" },
  },
  {
    // Another account's 64 deliveries wait on a receiver that answers after 20 s.
    id: "webhooks.besideNoisyNeighbourP99",
    label: "Webhook beside a slow tenant, change to 2xx p99",
    unit: "ms",
    file: "webhooks.json",
    path: "noisyNeighbour.besideMs.p99",
    better: "lower",
    tolerance: TIMING,
    // The bound: the fast tenant's p99 stays under a second.
    target: 1000,
    baseline: { label: "p99 alone", path: "noisyNeighbour.aloneMs.p99" },
  },
  {
    id: "indexer.lagPostgresMedian",
    label: "Indexer lag, PostgreSQL (median)",
    unit: "ms",
    file: "indexer.json",
    path: "lagMs.postgres.median",
    better: "lower",
    tolerance: TIMING,
    target: 100,
    baseline: { label: "PGlite", path: "lagMs.pglite.median" },
  },
  {
    id: "indexer.lagWebSocketMedian",
    label: "Indexer lag, PGlite over WebSocket (median)",
    unit: "ms",
    file: "indexer.json",
    path: "lagMs.pgliteWebSocket.median",
    better: "lower",
    tolerance: TIMING,
    baseline: { label: "PGlite, polling", path: "lagMs.pglite.median" },
  },
  {
    id: "indexer.backfillPostgres",
    label: "Indexer backfill, PostgreSQL",
    unit: "events/s",
    file: "indexer.json",
    path: "backfill.postgres.eventsPerSecondBackfill",
    better: "higher",
    tolerance: TIMING,
    baseline: { label: "PGlite", path: "backfill.pglite.eventsPerSecondBackfill" },
  },
  {
    id: "idle.totalCores",
    label: "npm start's stack at rest, CPU (median of 3 × 60 s)",
    unit: "cores",
    file: "idle-cpu.json",
    path: "after.medians.total",
    better: "lower",
    tolerance: TIMING,
    target: 0.05,
    baseline: { label: "the same stack before the idle work (6411c06), same session", path: "before.medians.total" },
  },
];

/** The value at a dotted path, if it is a finite number. */
export function read(object: unknown, path: string): number | undefined {
  let at: unknown = object;
  for (const part of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return typeof at === "number" && Number.isFinite(at) ? at : undefined;
}

/** How much worse `now` is than `before`, as a fraction (negative: better). */
export function worsening(figure: Figure, now: number, before: number): number {
  if (before === 0) return 0;
  return figure.better === "higher" ? (before - now) / before : (now - before) / before;
}

export function breaksTarget(figure: Figure, value: number): boolean {
  if (figure.target === undefined) return false;
  return figure.better === "higher" ? value < figure.target : value > figure.target;
}
