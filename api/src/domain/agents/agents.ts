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
import {
  type AgentRole,
  type AgentRow,
  type DeliveryRow,
  type DeliveryStatus,
  type DisabledReason,
  agentsOfAccount,
  countAgents,
  deliveriesOfAgent,
  endBreakerPause,
  failDeliveriesOfDeletedAgent,
  failDeliveriesOfDisabledAgent,
  findAgent,
  findDelivery,
  insertAgent,
  latestAttempts,
  lockAgent,
  markAgentDeleted,
  markAgentDisabled,
  requeueDelivery,
  requeueFailedDeliveriesSince,
  rotateAgentSecret,
  updateAgent,
} from "./store.ts";

export type { AgentRole, DeliveryStatus, DisabledReason };

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

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

function toAgent(row: AgentRow): Agent {
  return {
    agentId: row.id,
    environment: row.environment,
    name: row.name,
    description: row.description,
    role: row.role,
    webhookUrl: row.webhook_url,
    events: row.events as SubscribableEventType[],
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
      if ((await countAgents(tx, accountId, environment)) >= MAX_AGENTS) {
        throw new DomainError(
          "conflict",
          "agent_limit_reached",
          "Agent limit reached",
          `This account holds ${MAX_AGENTS} ${environment} agents, the most allowed; delete one first.`,
          { limit: MAX_AGENTS },
        );
      }
      return insertAgent(tx, {
        id: randomId("agt"),
        accountId,
        environment,
        name: input.name,
        description: input.description ?? null,
        role: input.role,
        webhookUrl: input.webhookUrl,
        events: input.events,
        secret,
      });
    });
    return { agent: toAgent(row), secret };
  }

  async list(accountId: string, environment: Environment): Promise<Agent[]> {
    return (await agentsOfAccount(this.db, accountId, environment)).map(toAgent);
  }

  async get(accountId: string, environment: Environment, agentId: string, db: Queryable = this.db): Promise<Agent> {
    const row = await findAgent(db, agentId, accountId, environment);
    if (!row) throw agentNotFound(agentId);
    return toAgent(row);
  }

  /** Changes an agent. Disabling says so to the account's other agents (agent.disabled); enabling clears why it was disabled. */
  async update(accountId: string, environment: Environment, agentId: string, changes: AgentChanges): Promise<Agent> {
    if (changes.webhookUrl !== undefined) await this.#checkUrl(changes.webhookUrl);
    return this.db.transaction(async (tx) => {
      const locked = await lockAgent(tx, agentId, accountId, environment);
      if (!locked) throw agentNotFound(agentId);
      await updateAgent(tx, agentId, {
        name: changes.name ?? null,
        webhookUrl: changes.webhookUrl ?? null,
        events: changes.events ?? null,
        setDescription: changes.description !== undefined,
        description: changes.description ?? null,
        role: changes.role ?? null,
        enable: changes.enabled === true,
      });
      if (changes.enabled === false) await disableAgent(tx, agentId, "requested");
      return this.get(accountId, environment, agentId, tx);
    });
  }

  /** Deletes an agent: it receives nothing more, and its pending deliveries are dropped. */
  async remove(accountId: string, environment: Environment, agentId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await markAgentDeleted(tx, agentId, accountId, environment))) throw agentNotFound(agentId);
      await failDeliveriesOfDeletedAgent(tx, agentId);
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
    const row = await rotateAgentSecret(
      this.db,
      agentId,
      accountId,
      environment,
      secret,
      this.options.secretGraceSeconds,
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
    return this.#withAttempts(await deliveriesOfAgent(this.db, agentId, filter.status ?? null, filter.limit));
  }

  async delivery(accountId: string, environment: Environment, agentId: string, deliveryId: string): Promise<Delivery> {
    await this.get(accountId, environment, agentId);
    const row = await findDelivery(this.db, agentId, deliveryId);
    if (!row) throw domainErrors.notFound(`Delivery ${deliveryId}`);
    return (await this.#withAttempts([row]))[0]!;
  }

  /**
   * Sends a delivery again, on a new schedule of attempts: with the same
   * event, and so the same webhook-id. One still pending is left as it is.
   */
  async retry(accountId: string, environment: Environment, agentId: string, deliveryId: string): Promise<Delivery> {
    const agent = await this.get(accountId, environment, agentId);
    if (!agent.enabled) throw agentDisabled(agentId);
    const queued = await requeueDelivery(this.db, deliveryId, agentId);
    await endPause(this.db, agentId);
    if (queued) this.options.onQueued?.();
    return this.delivery(accountId, environment, agentId, deliveryId);
  }

  /** Sends again every failed delivery of the agent made since `since`; how many. */
  async retryFailedSince(accountId: string, environment: Environment, agentId: string, since: Date): Promise<number> {
    const agent = await this.get(accountId, environment, agentId);
    if (!agent.enabled) throw agentDisabled(agentId);
    const queued = await requeueFailedDeliveriesSince(this.db, agentId, since);
    await endPause(this.db, agentId);
    if (queued > 0) this.options.onQueued?.();
    return queued;
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
    const attempts = await latestAttempts(
      this.db,
      rows.map((r) => r.id),
      ATTEMPTS_SHOWN,
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

/**
 * The owner asked for a delivery now (a test event, a redelivery): an agent
 * its breaker paused gets its one attempt at once instead of after the pause
 * (workers/webhooks/breaker.ts); a receiver still failing opens it again.
 */
function endPause(db: Queryable, agentId: string): Promise<void> {
  return endBreakerPause(db, agentId);
}

/**
 * Disables an agent in the caller's transaction: its pending deliveries fail
 * (they can be sent again once it is enabled: POST …/deliveries/retry), and
 * the account's other agents hear of it (agent.disabled). False when it was
 * already disabled.
 */
export async function disableAgent(tx: Queryable, agentId: string, reason: DisabledReason): Promise<boolean> {
  const agent = await markAgentDisabled(tx, agentId, reason);
  if (!agent) return false;
  await failDeliveriesOfDisabledAgent(tx, agentId);
  await emitEvent(tx, {
    account: agent.account_id,
    environment: agent.environment,
    type: "agent.disabled",
    data: { agentId, name: agent.name, reason, disabledAt: new Date(agent.disabled_at).toISOString() },
  });
  return true;
}
