import { fileURLToPath } from "node:url";
import bytes from "bytes";
import { z } from "zod";
import { type SealSecretKey, sealKeyFromSecret } from "@zsd/sdk/seal";

const url = z.url({ protocol: /^https?$/ });
const positiveInt = z.coerce.number().int().positive();

/** Every setting of the API, from environment variables (see api/.env.example). */
export const configSchema = z.object({
  ENVIRONMENT: z
    .enum(["sandbox", "production"])
    .default("sandbox")
    .meta({ description: "`sandbox` or `production`: which keys it accepts, what it exposes" }),
  HOST: z.string().default("127.0.0.1").meta({ description: "address to listen on" }),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(3000)
    .meta({ description: "port to listen on", readBy: "API; `bench/bare-express.ts`" }),
  /**
   * Public base addresses (…/v1) of each environment, as clients call them:
   * the OpenAPI document's servers and the 401 a key of the other environment
   * gets. Unset, the document names this server by a relative address.
   */
  PRODUCTION_BASE_URL: url.optional().meta({
    description:
      "public base address (…/v1) of production: a server of the OpenAPI document, named in the 401 a production key gets elsewhere; unset, the document names this server relatively (`/`)",
  }),
  SANDBOX_BASE_URL: url.optional().meta({ description: "the same, for the sandbox" }),
  /**
   * Each problem's `type` is this prefix and its code. Unset: this server's
   * own /docs/problems# page (absolute when this environment's base address
   * is set, else relative to this server).
   */
  PROBLEM_TYPE_BASE: url.optional().meta({
    description: "prefix of each problem's `type` link, to which its `code` is appended",
    default: "this environment's base address less `/v1`, then `/docs/problems#` (relative without one)",
  }),
  DATABASE_URL: z.string().startsWith("postgres").optional().meta({
    description: "PostgreSQL (`postgres…`) instead of embedded PGlite",
    default: "unset: PGlite",
    readBy: "API; indexer; `npm start` (passes it to its indexer)",
  }),
  PGLITE_DIRECTORY: z.string().default("./.data/api").meta({
    description: "PGlite's directory when `DATABASE_URL` is unset",
  }),
  REDIS_URL: z
    .string()
    .startsWith("redis")
    .optional()
    .meta({ description: "Redis (`redis…`) shared by replicas for rate limits", default: "unset: in memory" }),
  INDEXER_URL: url.default("http://127.0.0.1:42069").meta({ description: "the indexer" }),
  RPC_URL: url.default("http://127.0.0.1:8545").meta({
    description: "the chain's JSON-RPC (http or https)",
    readBy: "API; indexer; deploy (`--rpc-url` wins); set by `hardhat run`",
  }),
  /** deployments/<network>.json of the contracts this API relays to (proofs and mints need it). */
  DEPLOYMENT_FILE: z.string().optional().meta({
    description: "the deploy script's manifest (addresses, start blocks, chain id)",
  }),
  /** Private key (0x…) of custody's on-chain account: settles payouts, submits attested deposit batches. */
  CUSTODY_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
    .optional()
    .meta({
      description:
        "custody's on-chain account (0x…, 32 bytes): settles payouts (`Redemptions.CUSTODY_ROLE`) and submits attested deposit batches",
    }),
  /** Sandbox only: private key (0x…) of the oracle updater, for the price feeder and POST /v1/sandbox/price. */
  ORACLE_UPDATER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
    .optional()
    .meta({ description: "sandbox: oracle updater key for the price feeder and `POST /v1/sandbox/price`" }),
  /**
   * Sandbox only: private key (0x…) of the second price feed's updater. With it the feeder keeps
   * both feeds the contracts read; without it only the primary (the second goes stale, unused while
   * the primary is healthy).
   */
  SECONDARY_ORACLE_UPDATER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
    .optional()
    .meta({ description: "sandbox: the second feed's updater key; with it the price feeder keeps both feeds" }),
  /** Sandbox: how the feeder keeps the price fresh — the same price, a gentle random walk, or not at all. */
  SANDBOX_PRICE_FEED: z
    .enum(["fixed", "walk", "paused"])
    .default("fixed")
    .meta({ description: "sandbox feeder: `fixed`, `walk` or `paused`" }),
  /** Sandbox: how often the feeder posts (well under the contracts' maxPriceAge of an hour). */
  SANDBOX_PRICE_FEED_MS: positiveInt.default(600_000).meta({ description: "how often the sandbox feeder posts" }),
  /**
   * Sandbox: simulated deposits arriving within this many ms of the first go
   * on the chain in one batch, which shows their total, not each amount.
   */
  SANDBOX_DEPOSIT_WINDOW_MS: z.coerce.number().int().min(0).max(10_000).default(200).meta({
    description:
      "sandbox deposits arriving within this window of the first are recorded in one batch (What the chain shows)",
  }),
  /**
   * Sandbox: an address the sandbox's Zcash node refuses every payment to, named on the dashboard's
   * Sandbox page so that a payout custody cannot pay, and its redirect, can be tried. The API treats
   * it as any other address: only the node refuses it. npm start sets its simulated node's.
   */
  SANDBOX_FAILING_PAYOUT_ADDRESS: z.string().optional().meta({
    description:
      "sandbox: the address its Zcash node refuses every payment to, shown on the dashboard's Sandbox page (npm start sets its simulated node's)",
  }),
  /** Private key (0x…) of the relayer that submits mints and takes the proofs' fees. */
  RELAYER_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
    .optional()
    .meta({
      description: "relayer key that submits mints and redemptions and takes the fees",
      default: "unset: no relaying",
    }),
  /** Blocks on top of a mint's block before it counts as confirmed (1 = mined). */
  RELAY_CONFIRMATIONS: positiveInt.default(1).meta({ description: "blocks before a mint counts as confirmed" }),
  RELAY_POLL_MS: positiveInt.default(200).meta({
    description:
      "how often the relay worker polls while busy (for `RELAY_BUSY_MS` after a request that changed state, or the start)",
  }),
  /**
   * The relay's poll once nothing was asked of this replica for RELAY_BUSY_MS (a request that changes state
   * wakes it); never faster than RELAY_POLL_MS. Default: 10000 on embedded PGlite, which no other replica
   * shares (what reaches it unasked, a redemption requested on-chain or a verdict timing out, waits up to
   * this long); 2000 on PostgreSQL, where work queued by another replica is found within it.
   */
  RELAY_IDLE_POLL_MS: positiveInt.max(60_000).optional().meta({
    description:
      "how often it polls at rest (never faster than `RELAY_POLL_MS`); work another replica queued, or that reaches it unasked (a redemption requested on-chain), waits at most this long",
    default: "`10000` on PGlite, `2000` on PostgreSQL",
  }),
  /** How long after a request that changed state (or the start) the relay polls every RELAY_POLL_MS. */
  RELAY_BUSY_MS: positiveInt.max(3_600_000).default(60_000).meta({
    description:
      "how long after such a request it keeps polling every `RELAY_POLL_MS`: long enough to see its transaction mined and confirmed",
  }),
  RELAY_STUCK_AFTER_MS: positiveInt
    .default(30_000)
    .meta({ description: "a relayed transaction pending longer is replaced with higher fees" }),
  /** Refusals of a mint or redemption (a revert when its gas is estimated) before it is failed. */
  RELAY_MAX_ATTEMPTS: positiveInt
    .default(20)
    .meta({ description: "refusals (reverting gas estimates) before a mint or redemption fails" }),
  /** Most queued mints one relay transaction carries (StableMinter.mintBatch takes 32 at most); 1 sends each alone. */
  RELAY_MINT_BATCH_MAX: positiveInt.max(32).default(16).meta({
    description: "most queued mints one relay transaction carries (`mintBatch`, at most 32); `1` sends each alone",
  }),
  /**
   * Most queued note spends (top-ups and note withdrawals) one relay transaction carries
   * (StableMinter.spendBatch takes 32 at most); 1 sends each alone. Spends queued by one pass go
   * together: none waits for others.
   */
  RELAY_SPEND_BATCH_MAX: positiveInt.max(32).default(16).meta({
    description:
      "most queued top-ups and note withdrawals one relay transaction carries (`spendBatch`, at most 32); `1` sends each alone",
  }),
  /**
   * How long the oldest queued mint waits for others to fill its batch before
   * it goes out with what is there. Unset: 1000 in production, 100 in the
   * sandbox (a wallet testing there waits a tenth of a second, not a second).
   */
  RELAY_MINT_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(60_000).optional().meta({
    description: "how long the oldest queued mint waits for others to fill its batch",
    default: "`1000` in production, `100` in the sandbox",
  }),
  /**
   * Change leaves waiting in the registry's queue (they are not spendable there) that make the relay insert
   * them at once; fewer wait up to LEAF_BATCH_WAIT_MS for others, so that one insertion carries several.
   */
  LEAF_BATCH_MAX: positiveInt.max(1024).default(16).meta({
    description:
      "queued change leaves that make the relay insert them at once (at most 1024); fewer wait for `LEAF_BATCH_WAIT_MS`",
  }),
  LEAF_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(1000).meta({
    description: "how long the oldest queued change leaf waits for others before the relay inserts the queue",
  }),
  /** Most queued leaves one insertion puts in the tree (its gas limit, which counts only the leaves sent, stays under 2^24 up to 256). */
  LEAF_INSERT_MAX: positiveInt.max(256).default(64).meta({
    description: "most queued leaves one insertion puts in the tree (at most 256); the rest wait for the next",
  }),
  /** How long a worker's lease on its relayer key lasts; a replica takes over a silent worker after it. */
  RELAY_LEASE_MS: positiveInt.default(15_000).meta({ description: "a worker's lease on its relayer key" }),
  /** A stable name for this replica's worker, so that after a crash it takes its own lease back at once. */
  RELAY_WORKER_ID: z.string().min(1).max(100).optional().meta({ description: "stable name of this replica's worker" }),
  /** How often the worker moves payouts on (discovers redemptions, follows the wallet). */
  PAYOUT_POLL_MS: positiveInt.default(1000).meta({ description: "how often payouts move on" }),
  /** Payments the custody wallet refuses before a payout is failed on-chain (its ZEC held for the owner to redirect). */
  PAYOUT_MAX_ATTEMPTS: positiveInt
    .default(10)
    .meta({ description: "refused payments before a payout is failed and held" }),
  /** Blocks a redemption needs (its own included) before ZEC is paid for it: a reorganisation must not undo a paid burn. */
  PAYOUT_CONFIRMATIONS: positiveInt.default(12).meta({ description: "blocks a redemption needs before ZEC is paid" }),
  PAYOUT_RETRY_MS: positiveInt
    .default(60_000)
    .meta({ description: "wait before retrying a refused payout (doubling, up to an hour)" }),
  /** The least fee (ZSD) a proof must bind, paid to this relay's relayer, for this relay to mint it. */
  RELAY_MIN_FEE: z
    .string()
    .regex(/^\d{1,30}(\.\d{1,18})?$/, 'a ZSD amount, e.g. "0.5"')
    .default("0")
    .meta({ description: "least fee (ZSD) a proof must bind to be minted here" }),
  /**
   * The least ZEC, in zatoshi, a relayed redemption may pay out. A shielded
   * payment costs its sender 10,000 zatoshi under ZIP 317 (5,000 per action,
   * two actions at least): paying less than that is not worth a transaction.
   */
  REDEMPTION_MIN_ZAT: positiveInt
    .default(10_000)
    .meta({ description: "least ZEC (zatoshi) a relayed redemption may pay out" }),
  /**
   * The liquidation keeper: finds positions under the liquidation ratio and
   * liquidates them with the relayer's ZSD. Unset: on in the sandbox, off in
   * production. It runs only with a relayer key and somewhere to pay the
   * seized ZEC (KEEPER_PAYOUT_ADDRESS, else CUSTODY_ADDRESS).
   */
  KEEPER: z.enum(["on", "off"]).optional().meta({
    description:
      "the liquidation keeper (`on`/`off`): liquidates positions under the liquidation ratio with the relayer's ZSD",
    default: "on in the sandbox, off in production",
  }),
  KEEPER_PAYOUT_ADDRESS: z.string().optional().meta({
    description: "shielded address the keeper's seized ZEC is paid to (without one the keeper stays off)",
    default: "`CUSTODY_ADDRESS`",
  }),
  KEEPER_POLL_MS: positiveInt
    .default(15_000)
    .meta({ description: "how often the keeper looks for positions to liquidate" }),
  KEEPER_BATCH: positiveInt
    .default(200)
    .meta({ description: "positions the keeper reads per look, from where the last stopped" }),
  /** Gasless delegations (POST /v1/governance/delegations) an account may submit per 24 hours: the relay pays their gas. */
  GOVERNANCE_DELEGATIONS_PER_DAY: positiveInt
    .default(20)
    .meta({ description: "gasless delegations an account may submit per 24 hours" }),
  /** How long POST /v1/mint with a proof hash waits for the transaction. */
  MINT_WAIT_MS: positiveInt.default(30_000).meta({ description: "how long `POST /v1/mint` with a proof hash waits" }),
  /** zcashd / Zallet JSON-RPC of the custody wallet; when set, it is the custody (any environment). */
  ZCASHD_RPC_URL: url
    .optional()
    .meta({ description: "zcashd / Zallet JSON-RPC of the custody wallet", default: "unset: local custody" }),
  ZCASHD_RPC_USER: z.string().default("").meta({ description: "the custody wallet's JSON-RPC user", default: "empty" }),
  ZCASHD_RPC_PASSWORD: z.string().default("").meta({ description: "its password", default: "empty" }),
  /**
   * Custody's seal keys, which open the withdraw addresses sealed to them:
   * `keyId:0x<32-byte X25519 secret>`, comma-separated, the current
   * one and those still in their grace period on Redemptions. Required in
   * production with a deployment; the sandbox falls back to the public
   * development key (DEV_SEAL_KEY, key id 1).
   */
  CUSTODY_SEAL_KEYS: z
    .string()
    .optional()
    .transform((value, ctx): SealSecretKey[] | undefined => {
      if (value === undefined) return undefined;
      const keys: SealSecretKey[] = [];
      for (const entry of value.split(",").map((e) => e.trim())) {
        const match = /^(\d{1,10}):(0x[0-9a-fA-F]{64})$/.exec(entry);
        const keyId = match ? Number(match[1]) : NaN;
        if (!match || keyId < 1 || keyId > 0xffffffff) {
          ctx.addIssue({
            code: "custom",
            message: "a comma list of keyId:0x<64 hex digits> (key id 1 to 4294967295, the X25519 secret)",
          });
          return z.NEVER;
        }
        if (keys.some((k) => k.keyId === keyId)) {
          ctx.addIssue({ code: "custom", message: `key id ${keyId} is given twice` });
          return z.NEVER;
        }
        keys.push(sealKeyFromSecret(keyId, match[2] as `0x${string}`));
      }
      return keys;
    })
    .meta({
      description:
        "custody's seal keys, which open sealed withdraw addresses: comma list `keyId:0x<32-byte X25519 secret>` (every key still in its grace period); required in production",
      default: "sandbox: the public dev key (`DEV_SEAL_KEY`, keyId 1)",
    }),
  /** The custody's shielded address (deposits arrive there, payouts leave from it). */
  CUSTODY_ADDRESS: z.string().optional().meta({ description: "the custody's shielded address" }),
  /**
   * The attestors (http://host:port each, comma-separated): each signs a deposit batch only for
   * deposits its own Zcash node shows; the registry records a batch under its set's threshold.
   */
  ATTESTOR_URLS: z
    .string()
    .optional()
    .transform((value, ctx): string[] | undefined => {
      if (value === undefined) return undefined;
      const urls = value.split(",").map((u) => u.trim());
      for (const candidate of urls) {
        if (!url.safeParse(candidate).success) {
          ctx.addIssue({
            code: "custom",
            message: `a comma list of http(s) addresses; ${JSON.stringify(candidate)} is not one`,
          });
          return z.NEVER;
        }
      }
      return urls;
    })
    .meta({
      description:
        "the attestors (`http://host:port`, comma-separated); deposits are recorded only under their quorum ([trust model](../trust.md))",
    }),
  RESERVES_TOLERANCE_ZAT: z.coerce.number().int().min(0).default(100_000).meta({
    description: "a shortfall of custody's ZEC against the chain's count beyond this alerts and stops new mints",
  }),
  RESERVES_CHECK_MS: positiveInt
    .default(60_000)
    .meta({ description: "how often custody's reserves are read against the chain (also after every settled payout)" }),
  /** Private key (0x…) of the guardian (StableMinter's GUARDIAN_ROLE): stops new mints on a reserves shortfall. */
  GUARDIAN_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, "a 32-byte hex private key")
    .optional()
    .meta({
      description:
        "the guardian (`StableMinter.GUARDIAN_ROLE`): stops new mints on a reserves shortfall, resumes them once made good",
    }),
  ATTESTOR_TIMEOUT_MS: positiveInt
    .default(10_000)
    .meta({ description: "how long the coordinator waits for each attestor's signature" }),
  ZCASHD_MIN_CONFIRMATIONS: positiveInt.default(10).meta({ description: "confirmations before a deposit counts" }),
  /** zcashd's privacy policy for payouts (z_sendmany); FullPrivacy never reveals amounts across pools. */
  ZCASHD_PRIVACY_POLICY: z
    .enum([
      "FullPrivacy",
      "AllowRevealedAmounts",
      "AllowRevealedRecipients",
      "AllowRevealedSenders",
      "AllowFullyTransparent",
      "AllowLinkingAccountAddresses",
      "NoPrivacy",
    ])
    .default("FullPrivacy")
    .meta({ description: "zcashd's privacy policy for payouts" }),
  /** How often the worker looks for new deposits in the custody wallet. */
  DEPOSIT_SCAN_MS: positiveInt
    .default(30_000)
    .meta({ description: "how often the custody wallet is scanned for deposits" }),
  /** The collateral circuit's wasm and proving key, served at /v1/relay/circuit/ for provers in browsers. */
  CIRCUIT_WASM_FILE: z
    .string()
    .default(fileURLToPath(new URL("../../../circuits/build/collateral.wasm", import.meta.url)))
    .meta({ description: "the circuit's wasm, served to provers", default: "`circuits/build/collateral.wasm`" }),
  CIRCUIT_ZKEY_FILE: z
    .string()
    .default(fileURLToPath(new URL("../../../circuits/build/collateral.zkey", import.meta.url)))
    .meta({ description: "its proving key, served to provers", default: "`circuits/build/collateral.zkey`" }),
  VERIFICATION_KEY_FILE: z
    .string()
    .default(fileURLToPath(new URL("../../../circuits/build/verification_key.json", import.meta.url)))
    .meta({ description: "the circuit's verification key", default: "`circuits/build/verification_key.json`" }),
  DOCS_SITE_DIRECTORY: z
    .string()
    .default(fileURLToPath(new URL("../../../docs/.vitepress/dist", import.meta.url)))
    .meta({
      description: "the documentation site `npm run docs` builds, served at `/docs/site/` (a 404 says how to build it)",
      default: "`docs/.vitepress/dist`",
      readBy: "API; `npm start` (to say whether it is built)",
    }),
  UPSTREAM_TIMEOUT_MS: positiveInt.default(2000).meta({ description: "timeout of calls to the indexer and the chain" }),
  INDEXER_CACHE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(5000)
    .default(250)
    .meta({ description: "cache of indexer answers (0–5000)" }),
  /** Readiness answers 503 indexer_lagging when the indexer is more blocks than this behind the chain head. */
  INDEXER_MAX_LAG_BLOCKS: z.coerce
    .number()
    .int()
    .min(0)
    .default(10)
    .meta({ description: "readiness fails when the indexer is further behind" }),
  RATE_LIMIT_SANDBOX: positiveInt.default(100).meta({ description: "requests per window and account in the sandbox" }),
  RATE_LIMIT_PRODUCTION: positiveInt.default(1000).meta({ description: "the same in production" }),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(60).meta({ description: "the rate-limit window" }),
  IDEMPOTENCY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(24)
    .default(24)
    .meta({ description: "how long idempotent answers are replayed (at least 24)" }),
  BODY_LIMIT: z
    .string()
    .default("100kb")
    .refine((v) => (bytes.parse(v) ?? 0) > 0, 'a size such as "100kb"')
    .meta({ description: "largest request body" }),
  /** Active (unrevoked) keys an account may hold per environment. */
  MAX_ACTIVE_KEYS: positiveInt.default(20).meta({ description: "active keys per account and environment" }),
  /**
   * Which proxies' X-Forwarded-For is believed for the client address (rate
   * limits, IP-bound keys): Express's "trust proxy" — "loopback", subnets
   * ("10.0.0.0/8, loopback"), a hop count ("1"), or "false" to use the
   * socket's address only. Off by default in every environment: any client
   * can write the header, so believing it unasked lets one pass for an address
   * an IP-bound key allows; a sandbox is as public as production.
   */
  TRUST_PROXY: z
    .string()
    .default("false")
    .transform((v): boolean | number | string => (v === "false" ? false : /^\d+$/.test(v) ? Number(v) : v))
    .meta({
      description:
        'whose `X-Forwarded-For` is believed (Express "trust proxy"): set it to the proxy in front of the API, and only then ([the relay API](./api.md))',
      default: "`false` (the socket's address)",
    }),
  /** Bearer token for /metrics; without one, /metrics is public in sandbox and off in production. */
  METRICS_TOKEN: z
    .string()
    .min(16)
    .optional()
    .meta({ description: "bearer token for `/metrics` (at least 16 characters)" }),
  /** A request's head must arrive within this; the whole request within REQUEST_TIMEOUT_MS. */
  HEADERS_TIMEOUT_MS: positiveInt.default(10_000).meta({ description: "time for a request's head" }),
  REQUEST_TIMEOUT_MS: positiveInt.default(30_000).meta({ description: "time for the whole request" }),
  /**
   * Load shedding: past this many requests in progress (health checks aside), a new one is answered
   * 503 overloaded with Retry-After at once, rather than queued behind the others (0: no bound).
   */
  LOAD_SHED_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(128).meta({
    description:
      "requests in progress (health, readiness, /metrics aside) past which a new one gets 503 `overloaded` with Retry-After at once; `0`: no bound",
  }),
  /** Load shedding: while the event loop has lately run this much behind its timers, new requests get 503 (0: no bound). */
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(500).meta({
    description:
      "event-loop lateness (worst of the last 400 ms) past which new requests get 503 `overloaded`; `0`: no bound",
  }),
  LOAD_SHED_RETRY_AFTER_SECONDS: positiveInt
    .max(60)
    .default(1)
    .meta({ description: "the Retry-After of a shed request" }),
  /** How long a webhook attempt may take (connecting and answering) before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: positiveInt.default(15_000).meta({ description: "a webhook attempt longer than this fails" }),
  /** Multiplies the webhook retry schedule (about three days at 1); tests compress it, e.g. 0.001. */
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(100).default(1).meta({
    description: "multiplies the webhook retry schedule (tests: `0.001`)",
    default: "`1` (about three days of retries)",
  }),
  WEBHOOK_SECRET_GRACE_SECONDS: positiveInt
    .default(86_400)
    .meta({ description: "a rotated-out signing secret keeps signing this long" }),
  /** How often the webhook worker looks for due deliveries (a ping or a redelivery wakes it at once). */
  WEBHOOK_POLL_MS: positiveInt
    .default(1000)
    .meta({ description: "how often the webhook worker looks for due deliveries" }),
  /**
   * The webhook worker's poll at rest (RELAY_BUSY_MS after the last wake, nothing in flight), or sooner when a
   * pending delivery comes due. Default: 10000 on embedded PGlite, which no other replica shares, so every
   * delivery is queued in this process and wakes it; WEBHOOK_POLL_MS on PostgreSQL, where other replicas queue.
   */
  WEBHOOK_IDLE_POLL_MS: positiveInt.max(60_000).optional().meta({
    description:
      "how often it looks at rest (`RELAY_BUSY_MS` after deliveries were queued in this process, a request changed state or an attempt ended), or sooner when a pending delivery comes due",
    default: "`10000` on PGlite, `WEBHOOK_POLL_MS` on PostgreSQL",
  }),
  WEBHOOK_CONCURRENCY: positiveInt
    .max(256)
    .default(16)
    .meta({ description: "webhook attempts made at once, all agents together" }),
  /**
   * Attempts in flight to one agent, and to all the agents of one account: a
   * slow receiver holds at most these many of the WEBHOOK_CONCURRENCY slots,
   * the rest go to others' deliveries, round-robin over accounts and agents.
   */
  WEBHOOK_AGENT_CONCURRENCY: positiveInt
    .max(256)
    .default(4)
    .meta({ description: "attempts in flight to one agent (at most `WEBHOOK_ACCOUNT_CONCURRENCY`)" }),
  WEBHOOK_ACCOUNT_CONCURRENCY: positiveInt
    .max(256)
    .default(8)
    .meta({ description: "attempts in flight to all the agents of one account (at most `WEBHOOK_CONCURRENCY`)" }),
  /**
   * An agent's breaker: after this many attempts in a row that got no answer
   * within WEBHOOK_TIMEOUT_MS, nothing is sent to it for
   * WEBHOOK_BREAKER_COOLDOWN_MS, then one attempt at a time until one is
   * answered; each further timeout doubles the pause, up to
   * WEBHOOK_BREAKER_MAX_COOLDOWN_MS.
   */
  WEBHOOK_BREAKER_TIMEOUTS: positiveInt
    .max(1000)
    .default(3)
    .meta({ description: "attempts in a row without an answer that pause an agent (its breaker opens)" }),
  WEBHOOK_BREAKER_COOLDOWN_MS: positiveInt
    .max(86_400_000)
    .default(30_000)
    .meta({ description: "an opened breaker's first pause, doubled at each timeout after it" }),
  WEBHOOK_BREAKER_MAX_COOLDOWN_MS: positiveInt
    .max(86_400_000)
    .default(3_600_000)
    .meta({ description: "the longest pause of an opened breaker" }),
  /** How long the webhook worker's lease lasts; another replica takes over a silent one after it. */
  WEBHOOK_LEASE_MS: positiveInt
    .default(15_000)
    .meta({ description: "the webhook worker's lease (one replica delivers)" }),
  /** required: every new mint and redemption waits for a screener agent's verdict (or the default after the timeout). */
  COMPLIANCE_SCREENING: z
    .enum(["off", "required"])
    .default("off")
    .meta({ description: "`required`: every new mint and redemption waits for a screener's verdict" }),
  COMPLIANCE_VERDICT_TIMEOUT_MS: positiveInt
    .default(300_000)
    .meta({ description: "how long a verdict is awaited before the default applies" }),
  /** What a verdict that does not come in time becomes: fail closed by default. */
  COMPLIANCE_DEFAULT_VERDICT: z
    .enum(["PASSED", "REJECTED"])
    .default("REJECTED")
    .meta({ description: "the verdict a timeout gives (`PASSED` or `REJECTED`)" }),
  /** The built-in rules agent (large amounts, velocity, deny list); the sandbox's magic values fire its rules. */
  RULES_AGENT: z
    .enum(["on", "off"])
    .default("on")
    .meta({ description: "the built-in rules agent (large amounts, velocity, deny list)" }),
  /** A single mint or redemption above this many ZSD raises a large_amount alert. */
  RULES_LARGE_AMOUNT_ZSD: positiveInt
    .default(10_000)
    .meta({ description: "a single mint or redemption above this raises an alert" }),
  /** More than RULES_VELOCITY_MAX mints to one recipient (redemptions by one owner) within the window raise a velocity alert. */
  RULES_VELOCITY_MAX: positiveInt
    .default(10)
    .meta({ description: "more than this many per address within the window raise an alert" }),
  RULES_VELOCITY_WINDOW_SECONDS: positiveInt.default(3_600).meta({ description: "the velocity rule's window" }),
  /** A file of denied EVM addresses, one per line (# comments); the compliance_deny_list table adds to it. */
  RULES_DENY_LIST_FILE: z
    .string()
    .optional()
    .meta({ description: "denied EVM addresses, one per line; their mints and redemptions are held" }),
  DASHBOARD_SESSION_HOURS: positiveInt.max(720).default(12).meta({ description: "how long a dashboard sign-in lasts" }),
  /**
   * Where the dashboard's mail (email verification, password reset) is sent:
   * smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465. Unset in
   * the sandbox: an SMTP capture in this process, read at /dashboard/mail from
   * this machine; unset in production: no mail is sent (a warning at start).
   */
  SMTP_URL: z
    .url({ protocol: /^smtps?$/ })
    .optional()
    .meta({
      description:
        "where the dashboard's mail goes (verification, reset): `smtp://user:pass@host:587` (STARTTLS) or `smtps://…:465`; the capture's is read at `/dashboard/mail`",
      default: "unset: sandbox, an in-process SMTP capture; production, no mail",
    }),
  MAIL_FROM: z
    .string()
    .max(254)
    .regex(/^[^\r\n]*@[^\r\n]*$/, 'an address, e.g. "ZSD <no-reply@example.com>"')
    .default("ZSD dashboard <no-reply@localhost>")
    .meta({ description: "the From of the dashboard's mail" }),
  /** Days of per-minute request analytics and request log kept for the dashboard (its longest view is 30). */
  ANALYTICS_RETENTION_DAYS: positiveInt
    .max(3650)
    .default(90)
    .meta({ description: "days of per-minute request analytics and request log kept for the dashboard" }),
  ANALYTICS_FLUSH_MS: positiveInt
    .default(10_000)
    .meta({ description: "how often request analytics held in memory are written to the database" }),
  REQUEST_LOG_PER_KEY: positiveInt
    .max(10_000)
    .default(200)
    .meta({ description: "requests kept per key in the dashboard's request log" }),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info").meta({
    description: "pino level",
    default: "`info`; `warn` under `npm start`",
    readBy: "API; `npm start` (for its API)",
  }),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000).meta({ description: "graceful shutdown before exiting" }),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Validates the environment; the error names every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means unset, as in a copied .env.example (`CUSTODY_ADDRESS=`).
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const result = configSchema.safeParse(set);
  const problems = result.success
    ? crossChecks(result.data)
    : result.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
  if (result.success && problems.length === 0) return result.data;
  throw new ConfigError(`invalid configuration:\n${problems.join("\n")}`);
}

/** Settings that are valid alone but not together. */
function crossChecks(config: Config): string[] {
  const problems: string[] = [];
  // A share larger than the whole would let one tenant's slow receiver take every webhook slot again.
  if (config.WEBHOOK_AGENT_CONCURRENCY > config.WEBHOOK_ACCOUNT_CONCURRENCY)
    problems.push(
      "  WEBHOOK_AGENT_CONCURRENCY: at most WEBHOOK_ACCOUNT_CONCURRENCY (an agent's share of its account's)",
    );
  if (config.WEBHOOK_ACCOUNT_CONCURRENCY > config.WEBHOOK_CONCURRENCY)
    problems.push("  WEBHOOK_ACCOUNT_CONCURRENCY: at most WEBHOOK_CONCURRENCY (an account's share of all attempts)");
  // Without its keys custody could open no withdraw address, and would fail every payout as unreadable.
  if (config.ENVIRONMENT === "production" && config.DEPLOYMENT_FILE && !config.CUSTODY_SEAL_KEYS)
    problems.push("  CUSTODY_SEAL_KEYS: required in production with a DEPLOYMENT_FILE (keyId:0x<X25519 secret>, …)");
  if (config.WEBHOOK_BREAKER_COOLDOWN_MS > config.WEBHOOK_BREAKER_MAX_COOLDOWN_MS)
    problems.push("  WEBHOOK_BREAKER_COOLDOWN_MS: at most WEBHOOK_BREAKER_MAX_COOLDOWN_MS");
  return problems;
}

export function rateLimitFor(config: Config): number {
  return config.ENVIRONMENT === "production" ? config.RATE_LIMIT_PRODUCTION : config.RATE_LIMIT_SANDBOX;
}
