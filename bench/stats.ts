/** Summary statistics for noisy timings: report medians and spread, never a single run. */
export function summarize(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    n: sorted.length,
    median: round(sorted.length % 2 ? at(0.5) : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2),
    min: round(sorted[0]!),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1]!),
  };
}
