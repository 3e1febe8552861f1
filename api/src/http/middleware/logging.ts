import type { RequestHandler } from "express";
import { type Logger, accessLog } from "../../observability/logger.ts";
import type { Metrics } from "../metrics.ts";
import type { RequestAnalytics } from "../../domain/analytics/analytics.ts";
import type { ApiKey } from "../../domain/accounts/keys.ts";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One log line and one metric sample per request; never the key or the body. */
export function requestLogging(logger: Logger, metrics: Metrics, analytics?: RequestAnalytics): RequestHandler {
  const writeLine = accessLog(logger);
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // The matched template, never the path: labels stay bounded whatever is
      // requested, and logs hold no addresses or ids that a caller put in a path.
      const template = req.route?.path as string | undefined;
      const route =
        (res.locals.route as string | undefined) ??
        (template === undefined ? "unmatched" : `${req.baseUrl}${template}`);
      const labels = {
        method: KNOWN_METHODS.has(req.method) ? req.method : "other",
        route,
        status: String(res.statusCode),
      };
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, seconds);
      // Requests with a known key feed the dashboard's analytics and request log (in memory until flushed).
      const apiKey = res.locals.apiKey as ApiKey | undefined;
      if (analytics && apiKey) {
        const idempotencyKey = req.get("idempotency-key");
        analytics.record({
          apiKeyId: apiKey.id,
          accountId: apiKey.accountId,
          method: labels.method,
          route,
          status: res.statusCode,
          latencyMs: seconds * 1000,
          requestId: String(res.locals.requestId ?? ""),
          // Bounded: the header is the caller's, and the log keeps it only to find a request by it.
          idempotencyKey: idempotencyKey ? idempotencyKey.slice(0, 255) : undefined,
        });
      }
      writeLine({
        requestId: String(res.locals.requestId ?? ""),
        method: req.method,
        route,
        status: res.statusCode,
        ms: Math.round(seconds * 10_000) / 10,
        apiKeyId: apiKey?.id,
      });
    });
    next();
  };
}
