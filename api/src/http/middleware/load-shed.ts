// Load shedding. A server past its capacity that keeps accepting work makes
// every request slow (192 concurrent webhook pings once took up to 60 s each):
// past a bound on requests in progress, or while the event loop runs late, a
// new request is answered 503 `overloaded` with Retry-After at once, before it
// authenticates, claims an Idempotency-Key or touches anything, so a retry
// runs it exactly once. Requests already accepted are never cut short. Health
// and readiness stay answerable: an orchestrator that saw them fail would
// restart a server that is only busy.
import type { RequestHandler } from "express";
import { Problem, sendProblem } from "../problems.ts";

export interface LoadShedOptions {
  /** Requests in progress past which new ones are shed (0: no bound). */
  maxInFlight: number;
  /** Recent event-loop delay past which new requests are shed (0: no bound). */
  maxEventLoopDelayMs: number;
  retryAfterSeconds: number;
  problemTypeBase: string;
  /** Paths never shed. */
  exempt: (path: string) => boolean;
}

/** How often the loop's lateness is sampled, and over how many samples "lately" is. */
const SAMPLE_MS = 50;
const WINDOW_SAMPLES = 8;

/**
 * One sampler per process (the event loop is the process's): each tick
 * measures how late it ran; the delay is the worst of the last few ticks, so
 * a stall is seen for a few hundred milliseconds after it ends, while the
 * requests it held back are answered.
 */
class LoopDelaySampler {
  private readonly lags = new Array<number>(WINDOW_SAMPLES).fill(0);
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.lags[this.next] = Math.max(0, now - this.last - SAMPLE_MS);
      this.next = (this.next + 1) % WINDOW_SAMPLES;
      this.last = now;
    }, SAMPLE_MS);
    // Never what keeps a process alive.
    this.timer.unref();
  }

  /** The worst lateness lately, including the time since the last tick when that is already late. */
  delayMs(): number {
    const pending = this.timer ? Math.max(0, performance.now() - this.last - SAMPLE_MS) : 0;
    return Math.max(pending, ...this.lags);
  }
}

const sampler = new LoopDelaySampler();

export interface LoadShedding {
  handler: RequestHandler;
  /** Requests in progress now (exempt paths aside). */
  inFlight(): number;
  /** Requests shed since start. */
  shed(): number;
}

export function loadShedding(options: LoadShedOptions): LoadShedding {
  if (options.maxEventLoopDelayMs > 0) sampler.start();
  let inFlight = 0;
  let shed = 0;
  const overloaded = (why: string) =>
    new Problem(
      503,
      "overloaded",
      "Overloaded",
      `The server is over capacity (${why}) and did not start this request; nothing was done. ` +
        `Retry after ${options.retryAfterSeconds} s (a POST with the same Idempotency-Key is safe).`,
      { headers: { "Retry-After": String(options.retryAfterSeconds) } },
    );

  const handler: RequestHandler = (req, res, next) => {
    if (options.exempt(req.path)) return next();
    let why: string | undefined;
    if (options.maxInFlight > 0 && inFlight >= options.maxInFlight) why = "too many requests in progress";
    else if (options.maxEventLoopDelayMs > 0 && sampler.delayMs() > options.maxEventLoopDelayMs)
      why = "its event loop is running late";
    if (why) {
      shed++;
      // Answered here, not through the error handler: it would spend the rate limiter's work on a request
      // the server has no room for.
      res.setHeader("Connection", "close");
      return sendProblem(res, overloaded(why), options.problemTypeBase, res.locals.requestId as string | undefined);
    }
    inFlight++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      inFlight--;
    };
    // `finish` when the answer left, `close` when the client went first: whichever comes, once.
    res.once("finish", release);
    res.once("close", release);
    next();
  };
  return { handler, inFlight: () => inFlight, shed: () => shed };
}
