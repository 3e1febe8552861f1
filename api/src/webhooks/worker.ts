// The webhook worker: delivers the outbox (webhook_deliveries, written by
// emitEvent in the transaction of each change) at least once. One replica
// delivers at a time (a lease, as the relay worker has). Each attempt is
// claimed in the database before it is made, by pushing the delivery's due
// time past the attempt's timeout: an attempt cut short by a crash is made
// again once that time passes, by this replica after a restart or by another.
import type { Database } from "../adapters/db/index.ts";
import { type AddressPolicy, checkTarget } from "../adapters/webhooks/address-policy.ts";
import { type SendResult, send } from "../adapters/webhooks/sender.ts";
import { disableAgent } from "../domain/agents.ts";
import type { Environment } from "../domain/keys.ts";
import { Lease } from "../relay/lease.ts";

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
  /** Attempts made at once. */
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  /** The replica's stable name: after a restart it takes its lease back at once. */
  workerId?: string;
  onError?: (error: unknown) => void;
}

interface Claimed {
  id: string;
  attempts: number;
  schedule_start: number;
  created_at: Date | string;
  agent_id: string;
  event_id: string;
  payload: string;
  webhook_url: string;
  secret: string;
  previous_secret: string | null;
}

export class WebhookWorker {
  readonly #lease: Lease;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;
  #again = false;

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
    void this.#loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    await this.#lease.release();
  }

  /** Deliveries were queued: look now rather than at the next poll. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    void this.#loop();
  }

  async #loop(): Promise<void> {
    if (this.#stopped || this.#running) return;
    this.#again = false;
    this.#running = this.tick().catch((error) => this.options.onError?.(error));
    await this.#running;
    this.#running = undefined;
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#loop(), this.#again ? 0 : this.options.pollMs);
  }

  /** One pass, by the holder of the lease: every due delivery, a batch at a time. */
  async tick(): Promise<void> {
    if (!(await this.#lease.take())) return;
    for (let batch = 0; batch < 100 && !this.#stopped; batch++) {
      const claimed = await this.#claim();
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((delivery) => this.#attempt(delivery).catch((e) => this.options.onError?.(e))));
    }
  }

  async #claim(): Promise<Claimed[]> {
    // Past the attempt's timeout and a margin: until then no pass claims it again.
    const claimMs = this.options.timeoutMs * 2 + 1_000;
    return this.db.query<Claimed>(
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN agents a ON a.id = d.agent_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND a.enabled AND a.deleted_at IS NULL
           AND a.environment = $3
         ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
           next_attempt_at = now() + $2::int * interval '1 millisecond', updated_at = now()
         FROM due WHERE d.id = due.id
         RETURNING d.id, d.attempts, d.schedule_start, d.created_at, d.agent_id, d.event_id
       )
       SELECT c.*, e.payload, a.webhook_url, a.secret,
         CASE WHEN a.previous_secret_expires_at > now() THEN a.previous_secret END AS previous_secret
       FROM claimed c JOIN webhook_events e ON e.id = c.event_id JOIN agents a ON a.id = c.agent_id`,
      [this.options.concurrency, claimMs, this.options.environment],
    );
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
      await tx.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, latency_ms, response_status, error)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [delivery.id, attempt, startedAt.toISOString(), result.latencyMs, result.status ?? null, error],
      );
      // Only while this attempt is the delivery's latest: a disabled agent or a stale pass changes nothing.
      const updated = await tx.query(
        `UPDATE webhook_deliveries SET
           status = CASE WHEN $3::boolean THEN 'succeeded' WHEN $4::boolean THEN 'failed' ELSE 'pending' END,
           delivered_at = CASE WHEN $3::boolean THEN now() ELSE delivered_at END,
           next_attempt_at = CASE WHEN $3::boolean OR $4::boolean THEN next_attempt_at
             ELSE now() + $5::int * interval '1 millisecond' END,
           last_response_status = $6, last_error = $7, updated_at = now()
         WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
        [delivery.id, attempt, succeeded, gone || exhausted, waitMs, result.status ?? null, error],
      );
      if (updated.length === 0) return;
      if (gone) await disableAgent(tx, delivery.agent_id, "gone");
      if (exhausted) {
        // Every attempt of a schedule failed: disabled only if nothing else reached the agent meanwhile.
        const [reached] = await tx.query(
          `SELECT 1 FROM webhook_deliveries WHERE agent_id = $1 AND status = 'succeeded' AND delivered_at >= $2 LIMIT 1`,
          [delivery.agent_id, new Date(delivery.created_at).toISOString()],
        );
        if (!reached) await disableAgent(tx, delivery.agent_id, "failing");
      }
    });
  }
}
