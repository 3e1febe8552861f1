import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { Metrics } from "../metrics.ts";

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One log line and one metric sample per request; never the key or the body. */
export function requestLogging(logger: Logger, metrics: Metrics): RequestHandler {
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
      logger.info(
        {
          requestId: res.locals.requestId,
          method: req.method,
          route,
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
