// The relay API as an Express app, apart from listening (index.ts), so that
// tests build as many instances as they need. The deployment's chain and
// custody are connected in app-custody.ts, the background workers built in
// app-workers.ts, the limits, servers and headers read in app-http.ts.
import express from "express";
import { privateKeyToAccount } from "viem/accounts";
import type { Redis } from "ioredis";
import type { Config } from "./config/config.ts";
import type { Database } from "./adapters/db/index.ts";
import { authenticate } from "./http/middleware/auth.ts";
import { jsonBodies } from "./http/middleware/body-guard.ts";
import { idempotency } from "./http/middleware/idempotency.ts";
import { loadShedding } from "./http/middleware/load-shed.ts";
import { requestLogging } from "./http/middleware/logging.ts";
import { requestId } from "./http/middleware/request-id.ts";
import { type Logger, createLogger } from "./observability/logger.ts";
import { type Metrics, createMetrics, metricsAccess, trackRelay, trackReserves } from "./http/metrics.ts";
import { type UndeclaredProblem, errorHandler, undeclaredProblems } from "./http/errors.ts";
import { docsRouter } from "./http/openapi/docs.ts";
import { favicon } from "./http/favicon.ts";
import { openApiDocument } from "./http/openapi/document.ts";
import { problems } from "./http/problems.ts";
import { healthRoutes } from "./http/resources/health/router.ts";
import { reservesRoutes } from "./http/resources/reserves/router.ts";
import type { ReservesWatch } from "./domain/reserves/reserves.ts";
import { KeyService } from "./domain/accounts/keys.ts";
import { keyRoutes } from "./http/resources/keys/router.ts";
import { Upstreams } from "./adapters/upstreams.ts";
import { ledgerRoutes } from "./http/resources/ledger/router.ts";
import { depositRoutes } from "./http/resources/deposits/router.ts";
import { ownLeaves } from "./domain/deposits/deposits.ts";
import { type AnyRoute, allowedMethods, mount } from "./http/routes.ts";
import { proofRoutes } from "./http/resources/proofs/router.ts";
import { anonymityRoutes } from "./http/resources/relay/anonymity.ts";
import { relayRoutes } from "./http/resources/relay/router.ts";
import { ProofService } from "./domain/mints/proofs.ts";
import type { Custody } from "./adapters/custody/index.ts";
import { formatZec, parseZsd } from "@zsd/sdk/units";
import { sandboxRoutes } from "./http/resources/sandbox/router.ts";
import type { SandboxPriceFeed } from "./domain/price/sandbox-price.ts";
import { mintRoutes } from "./http/resources/mints/router.ts";
import { MintService } from "./domain/mints/mints.ts";
import type { RelayWorker } from "./workers/relay/worker.ts";
import type { Payouts } from "./workers/payouts/payouts.ts";
import { redemptionRoutes } from "./http/resources/redemptions/router.ts";
import { RedirectService } from "./domain/payouts/redirects.ts";
import { RedemptionService } from "./domain/redemptions/redemptions.ts";
import { PositionService } from "./domain/positions/positions.ts";
import { positionRoutes } from "./http/resources/positions/router.ts";
import { AgentService } from "./domain/agents/agents.ts";
import { agentRoutes } from "./http/resources/agents/router.ts";
import { ComplianceService } from "./domain/compliance/compliance.ts";
import { loadDenyList } from "./domain/compliance/rules.ts";
import { alertRoutes } from "./http/resources/alerts/router.ts";
import type { WebhookWorker } from "./workers/webhooks/worker.ts";
import { GovernanceService } from "./domain/governance/governance.ts";
import { governanceRoutes } from "./http/resources/governance/router.ts";
import { AccountService } from "./domain/accounts/accounts.ts";
import { AccountMail } from "./domain/accounts/mail.ts";
import { type Mailer, createMailer, linkOrigin } from "./adapters/mail/index.ts";
import { RequestAnalytics } from "./domain/analytics/analytics.ts";
import { dashboardRouter } from "./http/dashboard/router.ts";
import { connectDeployment } from "./app-custody.ts";
import { openApiServers, rateLimiters, securityHeaders } from "./app-http.ts";
import { payoutWorker, relayWorker, sandboxPriceFeed, webhookWorker } from "./app-workers.ts";

export interface AppDependencies {
  config: Config;
  db: Database;
  redis?: Redis;
  logger?: Logger;
}

export interface App {
  app: express.Express;
  keys: KeyService;
  custody?: Custody;
  /** Custody's reserves against the chain (read by the worker's passes and after each payout). */
  reserves?: ReservesWatch;
  /** The relay worker (not started: index.ts and tests start it). */
  worker?: RelayWorker;
  /** Sandbox: keeps the ZEC/USD price fresh (not started: index.ts and tests start it). */
  priceFeed?: SandboxPriceFeed;
  /** Payouts of redemptions (moved on by the worker's passes). */
  payouts?: Payouts;
  /** Delivers compliance agents' webhooks from the outbox (not started: index.ts and tests start it). */
  webhooks: WebhookWorker;
  metrics: Metrics;
  openApi: ReturnType<typeof openApiDocument>;
  /** Every operation mounted below /v1 (tests walk it: each authenticated one belongs to a key resource). */
  routes: readonly AnyRoute[];
  /** Per-key request analytics for the dashboard (not started: index.ts starts its flushes). */
  analytics: RequestAnalytics;
  /** The dashboard's outgoing mail (close waits for what is queued, then stops the sandbox's capture). */
  mailer: Mailer;
  /** Problems answered that the OpenAPI document does not declare for their operation, once each. */
  undeclaredProblems: ReadonlyMap<string, UndeclaredProblem>;
}

export function createApp({ config, db, redis, logger: given }: AppDependencies): App {
  const logger = given ?? createLogger(config.LOG_LEVEL);
  const metrics = createMetrics();
  const keys = new KeyService(db);
  const analytics = new RequestAnalytics(db, {
    retentionDays: config.ANALYTICS_RETENTION_DAYS,
    logPerKey: config.REQUEST_LOG_PER_KEY,
    flushMs: config.ANALYTICS_FLUSH_MS,
    onError: (error) => logger.warn({ err: error }, "request analytics flush failed; retried next time"),
  });
  const upstreams = new Upstreams(
    config.INDEXER_URL,
    config.RPC_URL,
    config.UPSTREAM_TIMEOUT_MS,
    config.INDEXER_CACHE_MS,
  );

  const { chain, sealed, governanceChain, custodyCalls, custody, reserves } = connectDeployment(
    config,
    db,
    logger,
    (tx, accountId, deposit) =>
      compliance.emitIn(tx, accountId, "deposit.recorded", {
        leafIndex: deposit.leafIndex,
        amount: formatZec(deposit.amountZat),
        amountZat: deposit.amountZat.toString(),
        noteCommitment: deposit.noteCommitment.toString(),
      }),
    () => webhooks.wake(),
  );

  // Alerts, holds and the rules agent; every change's events go to the webhook outbox.
  const compliance = new ComplianceService(db, {
    environment: config.ENVIRONMENT,
    screening: config.COMPLIANCE_SCREENING,
    verdictTimeoutMs: config.COMPLIANCE_VERDICT_TIMEOUT_MS,
    defaultVerdict: config.COMPLIANCE_DEFAULT_VERDICT,
    rules: {
      enabled: config.RULES_AGENT === "on",
      largeAmountWei: parseZsd(String(config.RULES_LARGE_AMOUNT_ZSD)),
      velocityMax: config.RULES_VELOCITY_MAX,
      velocityWindowSeconds: config.RULES_VELOCITY_WINDOW_SECONDS,
      denied: loadDenyList(config.RULES_DENY_LIST_FILE),
      magicValues: config.ENVIRONMENT === "sandbox",
    },
    onQueued: () => webhooks.wake(),
  });

  const payouts = payoutWorker(config, db, logger, { chain, custodyCalls, custody, sealed, compliance, reserves });
  const relayerAddress = config.RELAYER_PRIVATE_KEY
    ? privateKeyToAccount(config.RELAYER_PRIVATE_KEY as `0x${string}`).address
    : undefined;
  const proofs = new ProofService(
    db,
    chain,
    config.VERIFICATION_KEY_FILE,
    chain && relayerAddress ? { relayer: relayerAddress, minimumFee: parseZsd(config.RELAY_MIN_FEE) } : undefined,
  );
  const positions = new PositionService(db, chain, proofs, {
    environment: config.ENVIRONMENT,
    relaying: chain !== undefined && relayerAddress !== undefined,
    relayer: relayerAddress,
    minimumZat: BigInt(config.REDEMPTION_MIN_ZAT),
    compliance,
    sealed,
  });
  const worker = relayWorker(config, db, logger, {
    chain,
    relayerAddress,
    custody,
    payouts,
    proofs,
    positions,
    compliance,
    governanceChain,
    reserves,
  });
  if (worker) trackRelay(metrics, db);
  if (reserves) trackReserves(metrics, reserves);
  else if (custody) {
    logger.warn("custody is configured without RELAYER_PRIVATE_KEY: no worker scans deposits or pays redemptions");
  }
  const mints = new MintService(db, chain, worker?.address, compliance);
  const redemptions = new RedemptionService(
    db,
    chain,
    config.ENVIRONMENT,
    worker !== undefined,
    BigInt(config.REDEMPTION_MIN_ZAT),
    compliance,
    sealed,
    config.PAYOUT_CONFIRMATIONS,
  );

  const redirects = new RedirectService(db, chain, {
    environment: config.ENVIRONMENT,
    relaying: worker !== undefined,
    sealed,
  });

  const governance = new GovernanceService(db, governanceChain, upstreams, {
    environment: config.ENVIRONMENT,
    delegationsPerDay: config.GOVERNANCE_DELEGATIONS_PER_DAY,
    relaying: worker !== undefined,
  });

  const priceFeed = sandboxPriceFeed(config, logger, chain);

  // Production webhooks go over TLS to public addresses only; the sandbox may call a developer's machine.
  const webhookPolicy = {
    allowHttp: config.ENVIRONMENT === "sandbox",
    allowLoopback: config.ENVIRONMENT === "sandbox",
  };
  const webhooks = webhookWorker(config, db, logger, webhookPolicy);
  const agents = new AgentService(db, {
    policy: webhookPolicy,
    secretGraceSeconds: config.WEBHOOK_SECRET_GRACE_SECONDS,
    onQueued: () => webhooks.wake(),
  });

  const routes = [
    ...healthRoutes(db, upstreams, config.INDEXER_MAX_LAG_BLOCKS, chain),
    ...reservesRoutes(reserves),
    ...keyRoutes(keys, config.MAX_ACTIVE_KEYS),
    // After the ledger's /deposits/leaves, which its /deposits/:depositId would take for an id.
    ...ledgerRoutes(
      upstreams,
      () => positions.collateral(),
      (accountId, from, to) => ownLeaves(db, accountId, from, to),
    ),
    ...depositRoutes(db),
    ...relayRoutes(config, chain, worker?.address),
    ...anonymityRoutes(upstreams),
    ...proofRoutes(proofs),
    ...mintRoutes(mints, config.MINT_WAIT_MS),
    ...redemptionRoutes(redemptions, redirects),
    ...positionRoutes(positions),
    // Before the agents' routes, whose /agents/:agentId would take "alerts" for an id.
    ...alertRoutes(compliance),
    ...agentRoutes(agents),
    ...governanceRoutes(governance),
    // Production has no sandbox routes at all: they answer 404 there.
    ...(config.ENVIRONMENT === "sandbox" ? sandboxRoutes(custody, priceFeed) : []),
  ];
  const { servers, problemTypeBase } = openApiServers(config);
  const openApi = openApiDocument(routes, servers, problemTypeBase);

  const { account: accountLimiter, ip: ipLimiter, public: publicLimiter } = rateLimiters(config, metrics, redis);

  const app = express();
  app.disable("x-powered-by");
  // For the problems Node answers itself (http/server.ts).
  app.locals.problemTypeBase = problemTypeBase;
  // Ledger answers change every block and carry asOfBlock: no ETag hashing per response.
  app.set("etag", false);
  app.set("trust proxy", config.TRUST_PROXY);
  app.use(requestId);
  // A request that changed something may have queued relay work or webhooks: the workers, idle at rest, pass now.
  app.use((req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.on("finish", () => {
        if (res.statusCode >= 400) return;
        worker?.wake();
        webhooks.wake();
      });
    }
    next();
  });
  app.use(requestLogging(logger, metrics, analytics));
  // Helmet's, and no-store: answers are per account and may carry secrets (a new key).
  app.use(securityHeaders(config));
  // Past capacity, 503 at once rather than a stall; health, readiness and metrics stay answerable.
  const shedding = loadShedding({
    maxInFlight: config.LOAD_SHED_MAX_IN_FLIGHT,
    maxEventLoopDelayMs: config.LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS,
    retryAfterSeconds: config.LOAD_SHED_RETRY_AFTER_SECONDS,
    problemTypeBase,
    exempt: (path) => path === "/v1/health" || path === "/v1/health/ready" || path === "/metrics",
  });
  app.use(shedding.handler);
  // Requests with a key are limited per account once authenticated (below);
  // the others, and failed authentications, per client address.
  app.use((req, res, next) => (req.headers.authorization ? next() : ipLimiter(req, res, next)));
  // No cross-origin callers (keys never belong in a browser): OPTIONS is not a method of any route.
  app.options(/.*/, (req, _res, next) => {
    const path = req.path.startsWith("/v1/") ? req.path.slice(3) : undefined;
    const allowed = path ? allowedMethods(routes, path) : [];
    next(allowed.length > 0 ? problems.methodNotAllowed("OPTIONS", allowed) : problems.notFound(req.path));
  });

  // The developer dashboard: HTML forms, its own CSP and error pages, before the API's JSON-only body parsing.
  const accounts = new AccountService(db, config.DASHBOARD_SESSION_HOURS);
  const mailer = createMailer(config, logger);
  const dashboard = dashboardRouter({
    accounts,
    mail: new AccountMail(accounts, mailer, linkOrigin(config)),
    mailCapture: mailer.capture,
    keys,
    analytics,
    agents,
    custody,
    reserves,
    environment: config.ENVIRONMENT,
    failingPayoutAddress: config.SANDBOX_FAILING_PAYOUT_ADDRESS,
    maxActiveKeys: config.MAX_ACTIVE_KEYS,
    sessionHours: config.DASHBOARD_SESSION_HOURS,
    redis,
    logger,
  });
  app.use((req, res, next) =>
    req.path === "/dashboard" || req.path.startsWith("/dashboard/") ? dashboard(req, res, next) : next(),
  );

  // JSON bodies only, refused early when too large, parsed, then guarded.
  app.use(jsonBodies(config.BODY_LIMIT));

  app.get("/v1/openapi.json", publicLimiter, (_req, res) => void res.json(openApi));
  app.get("/favicon.ico", publicLimiter, favicon);
  const docs = docsRouter(openApi.info.title, routes, publicLimiter, config.DOCS_SITE_DIRECTORY);
  // Every page of the reference is under /docs: other requests do not walk its routes.
  app.use((req, res, next) => (req.path === "/docs" || req.path.startsWith("/docs/") ? docs(req, res, next) : next()));
  app.get("/metrics", publicLimiter, async (req, res, next) => {
    const problem = metricsAccess(config, req.get("authorization"));
    if (problem) return next(problem);
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const v1 = express.Router();
  mount(v1, routes, {
    authenticated: [authenticate(keys, config, (req, res, next) => ipLimiter(req, res, next)), accountLimiter],
    // Idempotency-Key applies to POSTs: reads do not pass through it.
    writes: [idempotency(db, config.IDEMPOTENCY_TTL_HOURS, 2 * config.REQUEST_TIMEOUT_MS)],
    public: [publicLimiter],
  });
  app.use("/v1", v1);

  app.use((req, _res, next) => {
    const path = req.path.startsWith("/v1/") ? req.path.slice(3) : undefined;
    const allowed = path ? allowedMethods(routes, path) : [];
    next(allowed.length > 0 ? problems.methodNotAllowed(req.method, allowed) : problems.notFound(req.path));
  });

  const undeclared = new Map<string, UndeclaredProblem>();
  app.use(
    errorHandler({
      bodyLimit: config.BODY_LIMIT,
      logger,
      unlimited: ipLimiter,
      problemTypeBase,
      // Kept once per operation and code, so this stays small however long the process runs.
      inspect: undeclaredProblems(routes, (found) => {
        const key = `${found.operation} ${found.code}`;
        if (undeclared.has(key)) return;
        undeclared.set(key, found);
        logger.warn(found, "answered a problem the OpenAPI document does not declare");
      }),
    }),
  );

  return {
    app,
    keys,
    custody,
    reserves,
    payouts,
    worker,
    priceFeed,
    webhooks,
    metrics,
    openApi,
    routes,
    analytics,
    mailer,
    undeclaredProblems: undeclared,
  };
}
