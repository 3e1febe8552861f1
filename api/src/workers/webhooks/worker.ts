// The webhook worker: delivers the outbox (webhook_deliveries, written by
// emitEvent in the transaction of each change) at least once. One replica
// delivers at a time (a lease, as the relay worker has). Each attempt is
// claimed in the database before it is made, by pushing the delivery's due
// time past the attempt's timeout: an attempt cut short by a crash is made
// again once that time passes, by this replica after a restart or by another.
// Attempts run as a pool shared fairly between accounts and agents, and an
// agent whose receiver keeps timing out is paused by its own breaker
// (breaker.ts): one tenant's slow receiver delays no one else's webhooks.
import type { Database } from "../../adapters/db/index.ts";
import { type AddressPolicy, checkTarget } from "../../adapters/webhooks/address-policy.ts";
import { type SendResult, send } from "../../adapters/webhooks/sender.ts";
import { disableAgent } from "../../domain/agents/agents.ts";
import { onDeliveriesQueued } from "../../domain/agents/events.ts";
import {
  type ClaimedDelivery as Claimed,
  claimDeliveries,
  deliveredSince,
  msToNextDelivery,
  recordAttempt,
} from "../../domain/agents/store.ts";
import type { Environment } from "../../domain/accounts/keys.ts";
import { Lease } from "../lease.ts";
import { type BreakerSettings, recordOnBreaker } from "./breaker.ts";

/** Attempts per schedule: the first and nine retries, about three days apart from first to last. */
export const MAX_ATTEMPTS = 10;
const FIRST_RETRY_MS = 5_000;
const LONGEST_WAIT_MS = 24 * 3600_000;

/**
 * The wait after the `n`th failed attempt of a schedule: 5 s × 5^(n−1), at
 * most a day (5 s, 25 s, 2 min, 10 min, 52 min, 4.3 h, 21.7 h, 24 h, 24 h:
 * about 75 h in all), times `scale`, with ±20 % jitter so that receivers
 * coming back from an outage are not hit by every retry at once.
 */
export function retryDelayMs(n: number, scale: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 5 ** Math.max(0, n - 1), LONGEST_WAIT_MS);
  return Math.round(base * scale * (0.8 + 0.4 * random()));
}

export interface WebhookWorkerOptions {
  /**
   * The deployment's environment: its worker sends only its agents' webhooks,
   * under its own policy (a sandbox worker must never send a production
   * agent's events to loopback), and holds its own lease.
   */
  environment: Environment;
  policy: AddressPolicy;
  /** How long an attempt may take, connection and answer included. */
  timeoutMs: number;
  /** Multiplies the retry schedule (1 in production; tests compress three days into seconds). */
  retryScale: number;
  /** Attempts made at once, all agents together. */
  concurrency: number;
  /** Attempts in flight to one agent, and to all the agents of one account. */
  agentConcurrency: number;
  accountConcurrency: number;
  breaker: BreakerSettings;
  pollMs: number;
  /**
   * The poll once `busyMs` passed without a wake (deliveries queued in this
   * process, a request that changed state, an attempt that ended), and no
   * attempt is in flight; never later than the next pending delivery's due
   * time. Default `pollMs`.
   */
  idlePollMs?: number;
  /** How long after a wake (or the start) the worker polls every `pollMs`. */
  busyMs?: number;
  leaseMs: number;
  /** The replica's stable name: after a restart it takes its lease back at once. */
  workerId?: string;
  onError?: (error: unknown) => void;
}

/**
 * Attempts run as a pool rather than in batches: as soon as one ends, its slot
 * goes to the next delivery, so a slow receiver delays no one waiting behind
 * it. Which delivery is next is fair: each account, then each of its agents,
 * in turn (see #claim), within their shares of the pool.
 */
export class WebhookWorker {
  readonly #lease: Lease;
  #leaseHeldAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #filling: Promise<void> | undefined;
  #stopped = true;
  #again = false;
  #busyUntil = 0;
  #unsubscribe: (() => void) | undefined;
  #passes = 0;
  readonly #inFlight = new Set<Promise<void>>();
  /** Attempts in flight per agent and per account: a single lease holder delivers, so its own count is the count. */
  readonly #perAgent = new Map<string, number>();
  readonly #perAccount = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly options: WebhookWorkerOptions,
  ) {
    this.#lease = new Lease(db, `webhooks:${options.environment}`, options.leaseMs, options.workerId);
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#lease.keepRenewed();
    this.#unsubscribe = onDeliveriesQueued(() => this.wake());
    // Deliveries a crash left are found in the first passes.
    this.#busyUntil = Date.now() + (this.options.busyMs ?? 0);
    void this.#fill();
  }

  /** Claims nothing more, waits for the attempts in flight, and hands the lease over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
    await this.#filling;
    await Promise.all(this.#inFlight);
    await this.#lease.release();
    this.#leaseHeldAt = 0;
  }

  /** Passes made since the start (holder of the lease or not): what the worker costs at rest. */
  get passes(): number {
    return this.#passes;
  }

  /** Deliveries were queued, or a slot freed: look now rather than at the next poll. */
  wake(): void {
    if (this.#stopped) return;
    this.#busyUntil = Date.now() + (this.options.busyMs ?? 0);
    if (this.#filling) {
      this.#again = true;
      return;
    }
    void this.#fill();
  }

  async #fill(): Promise<void> {
    if (this.#stopped || this.#filling) return;
    this.#again = false;
    clearTimeout(this.#timer);
    this.#passes++;
    let wait = this.options.pollMs;
    this.#filling = (async () => {
      await this.#fillPool();
      if (!this.#again) wait = await this.#nextWait();
    })().catch((error) => this.options.onError?.(error));
    await this.#filling;
    this.#filling = undefined;
    if (this.#stopped) return;
    // Slots that freed while claiming are filled at once; otherwise the next poll finds retries come due.
    this.#timer = setTimeout(() => void this.#fill(), this.#again ? 0 : wait);
  }

  /** `pollMs` while busy or delivering; at rest `idlePollMs`, or sooner when a pending delivery comes due. */
  async #nextWait(): Promise<number> {
    const { pollMs } = this.options;
    const idle = Math.max(this.options.idlePollMs ?? pollMs, pollMs);
    if (idle === pollMs || Date.now() < this.#busyUntil || this.#inFlight.size > 0) return pollMs;
    const ms = await msToNextDelivery(this.db);
    if (ms === null || ms === undefined) return idle;
    return Math.min(idle, Math.max(pollMs, Math.ceil(Number(ms))));
  }

  /** Claims fair deliveries into the free slots, by the holder of the lease, until none is due. */
  async #fillPool(): Promise<void> {
    if (!(await this.#holdsLease())) return;
    while (!this.#stopped) {
      const free = this.options.concurrency - this.#inFlight.size;
      if (free <= 0) return;
      const claimed = await this.#claim(free);
      for (const delivery of claimed) this.#launch(delivery);
      if (claimed.length < free) return;
    }
  }

  /** Takes the lease, or trusts a take younger than a third of it (the lease is renewed apart from passes). */
  async #holdsLease(): Promise<boolean> {
    if (Date.now() - this.#leaseHeldAt < this.options.leaseMs / 3) return true;
    const held = await this.#lease.take();
    this.#leaseHeldAt = held ? Date.now() : 0;
    return held;
  }

  #launch(delivery: Claimed): void {
    const count = (map: Map<string, number>, key: string, by: number) => {
      const n = (map.get(key) ?? 0) + by;
      if (n > 0) map.set(key, n);
      else map.delete(key);
    };
    count(this.#perAgent, delivery.agent_id, 1);
    count(this.#perAccount, delivery.account_id, 1);
    const attempt: Promise<void> = this.#attempt(delivery)
      .catch((error) => this.options.onError?.(error))
      .finally(() => {
        count(this.#perAgent, delivery.agent_id, -1);
        count(this.#perAccount, delivery.account_id, -1);
        this.#inFlight.delete(attempt);
        this.wake();
      });
    this.#inFlight.add(attempt);
  }

  /**
   * Up to `limit` due deliveries, fairly: each eligible agent offers its oldest
   * due deliveries up to its free share (one while its breaker is half open,
   * none while it is open), and they are taken in rounds — every account's
   * next slot before any account's one after, and within an account every
   * agent's next before any agent's one after — oldest first within a round.
   * An account or agent already holding its share offers nothing.
   */
  async #claim(limit: number): Promise<Claimed[]> {
    // Past the attempt's timeout and a margin: until then no pass claims it again.
    const claimMs = this.options.timeoutMs * 2 + 1_000;
    const agents = [...this.#perAgent];
    const accounts = [...this.#perAccount];
    return claimDeliveries(this.db, {
      limit,
      claimMs,
      environment: this.options.environment,
      busyAgents: agents,
      busyAccounts: accounts,
      agentShare: this.options.agentConcurrency,
      accountShare: this.options.accountConcurrency,
    });
  }

  async #attempt(delivery: Claimed): Promise<void> {
    const startedAt = new Date();
    const attempt = Number(delivery.attempts);
    // Checked again at each attempt: the name may point elsewhere since it was registered.
    const verdict = await checkTarget(delivery.webhook_url, this.options.policy);
    let result: SendResult;
    if (!verdict.ok) {
      result = { error: `webhook URL ${verdict.reason}`, latencyMs: Date.now() - startedAt.getTime() };
    } else {
      result = await send(
        verdict.target,
        {
          id: delivery.event_id,
          body: delivery.payload,
          secrets: [delivery.secret, ...(delivery.previous_secret ? [delivery.previous_secret] : [])],
        },
        this.options.timeoutMs,
      );
    }
    const succeeded = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const made = attempt - Number(delivery.schedule_start);
    const exhausted = !succeeded && !gone && made >= MAX_ATTEMPTS;
    const error = result.error ?? (succeeded ? null : `answered ${result.status}`);
    let waitMs = retryDelayMs(made, this.options.retryScale);
    // The receiver's own Retry-After (a 429 or a 503, say) is honoured, up to the longest wait.
    if (result.retryAfterMs !== undefined) waitMs = Math.max(waitMs, Math.min(result.retryAfterMs, LONGEST_WAIT_MS));

    await this.db.transaction(async (tx) => {
      const updated = await recordAttempt(tx, {
        deliveryId: delivery.id,
        attempt,
        startedAt,
        latencyMs: result.latencyMs,
        status: result.status ?? null,
        error,
        succeeded,
        ended: gone || exhausted,
        waitMs,
      });
      await recordOnBreaker(
        tx,
        {
          agentId: delivery.agent_id,
          webhookUrl: delivery.webhook_url,
          sawOpenedAt: delivery.breaker_opened_at,
          timedOut: result.timedOut === true,
        },
        this.options.breaker,
      );
      if (!updated) return;
      if (gone) await disableAgent(tx, delivery.agent_id, "gone");
      if (exhausted) {
        // Every attempt of a schedule failed: disabled only if nothing else reached the agent meanwhile.
        if (!(await deliveredSince(tx, delivery.agent_id, delivery.created_at))) {
          await disableAgent(tx, delivery.agent_id, "failing");
        }
      }
    });
  }
}
