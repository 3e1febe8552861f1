import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { Metrics } from "../metrics.ts";

/** One log line and one metric sample per request; never the key or the body. */
export function requestLogging(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route?.path as string | undefined) ?? (res.statusCode === 404 ? "unmatched" : req.path);
      const labels = {
        method: req.method,
        route: `${req.baseUrl}${route === "unmatched" ? "" : route}` || route,
        status: String(res.statusCode),
      };
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, seconds);
      logger.info(
        {
          requestId: res.locals.requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(seconds * 10_000) / 10,
          apiKeyId: res.locals.apiKey?.id,
        },
        "request",
      );
    });
    next();
  };
}
