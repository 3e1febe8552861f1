// The relay API as an Express app, apart from listening (index.ts), so that
// tests build as many instances as they need.
import express, { type RequestHandler } from "express";
import helmet from "helmet";
import { privateKeyToAccount } from "viem/accounts";
import type { Redis } from "ioredis";
import { type Config, rateLimitFor } from "./config.ts";
import type { Database } from "./adapters/db/index.ts";
import { authenticate } from "./http/middleware/auth.ts";
import { jsonBodies } from "./http/middleware/body-guard.ts";
import { idempotency } from "./http/middleware/idempotency.ts";
import { requestLogging } from "./http/middleware/logging.ts";
import { createLimiter, rateLimit } from "./http/middleware/rate-limit.ts";
import { requestId } from "./http/middleware/request-id.ts";
import { type Logger, createLogger } from "./logger.ts";
import { type Metrics, createMetrics, metricsAccess, trackRelay } from "./http/metrics.ts";
import { type UndeclaredProblem, errorHandler, undeclaredProblems } from "./http/errors.ts";
import { docsRouter } from "./http/openapi/docs.ts";
import { favicon } from "./http/favicon.ts";
import { openApiDocument } from "./http/openapi/document.ts";
import { problems } from "./http/problems.ts";
import { healthRoutes } from "./http/resources/health/router.ts";
import { KeyService } from "./domain/keys.ts";
import { keyRoutes } from "./http/resources/keys/router.ts";
import { Upstreams } from "./adapters/upstreams.ts";
import { ledgerRoutes } from "./http/resources/ledger/router.ts";
import { type AnyRoute, allowedMethods, mount } from "./http/routes.ts";
import { Chain } from "./adapters/chain.ts";
import { proofRoutes } from "./http/resources/proofs/router.ts";
import { anonymityRoutes } from "./http/resources/relay/anonymity.ts";
import { relayRoutes } from "./http/resources/relay/router.ts";
import { ProofService } from "./domain/proofs.ts";
import type { Custody } from "./adapters/custody/index.ts";
import { Attestor } from "./adapters/custody/attestor.ts";
import { LocalCustody } from "./adapters/custody/local.ts";
import { ZcashdClient, ZcashdCustody } from "./adapters/custody/zcashd.ts";
import { parseShieldedAddress } from "@zsd/sdk/zcash";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { formatZec, parseZsd } from "@zsd/sdk/units";
import { sandboxRoutes } from "./http/resources/sandbox/router.ts";
import { SandboxPriceFeed } from "./domain/sandbox-price.ts";
import { mintRoutes } from "./http/resources/mints/router.ts";
import { MintService } from "./domain/mints.ts";
import { RelayWorker } from "./relay/worker.ts";
import { Payouts } from "./relay/payouts.ts";
import { redemptionRoutes } from "./http/resources/redemptions/router.ts";
import { RedirectService } from "./domain/redirects.ts";
import { RedemptionService } from "./domain/redemptions.ts";
import { PositionService } from "./domain/positions.ts";
import { SealedAddresses } from "./domain/sealed-addresses.ts";
import { positionRoutes } from "./http/resources/positions/router.ts";
import { AgentService } from "./domain/agents.ts";
import { agentRoutes } from "./http/resources/agents/router.ts";
import { ComplianceService } from "./domain/compliance.ts";
import { loadDenyList } from "./domain/rules.ts";
import { alertRoutes } from "./http/resources/alerts/router.ts";
import { WebhookWorker } from "./webhooks/worker.ts";
import { GovernanceChain } from "./adapters/governance.ts";
import { GovernanceService } from "./domain/governance.ts";
import { governanceRoutes } from "./http/resources/governance/router.ts";
import { AccountService } from "./domain/accounts.ts";
import { AccountMail } from "./domain/account-mail.ts";
import { type Mailer, createMailer, linkOrigin } from "./adapters/mail/index.ts";
import { RequestAnalytics } from "./domain/analytics.ts";
import { dashboardRouter } from "./http/dashboard/router.ts";

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

  const chain = config.DEPLOYMENT_FILE
    ? Chain.load(config.DEPLOYMENT_FILE, config.RPC_URL, config.UPSTREAM_TIMEOUT_MS)
    : undefined;
  // Custody's seal keys open the withdraw addresses sealed for this deployment; the sandbox's fallback is the
  // public development key, which the local deployment starts with.
  const sealed = chain
    ? new SealedAddresses(
        config.CUSTODY_SEAL_KEYS ?? (config.ENVIRONMENT === "sandbox" ? [DEV_SEAL_KEY] : []),
        chain.deployment.chainId,
        chain.redemptions,
        config.ENVIRONMENT,
      )
    : undefined;
  // Keys that do not open what holders seal to the chain's current key would fail every payout: said at start.
  if (chain && sealed && config.RELAYER_PRIVATE_KEY) {
    chain.currentSealKey().then(
      (key) =>
        sealed.holds(key) ||
        logger.error({ keyId: key.keyId }, "custody lacks the chain's current seal key: set CUSTODY_SEAL_KEYS"),
      (error: unknown) => logger.warn({ err: error }, "the chain's current seal key could not be read at start"),
    );
  }
  const governanceChain =
    chain && config.DEPLOYMENT_FILE ? GovernanceChain.load(config.DEPLOYMENT_FILE, chain) : undefined;
  const attestor =
    chain && config.ATTESTOR_PRIVATE_KEY
      ? new Attestor(chain, config.ATTESTOR_PRIVATE_KEY as `0x${string}`, (call, error) =>
          logger.warn({ err: error, call }, "attestor call failed at the chain node"),
        )
      : undefined;
  let custody: Custody | undefined;
  if (chain && attestor && config.ZCASHD_RPC_URL) {
    if (!config.CUSTODY_ADDRESS) throw new Error("CUSTODY_ADDRESS is required with ZCASHD_RPC_URL");
    // Refuse at start-up a custody address of the wrong network; use its canonical (lower-case) form.
    const custodyAddress = parseShieldedAddress(
      config.CUSTODY_ADDRESS,
      config.ENVIRONMENT === "production" ? "mainnet" : "testnet",
    ).address;
    custody = new ZcashdCustody(
      db,
      attestor,
      new ZcashdClient(config.ZCASHD_RPC_URL, { user: config.ZCASHD_RPC_USER, password: config.ZCASHD_RPC_PASSWORD }),
      {
        address: custodyAddress,
        minConfirmations: config.ZCASHD_MIN_CONFIRMATIONS,
        privacyPolicy: config.ZCASHD_PRIVACY_POLICY,
      },
    );
  } else if (attestor && config.ENVIRONMENT === "sandbox") {
    custody = new LocalCustody(db, attestor, (tx, accountId, deposit) =>
      compliance.emitIn(tx, accountId, "deposit.recorded", {
        leafIndex: deposit.leafIndex,
        amount: formatZec(deposit.amountZat),
        amountZat: deposit.amountZat.toString(),
        noteCommitment: deposit.noteCommitment.toString(),
      }),
    );
  }

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

  const payouts =
    chain && attestor && custody
      ? new Payouts(db, chain, custody, attestor, {
          compliance,
          sealed: sealed!,
          confirmations: config.PAYOUT_CONFIRMATIONS,
          maxAttempts: config.PAYOUT_MAX_ATTEMPTS,
          retryMs: config.PAYOUT_RETRY_MS,
          onError: (error) => logger.warn({ err: error }, "payout step failed; retried next pass"),
          onReview: (redemptionId, reason) =>
            logger.error(
              { redemptionId, reason },
              "payout held for review: resolve it by hand, it will not be retried",
            ),
        })
      : undefined;
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
  const keeperAddress = config.KEEPER_PAYOUT_ADDRESS ?? config.CUSTODY_ADDRESS;
  const keeperOn = (config.KEEPER ?? (config.ENVIRONMENT === "sandbox" ? "on" : "off")) === "on";
  if (keeperOn && chain && relayerAddress && !keeperAddress) {
    logger.info("the liquidation keeper is off: set KEEPER_PAYOUT_ADDRESS for the ZEC it seizes");
  }
  const worker =
    chain && config.RELAYER_PRIVATE_KEY
      ? new RelayWorker(db, chain, config.RELAYER_PRIVATE_KEY as `0x${string}`, {
          confirmations: config.RELAY_CONFIRMATIONS,
          pollMs: config.RELAY_POLL_MS,
          idlePollMs: Math.max(
            config.RELAY_IDLE_POLL_MS ?? (db.kind === "pglite" ? 10_000 : 2_000),
            config.RELAY_POLL_MS,
          ),
          busyMs: config.RELAY_BUSY_MS,
          stuckAfterMs: config.RELAY_STUCK_AFTER_MS,
          maxAttempts: config.RELAY_MAX_ATTEMPTS,
          mintBatchMax: config.RELAY_MINT_BATCH_MAX,
          mintBatchWaitMs: config.RELAY_MINT_BATCH_WAIT_MS ?? (config.ENVIRONMENT === "production" ? 1000 : 100),
          verifyProof: (proof, publicSignals) => proofs.verifies(proof, publicSignals),
          scanDeposits: custody ? () => custody.scanDeposits() : undefined,
          scanEveryMs: config.DEPOSIT_SCAN_MS,
          payouts,
          compliance,
          governance: governanceChain,
          payoutEveryMs: config.PAYOUT_POLL_MS,
          keeper:
            keeperOn && keeperAddress
              ? {
                  positions,
                  // Ours, not a signer's: any form the wallet reads is taken, sent in the canonical one.
                  payoutAddress: parseShieldedAddress(
                    keeperAddress,
                    config.ENVIRONMENT === "production" ? "mainnet" : "testnet",
                  ).address,
                  batch: config.KEEPER_BATCH,
                }
              : undefined,
          keeperEveryMs: config.KEEPER_POLL_MS,
          leaseMs: config.RELAY_LEASE_MS,
          workerId: config.RELAY_WORKER_ID,
          onError: (error) => logger.warn({ err: error }, "relay worker pass failed"),
        })
      : undefined;
  if (worker) trackRelay(metrics, db);
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

  const priceFeed =
    chain && config.ENVIRONMENT === "sandbox" && config.ORACLE_UPDATER_PRIVATE_KEY
      ? new SandboxPriceFeed(chain, config.ORACLE_UPDATER_PRIVATE_KEY as `0x${string}`, {
          mode: config.SANDBOX_PRICE_FEED,
          everyMs: config.SANDBOX_PRICE_FEED_MS,
          onError: (error) => logger.warn({ err: error }, "sandbox price feed failed; retried next round"),
        })
      : undefined;

  // Production webhooks go over TLS to public addresses only; the sandbox may call a developer's machine.
  const webhookPolicy = {
    allowHttp: config.ENVIRONMENT === "sandbox",
    allowLoopback: config.ENVIRONMENT === "sandbox",
  };
  const webhooks = new WebhookWorker(db, {
    environment: config.ENVIRONMENT,
    policy: webhookPolicy,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryScale: config.WEBHOOK_RETRY_SCALE,
    concurrency: config.WEBHOOK_CONCURRENCY,
    agentConcurrency: config.WEBHOOK_AGENT_CONCURRENCY,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    breaker: {
      timeouts: config.WEBHOOK_BREAKER_TIMEOUTS,
      cooldownMs: config.WEBHOOK_BREAKER_COOLDOWN_MS,
      maxCooldownMs: config.WEBHOOK_BREAKER_MAX_COOLDOWN_MS,
    },
    pollMs: config.WEBHOOK_POLL_MS,
    idlePollMs: config.WEBHOOK_IDLE_POLL_MS ?? (db.kind === "pglite" ? 10_000 : config.WEBHOOK_POLL_MS),
    busyMs: config.RELAY_BUSY_MS,
    leaseMs: config.WEBHOOK_LEASE_MS,
    workerId: config.RELAY_WORKER_ID,
    onError: (error) => logger.warn({ err: error }, "webhook worker pass failed"),
  });
  const agents = new AgentService(db, {
    policy: webhookPolicy,
    secretGraceSeconds: config.WEBHOOK_SECRET_GRACE_SECONDS,
    onQueued: () => webhooks.wake(),
  });

  const routes = [
    ...healthRoutes(db, upstreams, config.INDEXER_MAX_LAG_BLOCKS, chain),
    ...keyRoutes(keys, config.MAX_ACTIVE_KEYS),
    ...ledgerRoutes(upstreams, () => positions.collateral()),
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
  // The document's paths start with /v1: a server is the address before it.
  const root = (baseUrl: string) => baseUrl.replace(/\/v1\/?$/, "");
  const environments = [
    { environment: "production", baseUrl: config.PRODUCTION_BASE_URL, description: "Production" },
    { environment: "sandbox", baseUrl: config.SANDBOX_BASE_URL, description: "Sandbox (testnet)" },
  ] as const;
  const own = environments.find((e) => e.environment === config.ENVIRONMENT)!;
  // Without a configured address this server names itself relatively, as no placeholder could.
  const servers = [
    { url: own.baseUrl ? root(own.baseUrl) : "/", description: `${own.description}: this server` },
    ...environments
      .filter((e) => e !== own && e.baseUrl)
      .map((e) => ({ url: root(e.baseUrl!), description: e.description })),
  ];
  const problemTypeBase = config.PROBLEM_TYPE_BASE ?? `${own.baseUrl ? root(own.baseUrl) : ""}/docs/problems#`;
  const openApi = openApiDocument(routes, servers, problemTypeBase);

  const points = rateLimitFor(config);
  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const limits = { environment: config.ENVIRONMENT, metrics };
  // Per account and environment once authenticated (a new key adds no
  // budget); per client address before that, with a larger budget, so that
  // unauthenticated floods stay bounded too.
  const accountLimiter = rateLimit(
    createLimiter({ name: "account", points, windowSeconds: window, redis }),
    { name: "default", points, windowSeconds: window, ...limits },
    (_req, res) => `account:${res.locals.apiKey.accountId}:${res.locals.apiKey.environment}`,
  );
  const ipPoints = points * 10;
  const ipLimiter = rateLimit(
    createLimiter({ name: "ip", points: ipPoints, windowSeconds: window, redis }),
    { name: "ip", points: ipPoints, windowSeconds: window, ...limits },
    (req) => `ip:${req.ip}`,
  );

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
  app.use(
    helmet({
      // JSON answers and HTML pages with inline style and no script; /docs sets its own (openapi/docs.ts).
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          styleSrc: ["'unsafe-inline'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'none'"],
        },
      },
      strictTransportSecurity:
        config.ENVIRONMENT === "production" ? { maxAge: 63_072_000, includeSubDomains: true } : false,
      referrerPolicy: { policy: "no-referrer" },
    }),
  );
  // Answers are per account and may carry secrets (a new key): no cache keeps them.
  app.use((_req, res, next) => {
    res.setHeader("Cache-Control", "no-store");
    next();
  });
  // Requests with a key are limited per account once authenticated (below);
  // the others, and failed authentications, per client address.
  app.use((req, res, next) => (req.headers.authorization ? next() : ipLimiter(req, res, next)));
  // Public routes cost the address's budget even when a key is sent with them.
  const publicLimiter: RequestHandler = (req, res, next) =>
    req.headers.authorization ? ipLimiter(req, res, next) : next();
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
    environment: config.ENVIRONMENT,
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
  app.use(docsRouter(openApi.info.title, routes, publicLimiter));
  app.get("/metrics", publicLimiter, async (req, res, next) => {
    const problem = metricsAccess(config, req.get("authorization"));
    if (problem) return next(problem);
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const v1 = express.Router();
  mount(v1, routes, {
    authenticated: [
      authenticate(keys, config, (req, res, next) => ipLimiter(req, res, next)),
      accountLimiter,
      idempotency(db, config.IDEMPOTENCY_TTL_HOURS, 2 * config.REQUEST_TIMEOUT_MS),
    ],
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
