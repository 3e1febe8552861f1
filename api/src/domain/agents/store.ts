// Every statement against the agents and their webhook tables: the agents
// service's (agents.ts), the outbox's (events.ts), and the delivery worker's
// (deliveries claimed fairly, then settled by each attempt; the attempts; each
// agent's breaker). The services and the worker decide; this says it in SQL.
import type { Queryable } from "../../adapters/db/index.ts";
import type { Environment } from "../accounts/keys.ts";

export type AgentRole = "observer" | "screener";
/** Why an agent stopped receiving: its owner said so, it answered 410 Gone, or every attempt failed for days. */
export type DisabledReason = "requested" | "gone" | "failing";
export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface AgentRow {
  id: string;
  environment: Environment;
  name: string;
  description: string | null;
  role: AgentRole;
  webhook_url: string;
  /** Subscribable event types (events.ts): the service writes no other. */
  events: string[];
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  disabled_at: Date | string | null;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

// Never `SELECT *`: the secrets stay in the database unless signing needs them.
const AGENT_COLUMNS = `id, environment, name, description, role, webhook_url, events, enabled, disabled_reason,
  disabled_at, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END
  AS previous_secret_expires_at, created_at, updated_at`;

/** The account's agents in `environment`, not deleted. */
export async function countAgents(tx: Queryable, accountId: string, environment: string): Promise<number> {
  const [held] = await tx.query<{ n: number | string }>(
    "SELECT count(*) AS n FROM agents WHERE account_id = $1 AND environment = $2 AND deleted_at IS NULL",
    [accountId, environment],
  );
  return Number(held?.n ?? 0);
}

export async function insertAgent(
  tx: Queryable,
  agent: {
    id: string;
    accountId: string;
    environment: string;
    name: string;
    description: string | null;
    role: AgentRole;
    webhookUrl: string;
    events: string[];
    secret: string;
  },
): Promise<AgentRow> {
  const [inserted] = await tx.query<AgentRow>(
    `INSERT INTO agents (id, account_id, environment, name, description, role, webhook_url, events, secret)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${AGENT_COLUMNS}`,
    [
      agent.id,
      agent.accountId,
      agent.environment,
      agent.name,
      agent.description,
      agent.role,
      agent.webhookUrl,
      agent.events,
      agent.secret,
    ],
  );
  return inserted!;
}

/** The account's agents in `environment`, not deleted, newest first. */
export function agentsOfAccount(db: Queryable, accountId: string, environment: string): Promise<AgentRow[]> {
  return db.query<AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM agents WHERE account_id = $1 AND environment = $2 AND deleted_at IS NULL
       ORDER BY created_at DESC, id`,
    [accountId, environment],
  );
}

export async function findAgent(
  db: Queryable,
  agentId: string,
  accountId: string,
  environment: string,
): Promise<AgentRow | undefined> {
  const [row] = await db.query<AgentRow>(
    `SELECT ${AGENT_COLUMNS} FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL`,
    [agentId, accountId, environment],
  );
  return row;
}

/** Locks the account's agent (not deleted); undefined when there is none. */
export async function lockAgent(
  tx: Queryable,
  agentId: string,
  accountId: string,
  environment: string,
): Promise<{ enabled: boolean } | undefined> {
  const [locked] = await tx.query<{ enabled: boolean }>(
    `SELECT enabled FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL
         FOR UPDATE`,
    [agentId, accountId, environment],
  );
  return locked;
}

/** Applies the changes given (null: unchanged); `enable` also clears why it was disabled. */
export async function updateAgent(
  tx: Queryable,
  agentId: string,
  changes: {
    name: string | null;
    webhookUrl: string | null;
    events: string[] | null;
    setDescription: boolean;
    description: string | null;
    role: AgentRole | null;
    enable: boolean;
  },
): Promise<void> {
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
      changes.name,
      changes.webhookUrl,
      changes.events,
      changes.setDescription,
      changes.description,
      changes.role,
      changes.enable,
    ],
  );
}

/** Marks the account's agent deleted; false when there is none. */
export async function markAgentDeleted(
  tx: Queryable,
  agentId: string,
  accountId: string,
  environment: string,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE agents SET deleted_at = now(), enabled = false, updated_at = now()
         WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL RETURNING id`,
    [agentId, accountId, environment],
  );
  return rows.length > 0;
}

/** Fails the pending deliveries of an agent being deleted. */
export async function failDeliveriesOfDeletedAgent(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = 'agent deleted', updated_at = now()
         WHERE agent_id = $1 AND status = 'pending'`,
    [agentId],
  );
}

/** Fails the pending deliveries of an agent being disabled: a retry sends them once it is enabled. */
export async function failDeliveriesOfDisabledAgent(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    `UPDATE webhook_deliveries SET status = 'failed', last_error = 'agent disabled', updated_at = now()
     WHERE agent_id = $1 AND status = 'pending'`,
    [agentId],
  );
}

/** A new signing secret; the current one keeps signing for `graceSeconds`. */
export async function rotateAgentSecret(
  db: Queryable,
  agentId: string,
  accountId: string,
  environment: string,
  secret: string,
  graceSeconds: number,
): Promise<AgentRow | undefined> {
  const [row] = await db.query<AgentRow>(
    `UPDATE agents SET previous_secret = secret, secret = $4,
         previous_secret_expires_at = now() + $5::int * interval '1 second', updated_at = now()
       WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL
       RETURNING ${AGENT_COLUMNS}`,
    [agentId, accountId, environment, secret, graceSeconds],
  );
  return row;
}

/** Disables an enabled agent; undefined when it was not enabled. */
export async function markAgentDisabled(
  tx: Queryable,
  agentId: string,
  reason: DisabledReason,
): Promise<{ account_id: string; environment: Environment; name: string; disabled_at: Date } | undefined> {
  const [agent] = await tx.query<{ account_id: string; environment: Environment; name: string; disabled_at: Date }>(
    `UPDATE agents SET enabled = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
     WHERE id = $1 AND enabled AND deleted_at IS NULL RETURNING account_id, environment, name, disabled_at`,
    [agentId, reason],
  );
  return agent;
}

export interface DeliveryRow {
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

export interface AttemptRow {
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

/** The agent's deliveries (in `status` unless null), newest first, at most `limit`. */
export function deliveriesOfAgent(
  db: Queryable,
  agentId: string,
  status: DeliveryStatus | null,
  limit: number,
): Promise<DeliveryRow[]> {
  return db.query<DeliveryRow>(
    `${DELIVERY_SELECT} WHERE d.agent_id = $1 AND ($2::text IS NULL OR d.status = $2)
       ORDER BY d.created_at DESC, d.id DESC LIMIT $3`,
    [agentId, status, limit],
  );
}

export async function findDelivery(
  db: Queryable,
  agentId: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  const rows = await db.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.agent_id = $1 AND d.id = $2`, [
    agentId,
    deliveryId,
  ]);
  return rows[0];
}

/** Each delivery's latest `perDelivery` attempts, newest first. */
export function latestAttempts(db: Queryable, deliveryIds: string[], perDelivery: number): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT delivery_id, attempt, started_at, latency_ms, response_status, error FROM (
         SELECT *, row_number() OVER (PARTITION BY delivery_id ORDER BY attempt DESC) AS n
         FROM webhook_attempts WHERE delivery_id = ANY($1)
       ) latest WHERE n <= $2 ORDER BY attempt DESC`,
    [deliveryIds, perDelivery],
  );
}

/** Queues a settled delivery of the agent again, on a new schedule; false when it is pending (or not the agent's). */
export async function requeueDelivery(db: Queryable, deliveryId: string, agentId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', schedule_start = attempts, next_attempt_at = now(),
         updated_at = now()
       WHERE id = $1 AND agent_id = $2 AND status <> 'pending' RETURNING id`,
    [deliveryId, agentId],
  );
  return rows.length > 0;
}

/** Queues again the agent's deliveries failed since `since`; how many. */
export async function requeueFailedDeliveriesSince(db: Queryable, agentId: string, since: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', schedule_start = attempts, next_attempt_at = now(),
         updated_at = now()
       WHERE agent_id = $1 AND status = 'failed' AND created_at >= $2 RETURNING id`,
    [agentId, since.toISOString()],
  );
  return rows.length;
}

/** Ends the pause of the agent's open breaker now. */
export async function endBreakerPause(db: Queryable, agentId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_breakers SET open_until = now(), updated_at = now() WHERE agent_id = $1 AND open_until > now()`,
    [agentId],
  );
}

export async function insertEvent(
  tx: Queryable,
  event: { id: string; accountId: string; environment: string; type: string; payload: string; createdAt: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_events (id, account_id, environment, type, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
    [event.id, event.accountId, event.environment, event.type, event.payload, event.createdAt],
  );
}

/**
 * The ids of the account's enabled agents in `environment` that receive an
 * event of `type`: the one `onlyAgentId` names (whatever it subscribes to),
 * or every one subscribed.
 */
export async function recipientAgents(
  tx: Queryable,
  accountId: string,
  environment: string,
  onlyAgentId: string | null,
  type: string,
): Promise<{ id: string }[]> {
  return tx.query<{ id: string }>(
    `SELECT id FROM agents
     WHERE account_id = $1 AND environment = $2 AND enabled AND deleted_at IS NULL
       AND ($3::text IS NULL OR id = $3) AND ($3::text IS NOT NULL OR $4 = ANY(events))
     ORDER BY id`,
    [accountId, environment, onlyAgentId, type],
  );
}

export async function insertPendingDelivery(
  tx: Queryable,
  deliveryId: string,
  eventId: string,
  agentId: string,
): Promise<void> {
  await tx.query(`INSERT INTO webhook_deliveries (id, event_id, agent_id, status) VALUES ($1, $2, $3, 'pending')`, [
    deliveryId,
    eventId,
    agentId,
  ]);
}

/** A delivery claimed for an attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  schedule_start: number;
  created_at: Date | string;
  agent_id: string;
  account_id: string;
  /** The agent's breaker's last opening as the claim read it (see recordOnBreaker). */
  breaker_opened_at: string | null;
  event_id: string;
  payload: string;
  webhook_url: string;
  secret: string;
  previous_secret: string | null;
}

/** Milliseconds until the next pending delivery comes due (negative when one is due), or null when none is pending. */
export async function msToNextDelivery(db: Queryable): Promise<number | string | null | undefined> {
  const [next] = await db.query<{ ms: number | string | null }>(
    `SELECT EXTRACT(EPOCH FROM (min(next_attempt_at) - now())) * 1000 AS ms
     FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return next?.ms;
}

/**
 * Up to `limit` due deliveries, fairly: each eligible agent offers its oldest
 * due deliveries up to its free share (one while its breaker is half open,
 * none while it is open), and they are taken in rounds — every account's
 * next slot before any account's one after, and within an account every
 * agent's next before any agent's one after — oldest first within a round.
 * An account or agent already holding its share offers nothing. Each is
 * claimed by pushing its due time `claimMs` ahead.
 */
export function claimDeliveries(
  db: Queryable,
  o: {
    limit: number;
    claimMs: number;
    environment: string;
    /** Attempts in flight per agent and per account. */
    busyAgents: [string, number][];
    busyAccounts: [string, number][];
    agentShare: number;
    accountShare: number;
  },
): Promise<ClaimedDelivery[]> {
  return db.query<ClaimedDelivery>(
    `WITH busy_agents AS (
       SELECT * FROM unnest($4::text[], $5::int[]) AS b(agent_id, n)
     ), busy_accounts AS (
       SELECT * FROM unnest($6::text[], $7::int[]) AS b(account_id, n)
     ), eligible AS (
       SELECT a.id AS agent_id, a.account_id, COALESCE(ba.n, 0) AS agent_busy, COALESCE(bc.n, 0) AS account_busy,
         CASE WHEN b.trips > 0 THEN 1 ELSE $8::int END AS share
       FROM agents a
       LEFT JOIN webhook_breakers b ON b.agent_id = a.id AND b.webhook_url = a.webhook_url
       LEFT JOIN busy_agents ba ON ba.agent_id = a.id
       LEFT JOIN busy_accounts bc ON bc.account_id = a.account_id
       WHERE a.enabled AND a.deleted_at IS NULL AND a.environment = $3
         AND (b.open_until IS NULL OR b.open_until <= now())
         AND COALESCE(bc.n, 0) < $9::int
     ), offered AS (
       SELECT e.agent_id, e.account_id, e.account_busy, d.id, d.next_attempt_at,
         e.agent_busy + row_number() OVER (PARTITION BY e.agent_id ORDER BY d.next_attempt_at, d.id) AS agent_slot
       FROM eligible e CROSS JOIN LATERAL (
         SELECT id, next_attempt_at FROM webhook_deliveries
         WHERE agent_id = e.agent_id AND status = 'pending' AND next_attempt_at <= now()
         ORDER BY next_attempt_at, id LIMIT GREATEST(e.share - e.agent_busy, 0)
       ) d
     ), ranked AS (
       SELECT o.id, o.next_attempt_at, o.agent_slot,
         o.account_busy + row_number() OVER (PARTITION BY o.account_id ORDER BY o.agent_slot, o.next_attempt_at, o.id)
           AS account_slot
       FROM offered o
     ), picked AS (
       SELECT id FROM ranked WHERE account_slot <= $9::int
       ORDER BY account_slot, agent_slot, next_attempt_at, id LIMIT $1
     ), due AS (
       SELECT d.id FROM webhook_deliveries d JOIN picked p ON p.id = d.id
       WHERE d.status = 'pending' AND d.next_attempt_at <= now()
       FOR UPDATE OF d SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
         next_attempt_at = now() + $2::int * interval '1 millisecond', updated_at = now()
       FROM due WHERE d.id = due.id
       RETURNING d.id, d.attempts, d.schedule_start, d.created_at, d.agent_id, d.event_id
     )
     SELECT c.*, a.account_id, b.opened_at::text AS breaker_opened_at, e.payload, a.webhook_url, a.secret,
       CASE WHEN a.previous_secret_expires_at > now() THEN a.previous_secret END AS previous_secret
     FROM claimed c JOIN webhook_events e ON e.id = c.event_id JOIN agents a ON a.id = c.agent_id
       LEFT JOIN webhook_breakers b ON b.agent_id = a.id AND b.webhook_url = a.webhook_url`,
    [
      o.limit,
      o.claimMs,
      o.environment,
      o.busyAgents.map(([id]) => id),
      o.busyAgents.map(([, n]) => n),
      o.busyAccounts.map(([id]) => id),
      o.busyAccounts.map(([, n]) => n),
      o.agentShare,
      o.accountShare,
    ],
  );
}

/**
 * Records an attempt and settles its delivery (succeeded, failed for good, or
 * pending until `waitMs`), only while this attempt is the delivery's latest:
 * a disabled agent or a stale pass changes nothing. False when it was not.
 */
export async function recordAttempt(
  tx: Queryable,
  a: {
    deliveryId: string;
    attempt: number;
    startedAt: Date;
    latencyMs: number;
    status: number | null;
    error: string | null;
    succeeded: boolean;
    ended: boolean;
    waitMs: number;
  },
): Promise<boolean> {
  await tx.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, latency_ms, response_status, error)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [a.deliveryId, a.attempt, a.startedAt.toISOString(), a.latencyMs, a.status, a.error],
  );
  const updated = await tx.query(
    `UPDATE webhook_deliveries SET
       status = CASE WHEN $3::boolean THEN 'succeeded' WHEN $4::boolean THEN 'failed' ELSE 'pending' END,
       delivered_at = CASE WHEN $3::boolean THEN now() ELSE delivered_at END,
       next_attempt_at = CASE WHEN $3::boolean OR $4::boolean THEN next_attempt_at
         ELSE now() + $5::int * interval '1 millisecond' END,
       last_response_status = $6, last_error = $7, updated_at = now()
     WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
    [a.deliveryId, a.attempt, a.succeeded, a.ended, a.waitMs, a.status, a.error],
  );
  return updated.length > 0;
}

/** Whether a delivery to the agent succeeded since `since`. */
export async function deliveredSince(tx: Queryable, agentId: string, since: Date | string): Promise<boolean> {
  const [reached] = await tx.query(
    `SELECT 1 FROM webhook_deliveries WHERE agent_id = $1 AND status = 'succeeded' AND delivered_at >= $2 LIMIT 1`,
    [agentId, new Date(since).toISOString()],
  );
  return reached !== undefined;
}

/** Closes the agent's breaker and clears its counts (it answered, or failed at once). */
export async function resetBreaker(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    `UPDATE webhook_breakers SET timeouts = 0, trips = 0, open_until = NULL, updated_at = now()
     WHERE agent_id = $1 AND (timeouts > 0 OR trips > 0 OR open_until IS NOT NULL)`,
    [agentId],
  );
}

/**
 * The agent's breaker row, made if missing, then locked: attempts of one
 * agent finishing together count one after another. `counted` is true when
 * its last opening is not the one `sawOpenedAt` names.
 */
export async function lockBreaker(
  tx: Queryable,
  agentId: string,
  webhookUrl: string,
  sawOpenedAt: string | null,
): Promise<{ webhook_url: string; timeouts: number; trips: number; counted: boolean } | undefined> {
  await tx.query(`INSERT INTO webhook_breakers (agent_id, webhook_url) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
    agentId,
    webhookUrl,
  ]);
  const [row] = await tx.query<{ webhook_url: string; timeouts: number; trips: number; counted: boolean }>(
    `SELECT webhook_url, timeouts, trips, opened_at IS DISTINCT FROM $2::timestamptz AS counted FROM webhook_breakers
     WHERE agent_id = $1 FOR UPDATE`,
    [agentId, sawOpenedAt],
  );
  return row;
}

/** Counts a timeout on a closed breaker. */
export async function countTimeout(
  tx: Queryable,
  agentId: string,
  webhookUrl: string,
  timeouts: number,
): Promise<void> {
  await tx.query(
    `UPDATE webhook_breakers SET webhook_url = $2, timeouts = $3, trips = 0, open_until = NULL, updated_at = now()
     WHERE agent_id = $1`,
    [agentId, webhookUrl, timeouts],
  );
}

/** Opens the breaker for `pauseMs` from now by the clock (not the transaction's start: the pause runs from the lock). */
export async function openBreaker(
  tx: Queryable,
  agentId: string,
  webhookUrl: string,
  trips: number,
  pauseMs: number,
): Promise<void> {
  await tx.query(
    `UPDATE webhook_breakers SET webhook_url = $2, timeouts = 0, trips = $3,
       open_until = clock_timestamp() + $4::int * interval '1 millisecond', opened_at = clock_timestamp(),
       updated_at = clock_timestamp()
     WHERE agent_id = $1`,
    [agentId, webhookUrl, trips, pauseMs],
  );
}

/** The accounts of `environment` with an enabled agent subscribed to `type`, in order. */
export async function accountsListening(tx: Queryable, environment: string, type: string): Promise<string[]> {
  const rows = await tx.query<{ account_id: string }>(
    `SELECT DISTINCT account_id FROM agents
     WHERE environment = $1 AND enabled AND deleted_at IS NULL AND $2 = ANY(events) ORDER BY account_id`,
    [environment, type],
  );
  return rows.map((r) => r.account_id);
}

/** The account's agent `agentId` (not deleted): its role and whether it is enabled. */
export async function agentOf(
  tx: Queryable,
  accountId: string,
  environment: string,
  agentId: string,
): Promise<{ role: string; enabled: boolean } | undefined> {
  const [agent] = await tx.query<{ role: string; enabled: boolean }>(
    `SELECT role, enabled FROM agents WHERE id = $1 AND account_id = $2 AND environment = $3 AND deleted_at IS NULL`,
    [agentId, accountId, environment],
  );
  return agent;
}
