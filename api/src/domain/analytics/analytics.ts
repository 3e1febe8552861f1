// Per-key request analytics for the dashboard. The request path only adds to
// a histogram in memory (one map lookup); flush() writes one row per key,
// minute, method, route template and status, merging with what other replicas
// wrote, and the last requests of each key for the request log, in batches.
import type { Database } from "../../adapters/db/index.ts";
import {
  type RequestLogInput,
  type RequestStatsCell,
  type StatsGrouping,
  addRequestStats,
  deleteRequestsBefore,
  insertRequestLog,
  latencyHistogramsBy,
  loggedRoutesOf,
  requestLogOf,
  requestSeries,
  requestTotalsBy,
  trimRequestLog,
} from "./store.ts";

/** Upper bounds (ms) of the latency buckets: ×1.25 from 0.25 ms to about a minute; the last is open. */
export const LATENCY_BOUNDS_MS: readonly number[] = Array.from({ length: 56 }, (_, i) => 0.25 * 1.25 ** i);
const BUCKETS = LATENCY_BOUNDS_MS.length + 1;

const bucketOf = (ms: number) => {
  // A binary search: 56 bounds, so at most 6 comparisons on the request path.
  let lo = 0;
  let hi = LATENCY_BOUNDS_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms <= LATENCY_BOUNDS_MS[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
};

/** The latency at quantile q of a histogram: its bucket's upper bound (the last bucket's lower one). */
export function quantile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= rank) return LATENCY_BOUNDS_MS[Math.min(i, LATENCY_BOUNDS_MS.length - 1)]!;
  }
  return LATENCY_BOUNDS_MS.at(-1)!;
}

/** A request as the HTTP layer reports it; `at` defaults to when it is recorded. */
export type RequestSample = Omit<RequestLogInput, "at"> & { at?: Date };

type Cell = RequestStatsCell;

export interface LogEntry {
  /** The entry's place in the log (newer is larger): where a page of older entries starts. */
  id: string;
  at: string;
  apiKeyId: string;
  method: string;
  route: string;
  status: number;
  latencyMs: number;
  requestId: string;
  idempotencyKey: string | null;
}

export type Period = "24h" | "7d" | "30d";
export const PERIODS: Record<Period, { hours: number; step: "hour" | "day" }> = {
  "24h": { hours: 24, step: "hour" },
  "7d": { hours: 24 * 7, step: "day" },
  "30d": { hours: 24 * 30, step: "day" },
};

export interface Breakdown {
  label: string;
  requests: number;
  errors: number;
  p50: number | null;
  p99: number | null;
}

export interface Report {
  period: Period;
  series: { at: string; requests: number; errors: number }[];
  total: Breakdown;
  byKey: Breakdown[];
  byRoute: Breakdown[];
  byStatus: Breakdown[];
}

export interface AnalyticsOptions {
  retentionDays: number;
  logPerKey: number;
  flushMs: number;
  onError?: (error: unknown) => void;
}

// Bounds what a burst can hold in memory between flushes; past it the oldest log entries go.
export const MAX_PENDING_LOG = 10_000;
const PRUNE_EVERY_MS = 3_600_000;

export class RequestAnalytics {
  #cells = new Map<string, Cell>();
  #log: RequestLogInput[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #prunedAt = 0;

  constructor(
    private readonly db: Database,
    private readonly options: AnalyticsOptions,
  ) {}

  /** On the request path: no I/O. */
  record(sample: RequestSample): void {
    const at = sample.at ?? new Date();
    const minute = Math.floor(at.getTime() / 60_000) * 60_000;
    const id = `${minute}\u0000${sample.apiKeyId}\u0000${sample.method}\u0000${sample.route}\u0000${sample.status}`;
    let cell = this.#cells.get(id);
    if (!cell) {
      cell = {
        minute,
        apiKeyId: sample.apiKeyId,
        accountId: sample.accountId,
        method: sample.method,
        route: sample.route,
        status: sample.status,
        count: 0,
        totalMs: 0,
        buckets: new Array<number>(BUCKETS).fill(0),
      };
      this.#cells.set(id, cell);
    }
    cell.count += 1;
    cell.totalMs += sample.latencyMs;
    cell.buckets[bucketOf(sample.latencyMs)]! += 1;
    // The sample is the caller's, made for this call: kept as it is rather than copied.
    sample.at = at;
    this.#log.push(sample as RequestLogInput);
    // Trimmed in halves, not one at a time: shifting a full array per request would cost tens of µs.
    if (this.#log.length >= 2 * MAX_PENDING_LOG) this.#log = this.#log.slice(-MAX_PENDING_LOG);
  }

  start(): void {
    this.#timer ??= setInterval(
      () => void this.flush().catch((e: unknown) => this.options.onError?.(e)),
      this.options.flushMs,
    );
    this.#timer.unref();
  }

  /** Stops the timer and writes what is pending. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Writes what is pending; concurrent calls share one write. */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const cells = [...this.#cells.values()];
    const log = this.#newestPerKey(this.#log.slice(-MAX_PENDING_LOG));
    this.#cells = new Map();
    this.#log = [];
    try {
      for (let i = 0; i < cells.length; i += 200) await addRequestStats(this.db, cells.slice(i, i + 200));
      for (let i = 0; i < log.length; i += 500) await insertRequestLog(this.db, log.slice(i, i + 500));
    } catch (error) {
      // Put back what was not written, so a database hiccup loses nothing but delay.
      for (const cell of cells) this.#merge(cell);
      this.#log = [...log, ...this.#log].slice(-MAX_PENDING_LOG);
      throw error;
    }
    const keys = new Set(log.map((e) => e.apiKeyId));
    for (const key of keys) await trimRequestLog(this.db, key, this.options.logPerKey);
    if (Date.now() - this.#prunedAt > PRUNE_EVERY_MS) {
      this.#prunedAt = Date.now();
      await this.prune();
    }
  }

  /**
   * Only the newest `logPerKey` entries of each key outlive the trim that
   * follows the write: writing the rest only to delete them cost a busy
   * server most of its flush (10,000 rows inserted, then deleted, every 10 s).
   */
  #newestPerKey(log: RequestLogInput[]): RequestLogInput[] {
    const kept = new Map<string, number>();
    const newest: RequestLogInput[] = [];
    for (let i = log.length - 1; i >= 0; i--) {
      const entry = log[i]!;
      const n = kept.get(entry.apiKeyId) ?? 0;
      if (n >= this.options.logPerKey) continue;
      kept.set(entry.apiKeyId, n + 1);
      newest.push(entry);
    }
    return newest.reverse();
  }

  #merge(cell: Cell): void {
    const id = `${cell.minute}\u0000${cell.apiKeyId}\u0000${cell.method}\u0000${cell.route}\u0000${cell.status}`;
    const mine = this.#cells.get(id);
    if (!mine) return void this.#cells.set(id, cell);
    mine.count += cell.count;
    mine.totalMs += cell.totalMs;
    for (let i = 0; i < BUCKETS; i++) mine.buckets[i]! += cell.buckets[i]!;
  }

  /** Drops what is older than the retention. */
  async prune(): Promise<void> {
    const cutoff = new Date(Date.now() - this.options.retentionDays * 86_400_000);
    await deleteRequestsBefore(this.db, cutoff);
  }

  /**
   * The account's last requests, newest first; filtered by key, status (a code or a class such as 4xx) and
   * route; `before` (an entry's id) starts a page after that entry, so that requests logged meanwhile do not
   * shift the pages a reader walks.
   */
  async requests(
    accountId: string,
    filter: { apiKeyId?: string; status?: string; route?: string; before?: string; limit: number },
  ): Promise<LogEntry[]> {
    let low: number | null = null;
    let high: number | null = null;
    if (filter.status && /^[1-5]xx$/.test(filter.status)) {
      low = Number(filter.status[0]) * 100;
      high = low + 99;
    } else if (filter.status && /^[1-5]\d\d$/.test(filter.status)) {
      low = high = Number(filter.status);
    }
    const rows = await requestLogOf(this.db, accountId, {
      apiKeyId: filter.apiKeyId ?? null,
      statusLow: low,
      statusHigh: high,
      route: filter.route ?? null,
      beforeId: filter.before ?? null,
      limit: filter.limit,
    });
    return rows.map((r) => ({
      id: String(r.id),
      at: new Date(r.at).toISOString(),
      apiKeyId: r.api_key_id,
      method: r.method,
      route: r.route,
      status: Number(r.status),
      latencyMs: Number(r.latency_ms),
      requestId: r.request_id,
      idempotencyKey: r.idempotency_key,
    }));
  }

  /** Route templates the account's log holds, for the filter. */
  async loggedRoutes(accountId: string): Promise<string[]> {
    return loggedRoutesOf(this.db, accountId);
  }

  /** Requests, errors (status 400 and above) and latency quantiles of the account over a period. */
  async report(accountId: string, period: Period, apiKeyId?: string): Promise<Report> {
    const { hours, step } = PERIODS[period];
    const since = new Date(Math.floor((Date.now() - hours * 3_600_000) / 60_000) * 60_000);
    const scope = { accountId, since, apiKeyId: apiKeyId ?? null };
    // In UTC, as the buckets filled in below.
    const series = await requestSeries(this.db, step, scope);
    const breakdown = async (grouping: StatsGrouping): Promise<Breakdown[]> => {
      const totals = await requestTotalsBy(this.db, grouping, scope);
      const histograms = await latencyHistogramsBy(this.db, grouping, scope);
      const byLabel = new Map<string, number[]>();
      for (const h of histograms) {
        const label = String(h.label);
        const buckets = byLabel.get(label) ?? new Array<number>(BUCKETS).fill(0);
        buckets[Number(h.i) - 1] = Number(h.n);
        byLabel.set(label, buckets);
      }
      return totals.map((t) => {
        const buckets = byLabel.get(String(t.label)) ?? [];
        return {
          label: String(t.label),
          requests: Number(t.n),
          errors: Number(t.e),
          p50: quantile(buckets, 0.5),
          p99: quantile(buckets, 0.99),
        };
      });
    };
    const [total] = await breakdown("'all'::text");
    // Every hour or day of the period, the empty ones as zeroes, so that a chart spans the period.
    const stepMs = step === "hour" ? 3_600_000 : 86_400_000;
    const found = new Map(series.map((r) => [new Date(r.at).getTime(), r]));
    const filled: Report["series"] = [];
    for (let t = Math.floor(since.getTime() / stepMs) * stepMs; t <= Date.now(); t += stepMs) {
      const r = found.get(t);
      filled.push({ at: new Date(t).toISOString(), requests: Number(r?.n ?? 0), errors: Number(r?.e ?? 0) });
    }
    return {
      period,
      series: filled,
      total: total ?? { label: "all", requests: 0, errors: 0, p50: null, p99: null },
      byKey: await breakdown("api_key_id"),
      byRoute: await breakdown("method || ' ' || route"),
      byStatus: await breakdown("status"),
    };
  }
}
