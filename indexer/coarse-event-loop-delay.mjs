// Preloaded into the dev stack's indexer (NODE_OPTIONS=--import, see
// scripts/dev.ts). Ponder 0.16 asks prom-client for the event loop's delay
// sampled every millisecond (collectDefaultMetrics with
// eventLoopMonitoringPrecision: 1, in ponder/src/internal/metrics.ts): a timer
// that wakes the process a thousand times a second, forever. On the idle dev
// stack that was most of the indexer's CPU (0.02 of a core, measured with
// perf: hdr_record_value and epoll_pwait every millisecond). Sampled every
// 20 ms, the histogram still says how late the loop runs, at a fiftieth of
// the wake-ups. Plain JavaScript: it loads before any TypeScript loader.
import perfHooks from "node:perf_hooks";

const COARSEST_MS = 20;
const monitor = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options = {}) =>
  monitor({ ...options, resolution: Math.max(options.resolution ?? 10, COARSEST_MS) });
