// Entry point: validate config, open storage, listen on 127.0.0.1, and on
// SIGTERM/SIGINT stop accepting, drain in-flight requests, then close.
import type { Server } from "node:http";
import { Redis } from "ioredis";
import { createApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config/config.ts";
import { openDatabase } from "./adapters/db/index.ts";
import { createHttpServer } from "./http/server.ts";
import { bufferedStdout, createLogger } from "./observability/logger.ts";

let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

// Buffered: one access-log line per request must not cost a write each.
const destination = bufferedStdout();
const logger = createLogger(config.LOG_LEVEL, destination);
const db = await openDatabase({ url: config.DATABASE_URL, directory: config.PGLITE_DIRECTORY });
const redis = config.REDIS_URL
  ? new Redis(config.REDIS_URL, { enableOfflineQueue: false, lazyConnect: false })
  : undefined;
redis?.on("error", (error) =>
  logger.warn({ err: error.message }, "redis unavailable; rate limits fall back to memory"),
);
const { app, worker, priceFeed, webhooks, analytics, mailer } = createApp({ config, db, redis, logger });
analytics.start();
worker?.start();
webhooks.start();
await priceFeed?.start().catch((error: unknown) => logger.warn({ err: error }, "sandbox price feed did not start"));

const server: Server = createHttpServer(app, {
  headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: 5_000,
});
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  logger.info({ environment: config.ENVIRONMENT, url: `http://${config.HOST}:${port}/v1` }, "listening");
  destination.flush();
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "draining");
  destination.flush();
  const force = setTimeout(() => {
    logger.warn("drain timed out; closing connections");
    server.closeAllConnections();
  }, config!.SHUTDOWN_TIMEOUT_MS);
  force.unref();
  // Stop accepting; idle keep-alive sockets close now, busy ones after their response.
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  priceFeed?.stop();
  // A pass waiting on the chain is not waited for past the timeout: every step
  // is recorded before it acts, so the next start resumes it as after a crash.
  const passEnded = await Promise.race([
    Promise.all([worker?.stop(), webhooks.stop()]).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), config!.SHUTDOWN_TIMEOUT_MS).unref()),
  ]);
  if (passEnded === false) logger.warn("relay or webhook pass still running at shutdown; the next start resumes it");
  await analytics
    .stop()
    .catch((error: unknown) => logger.warn({ err: error }, "request analytics not written at shutdown"));
  // Mail queued by the last requests (a verification link, say) goes out before the database it reads
  // closes; a mail server that does not answer holds the shutdown no longer than the drain may take.
  const mailSent = await Promise.race([
    mailer
      .close()
      .then(() => true)
      .catch((error: unknown) => (logger.warn({ err: error }, "mail not sent at shutdown"), true)),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), config!.SHUTDOWN_TIMEOUT_MS).unref()),
  ]);
  if (!mailSent) logger.warn("mail still queued at shutdown was dropped");
  await db.close();
  await redis?.quit().catch(() => undefined);
  logger.info("stopped");
  destination.flushSync();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
