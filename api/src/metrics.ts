import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

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
