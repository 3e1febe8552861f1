import type { ReservesWatch } from "../domain/reserves/reserves.ts";
import { timingSafeEqual } from "node:crypto";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Database } from "../adapters/db/index.ts";
import { mintCounts } from "../domain/mints/store.ts";
import { oldestUnfinishedAge, payoutCounts } from "../domain/payouts/store.ts";
import type { Config } from "../config/config.ts";
import { type Problem, problems } from "./problems.ts";

export interface Metrics {
  registry: Registry;
  requests: Counter<"method" | "route" | "status">;
  duration: Histogram<"method" | "route" | "status">;
  rateLimited: Counter<"environment">;
}

/** A registry per app, so that test instances do not share counters. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: "zsd_api_requests_total",
      help: "HTTP requests by method, route and status",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    }),
    duration: new Histogram({
      name: "zsd_api_request_duration_seconds",
      help: "HTTP request latency by method, route and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: "zsd_api_rate_limited_total",
      help: "Requests rejected by the rate limiter",
      labelNames: ["environment"],
      registers: [registry],
    }),
  };
}

/**
 * Mints and payouts by status, read from the database at each scrape, so that
 * an operator can alert on a queue that grows or a payout held for review.
 */
export function trackRelay(metrics: Metrics, db: Database): void {
  new Gauge({
    name: "zsd_relay_items",
    help: "Relayed mints and redemption payouts by status",
    labelNames: ["kind", "status"],
    registers: [metrics.registry],
    async collect() {
      const [mints, payouts] = await Promise.all([mintCounts(db), payoutCounts(db)]);
      this.reset();
      for (const r of mints) this.set({ kind: "mint", status: r.status }, Number(r.n));
      for (const r of payouts) this.set({ kind: "payout", status: r.status }, Number(r.n));
    },
  });
  new Gauge({
    name: "zsd_payout_oldest_unfinished_seconds",
    help: "Age of the oldest payout neither completed nor failed and held for its owner (0 when none): alert when it grows",
    registers: [metrics.registry],
    async collect() {
      this.set(Number((await oldestUnfinishedAge(db)) ?? 0));
    },
  });
}

/** Custody's reserves against the chain, from the newest reading: alert on zsd_reserves_shortfall = 1. */
export function trackReserves(metrics: Metrics, reserves: ReservesWatch): void {
  const latest = async () => (await reserves.store.recent(1))[0];
  new Gauge({
    name: "zsd_reserves_difference_zat",
    help: "Custody's ZEC (held + in flight) less what the chain counts, in zatoshi, at the newest reading: negative is short",
    registers: [metrics.registry],
    async collect() {
      const reading = await latest();
      this.set(Number(reading?.differenceZat ?? 0n));
    },
  });
  new Gauge({
    name: "zsd_reserves_shortfall",
    help: "1 while custody's ZEC falls short of the chain's count by more than RESERVES_TOLERANCE_ZAT (mints stop), else 0",
    registers: [metrics.registry],
    async collect() {
      this.set((await latest())?.status === "shortfall" ? 1 : 0);
    },
  });
  // A watch that stopped reading leaves the two above at their last values: alert on this too.
  new Gauge({
    name: "zsd_reserves_reading_age_seconds",
    help: "Seconds since the newest reserves reading (+Inf before the first): alert well above RESERVES_CHECK_MS",
    registers: [metrics.registry],
    async collect() {
      const reading = await latest();
      this.set(reading ? Math.max(0, (Date.now() - reading.readAt.getTime()) / 1000) : Number.POSITIVE_INFINITY);
    },
  });
  new Gauge({
    name: "zsd_reserves_pause_failed",
    help: "1 when the guardian's transaction the newest reading called for (stop or resume new mints) failed, else 0",
    registers: [metrics.registry],
    async collect() {
      this.set((await latest())?.pauseFailed ? 1 : 0);
    },
  });
}

/** /metrics takes METRICS_TOKEN as a bearer token when one is set; production serves it only then. */
export function metricsAccess(config: Config, authorization: string | undefined): Problem | undefined {
  if (!config.METRICS_TOKEN) {
    return config.ENVIRONMENT === "production" ? problems.notFound("/metrics") : undefined;
  }
  const presented = Buffer.from(authorization ?? "");
  const expected = Buffer.from(`Bearer ${config.METRICS_TOKEN}`);
  if (presented.length === expected.length && timingSafeEqual(presented, expected)) return undefined;
  return problems.unauthorized("invalid_metrics_token", "Send the metrics token as `Authorization: Bearer <token>`.");
}
