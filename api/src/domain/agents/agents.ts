// Compliance agents: a webhook endpoint an account registers to hear of its
// mints, redemptions and alerts (delivered from the outbox by
// api/src/workers/webhooks/worker.ts). Each belongs to one account and environment; a
// key of another account or environment sees none of them (not found).
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { type AddressPolicy, checkTarget } from "../../adapters/webhooks/address-policy.ts";
import { newSigningSecret } from "../../adapters/webhooks/sender.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { type SubscribableEventType, emitEvent } from "./events.ts";
import { randomId } from "../../adapters/ids.ts";
import type { Environment } from "../accounts/keys.ts";
import { lockAccount } from "../accounts/store.ts";

export type AgentRole = "observer" | "screener";
/** Why an agent stopped receiving: its owner said so, it answered 410 Gone, or every attempt failed for days. */
export type DisabledReason = "requested" | "gone" | "failing";

export interface Agent {
  agentId: string;
  environment: Environment;
  name: string;
  description: string | null;
  role: AgentRole;
  webhookUrl: string;
  events: SubscribableEventType[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  /** Until when the secret replaced by the last rotation still signs, if it does. */
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AgentInput {
  name: string;
  webhookUrl: string;
  events: SubscribableEventType[];
  description?: string;
  role: AgentRole;
}

export interface AgentChanges {
  name?: string;
  webhookUrl?: string;
  events?: SubscribableEventType[];
  description?: string | null;
  role?: AgentRole;
  enabled?: boolean;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface Attempt {
  attempt: number;
  startedAt: string;
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
}

export interface Delivery {
  deliveryId: string;
  agentId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  /** The latest attempts, newest first. */
  attempts: Attempt[];
}

interface AgentRow {
  id: string;
  environment: Environment;
  name: string;
  description: string | null;
  role: AgentRole;
  webhook_url: string;
  events: SubscribableEventType[];
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  disabled_at: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

// Never `SELECT *`: the secrets stay in the database unless signing needs them.
const AGENT_COLUMNS = `id, environment, name, description, role, webhook_url, events, enabled, disabled_reason,
  disabled_at, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END
  AS previous_secret_expires_at, created_at, updated_at`;

function toAgent(row: AgentRow): Agent {
  return {
    agentId: row.id,
    environment: row.environment,
    name: row.name,
    description: row.description,
    role: row.role,
    webhookUrl: row.webhook_url,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: iso(row.disabled_at),
    previousSecretExpiresAt: iso(row.previous_secret_expires_at),
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
  };
}

/** Agents an account may hold per environment: each costs a delivery per event. */
export const MAX_AGENTS = 25;
/** Attempts shown per delivery in the log. */
const ATTEMPTS_SHOWN = 20;

const agentNotFound = (agentId: string) => domainErrors.notFound(`Agent ${agentId}`);
const agentDisabled = (agentId: string) =>
  new DomainError(
    "conflict",
    "agent_disabled",
    "Agent disabled",
    `Agent ${agentId} is disabled; enable it (POST /v1/agents/${agentId} with {"enabled": true}) first.`,
  );

export interface AgentServiceOptions {
  /** Where webhooks may go in this environment (see adapters/webhooks/address-policy.ts). */
  policy: AddressPolicy;
  /** How long a rotated-out secret keeps signing. */
  secretGraceSeconds: number;
  /** Told when deliveries are queued, so that the worker sends them without waiting for its next poll. */
  onQueued?: () => void;
}

export class AgentService {
  constructor(
    private readonly db: Database,
    private readonly options: AgentServiceOptions,
  ) {}

  /** Registers an agent; its signing secret is returned here and by a rotation, never again. */
  async register(
    accountId: string,
    environment: Environment,
    input: AgentInput,
  ): Promise<{ agent: Agent; secret: string }> {
    await this.#checkUrl(input.webhookUrl);
    const secret = newSigningSecret();
    const row = await this.db.transaction(async (tx) => {
      // The account row is locked so that concurrent registrations cannot pass the cap together.
      await lockAccount(tx, accountId);
      const [held] = await tx.query<{ n: number | string }>(
        "SELECT count(*) AS n FROM agents WHERE account_id = $1 AND environment = $2 AND deleted_at IS NULL",
        [accountId, environment],
      );
      if (Number(held?.n ?? 0) >= MAX_AGENTS) {
        throw new DomainError(
          "conflict",
          "agent_limit_reached",
          "Agent limit reached",
          `This account holds ${MAX_AGENTS} ${environment} agents, the most allowed; delete one first.`,
          { limit: MAX_AGENTS },
        );
      }
      const [inserted] = await tx.query<AgentRow>(
        `INSERT INTO agents (id, account_id, environment, name, description, role, webhook_url, events, secret)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${AGENT_COLUMNS}`,
        [
          randomId("agt"),
          accountId,
          environment,
          input.name,
          input.description ?? null,
          input.role,
          input.webhookUrl,
          input.events,
          secret,
        ],
      );
      return inserted!;
    });
    return { agent: toAgent(row), secret };
  }

  async list(accountId: string, environment: Environment): Promise<Agent[]> {
    const rows = await this.db.query<AgentRow>(
      `SELECT ${AGENT_COLUMNS} FROM agents WHERE account_id = $1 AND environment = $2 AND deleted_at IS NULL
       ORDER BY created_at DESC, id`,
      [accountId, environment],
    );
    return rows.map(toAgent);
  }

  async get(accountId: string, environment: Environment, agentId: string, db: Queryable = this.db): Promise<Agent> {
    const [row] = await db.query<AgentRow>(
      `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL`,
      [agentId, accountId, environment],
    );
    if (!row) throw agentNotFound(agentId);
    return toAgent(row);
  }

  /** Changes an agent. Disabling says so to the account's other agents (agent.disabled); enabling clears why it was disabled. */
  async update(accountId: string, environment: Environment, agentId: string, changes: AgentChanges): Promise<Agent> {
    if (changes.webhookUrl !== undefined) await this.#checkUrl(changes.webhookUrl);
    return this.db.transaction(async (tx) => {
      const [locked] = await tx.query<{ enabled: boolean }>(
        `SELECT enabled FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL
         FOR UPDATE`,
        [agentId, accountId, environment],
      );
      if (!locked) throw agentNotFound(agentId);
      await tx.query(
        `UPDATE agents SET
           name = COALESCE($2, name),
           webhook_url = COALESCE($3, webhook_url),
           events = COALESCE($4, events),
           description = CASE WHEN $5::boolean THEN $6 ELSE description END,
           role = COALESCE($7, role),
           enabled = CASE WHEN $8::boolean THEN true ELSE enabled END,
           disabled_reason = CASE WHEN $8::boolean THEN NULL ELSE disabled_reason END,
           disabled_at = CASE WHEN $8::boolean THEN NULL ELSE disabled_at END,
           updated_at = now()
         WHERE id = $1`,
        [
          agentId,
          changes.name ?? null,
          changes.webhookUrl ?? null,
          changes.events ?? null,
          changes.description !== undefined,
          changes.description ?? null,
          changes.role ?? null,
          changes.enabled === true,
        ],
      );
      if (changes.enabled === false) await disableAgent(tx, agentId, "requested");
      return this.get(accountId, environment, agentId, tx);
    });
  }

  /** Deletes an agent: it receives nothing more, and its pending deliveries are dropped. */
  async remove(accountId: string, environment: Environment, agentId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE agents SET deleted_at = now(), enabled = false, updated_at = now()
         WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL RETURNING id`,
        [agentId, accountId, environment],
      );
      if (rows.length === 0) throw agentNotFound(agentId);
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = 'agent deleted', updated_at = now()
         WHERE agent_id = $1 AND status = 'pending'`,
        [agentId],
      );
    });
  }

  /**
   * A new signing secret; the current one keeps signing (both signatures in
   * each webhook-signature header) for the grace period, so that the receiver
   * can switch without refusing a delivery.
   */
  async rotateSecret(
    accountId: string,
    environment: Environment,
    agentId: string,
  ): Promise<{ agent: Agent; secret: string }> {
    const secret = newSigningSecret();
    const [row] = await this.db.query<AgentRow>(
      `UPDATE agents SET previous_secret = secret, secret = $4,
         previous_secret_expires_at = now() + $5::int * interval '1 second', updated_at = now()
       WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL
       RETURNING ${AGENT_COLUMNS}`,
      [agentId, accountId, environment, secret, this.options.secretGraceSeconds],
    );
    if (!row) throw agentNotFound(agentId);
    return { agent: toAgent(row), secret };
  }

  /** Queues a `ping` to the agent alone. */
  async ping(accountId: string, environment: Environment, agentId: string): Promise<Delivery> {
    const deliveryId = await this.db.transaction(async (tx) => {
      const agent = await this.get(accountId, environment, agentId, tx);
      if (!agent.enabled) throw agentDisabled(agentId);
      await endPause(tx, agentId);
      const { deliveryIds } = await emitEvent(
        tx,
        {
          account: accountId,
          environment,
          type: "ping",
          data: { agentId, message: "A test event sent on request (POST /v1/agents/{agentId}/test)." },
        },
        { agentId },
      );
      return deliveryIds[0]!;
    });
    this.options.onQueued?.();
    return this.delivery(accountId, environment, agentId, deliveryId);
  }

  /** The agent's deliveries, newest first, with their latest attempts. */
  async deliveries(
    accountId: string,
    environment: Environment,
    agentId: string,
    filter: { status?: DeliveryStatus; limit: number },
  ): Promise<Delivery[]> {
    await this.get(accountId, environment, agentId);
    const rows = await this.db.query<DeliveryRow>(
      `${DELIVERY_SELECT} WHERE d.agent_id = $1 AND ($2::text IS NULL OR d.status = $2)
       ORDER BY d.created_at DESC, d.id DESC LIMIT $3`,
      [agentId, filter.status ?? null, filter.limit],
    );
    return this.#withAttempts(rows);
  }

  async delivery(accountId: string, environment: Environment, agentId: string, deliveryId: string): Promise<Delivery> {
    await this.get(accountId, environment, agentId);
    const rows = await this.db.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.agent_id = $1 AND d.id = $2`, [
      agentId,
      deliveryId,
    ]);
    if (rows.length === 0) throw domainErrors.notFound(`Delivery ${deliveryId}`);
    return (await this.#withAttempts(rows))[0]!;
  }

  /**
   * Sends a delivery again, on a new schedule of attempts: with the same
   * event, and so the same webhook-id. One still pending is left as it is.
   */
  async retry(accountId: string, environment: Environment, agentId: string, deliveryId: string): Promise<Delivery> {
    const agent = await this.get(accountId, environment, agentId);
    if (!agent.enabled) throw agentDisabled(agentId);
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', schedule_start = attempts, next_attempt_at = now(),
         updated_at = now()
       WHERE id = $1 AND agent_id = $2 AND status <> 'pending' RETURNING id`,
      [deliveryId, agentId],
    );
    await endPause(this.db, agentId);
    if (rows.length > 0) this.options.onQueued?.();
    return this.delivery(accountId, environment, agentId, deliveryId);
  }

  /** Sends again every failed delivery of the agent made since `since`; how many. */
  async retryFailedSince(accountId: string, environment: Environment, agentId: string, since: Date): Promise<number> {
    const agent = await this.get(accountId, environment, agentId);
    if (!agent.enabled) throw agentDisabled(agentId);
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', schedule_start = attempts, next_attempt_at = now(),
         updated_at = now()
       WHERE agent_id = $1 AND status = 'failed' AND created_at >= $2 RETURNING id`,
      [agentId, since.toISOString()],
    );
    await endPause(this.db, agentId);
    if (rows.length > 0) this.options.onQueued?.();
    return rows.length;
  }

  async #checkUrl(webhookUrl: string): Promise<void> {
    const verdict = await checkTarget(webhookUrl, this.options.policy);
    if (verdict.ok) return;
    throw new DomainError(
      "invalid",
      "webhook_url_not_allowed",
      "Webhook URL not allowed",
      `The webhook URL ${verdict.reason}.`,
      { errors: [{ field: "body.webhookUrl", message: verdict.reason }] },
    );
  }

  async #withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    if (rows.length === 0) return [];
    const attempts = await this.db.query<AttemptRow>(
      `SELECT delivery_id, attempt, started_at, latency_ms, response_status, error FROM (
         SELECT *, row_number() OVER (PARTITION BY delivery_id ORDER BY attempt DESC) AS n
         FROM webhook_attempts WHERE delivery_id = ANY($1)
       ) latest WHERE n <= $2 ORDER BY attempt DESC`,
      [rows.map((r) => r.id), ATTEMPTS_SHOWN],
    );
    return rows.map((row) => ({
      deliveryId: row.id,
      agentId: row.agent_id,
      eventId: row.event_id,
      eventType: row.event_type,
      status: row.status,
      attemptCount: Number(row.attempts),
      nextAttemptAt: row.status === "pending" ? iso(row.next_attempt_at) : null,
      lastResponseStatus: row.last_response_status === null ? null : Number(row.last_response_status),
      lastError: row.last_error,
      deliveredAt: iso(row.delivered_at),
      createdAt: iso(row.created_at)!,
      attempts: attempts
        .filter((a) => a.delivery_id === row.id)
        .map((a) => ({
          attempt: Number(a.attempt),
          startedAt: iso(a.started_at)!,
          responseStatus: a.response_status === null ? null : Number(a.response_status),
          latencyMs: Number(a.latency_ms),
          error: a.error,
        })),
    }));
  }
}

interface DeliveryRow {
  id: string;
  agent_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | string;
  last_response_status: number | null;
  last_error: string | null;
  delivered_at: Date | string | null;
  created_at: Date | string;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date | string;
  latency_ms: number;
  response_status: number | null;
  error: string | null;
}

const DELIVERY_SELECT = `SELECT d.id, d.agent_id, d.event_id, e.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.last_response_status, d.last_error, d.delivered_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`;

/**
 * Disables an agent in the caller's transaction: its pending deliveries fail
 * (they can be sent again once it is enabled: POST …/deliveries/retry), and
 * the account's other agents hear of it (agent.disabled). False when it was
 * already disabled.
 */
/**
 * The owner asked for a delivery now (a test event, a redelivery): an agent
 * its breaker paused gets its one attempt at once instead of after the pause
 * (workers/webhooks/breaker.ts); a receiver still failing opens it again.
 */
async function endPause(db: Queryable, agentId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_breakers SET open_until = now(), updated_at = now() WHERE agent_id = $1 AND open_until > now()`,
    [agentId],
  );
}

export async function disableAgent(tx: Queryable, agentId: string, reason: DisabledReason): Promise<boolean> {
  const [agent] = await tx.query<{ account_id: string; environment: Environment; name: string; disabled_at: Date }>(
    `UPDATE agents SET enabled = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
     WHERE id = $1 AND enabled AND deleted_at IS NULL RETURNING account_id, environment, name, disabled_at`,
    [agentId, reason],
  );
  if (!agent) return false;
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = 'agent disabled', updated_at = now()
     WHERE agent_id = $1 AND status = 'pending'`,
    [agentId],
  );
  await emitEvent(tx, {
    account: agent.account_id,
    environment: agent.environment,
    type: "agent.disabled",
    data: { agentId, name: agent.name, reason, disabledAt: new Date(agent.disabled_at).toISOString() },
  });
  return true;
}
