// Rate limits with IETF RateLimit / RateLimit-Policy headers. In memory for one
// process; in Redis when REDIS_URL is set, so replicas share the budget.
import type { Request, RequestHandler, Response } from "express";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { Metrics } from "../metrics.ts";
import { problems } from "../problems.ts";

export interface LimiterOptions {
  name: string;
  points: number;
  windowSeconds: number;
  redis?: Redis;
}

export type Limiter = RateLimiterMemory | RateLimiterRedis;

export function createLimiter(options: LimiterOptions): Limiter {
  const base = { points: options.points, duration: options.windowSeconds, keyPrefix: `zsd_rl_${options.name}` };
  if (!options.redis) return new RateLimiterMemory(base);
  // If Redis is unreachable, limit in memory rather than refuse every request.
  return new RateLimiterRedis({
    ...base,
    storeClient: options.redis,
    insuranceLimiter: new RateLimiterMemory(base),
  });
}

export function rateLimit(
  limiter: Limiter,
  options: { name: string; points: number; windowSeconds: number; environment: string; metrics: Metrics },
  bucket: (req: Request, res: Response) => string,
): RequestHandler {
  const policy = `"${options.name}";q=${options.points};w=${options.windowSeconds}`;
  return async (req, res, next) => {
    try {
      setRateLimitHeaders(res, options.name, policy, await limiter.consume(bucket(req, res)));
      next();
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return next(rejection);
      setRateLimitHeaders(res, options.name, policy, rejection);
      options.metrics.rateLimited.inc({ environment: options.environment });
      next(problems.rateLimited(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
    }
  };
}

// At module level, not a closure made per request (under tsx each such closure also cost a defineProperty).
function setRateLimitHeaders(res: Response, name: string, policy: string, state: RateLimiterRes): void {
  res.setHeader("RateLimit-Policy", policy);
  res.setHeader(
    "RateLimit",
    `"${name}";r=${Math.max(0, state.remainingPoints)};t=${Math.ceil(state.msBeforeNext / 1000)}`,
  );
}
