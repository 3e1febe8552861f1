// Events for compliance agents, written to an outbox in the transaction of the
// change that caused them: an event exists exactly when its change does, and
// the webhook worker (api/src/workers/webhooks/worker.ts) delivers it afterwards, at
// least once, however often the API restarts.
import type { Queryable } from "../../adapters/db/index.ts";
import { transactionNow } from "../../adapters/db/clock.ts";
import type { Environment } from "../accounts/keys.ts";
import { randomId } from "../../adapters/ids.ts";
import { insertEvent, insertPendingDelivery, recipientAgents } from "./store.ts";

/** The events an agent may subscribe to. */
export const EVENT_TYPES = [
  "mint.queued",
  "mint.confirmed",
  "mint.failed",
  "mint.held",
  "mint.released",
  "redemption.requested",
  "redemption.paid",
  "redemption.failed",
  "redemption.held",
  "redemption.released",
  "deposit.recorded",
  "alert.raised",
  "alert.updated",
  "agent.disabled",
  "governance.proposal.created",
  "governance.proposal.queued",
  "governance.proposal.executed",
  "governance.vote.confirmed",
  "position.action.confirmed",
  "position.action.failed",
  "position.action.held",
  "position.action.released",
  "withdrawal.confirmed",
  "withdrawal.failed",
  "reserves.shortfall",
  "reserves.restored",
] as const;

export type SubscribableEventType = (typeof EVENT_TYPES)[number];
/** `ping` is sent on request (POST /v1/agents/{id}/test) to one agent, whatever it subscribes to. */
export type EventType = SubscribableEventType | "ping";

export interface EventInput {
  /** The account whose agents hear of it (the account that made the mint, redemption, …). */
  account: string;
  environment: Environment;
  type: EventType;
  /** The payload's `data`: never note secrets, key material or anything that links a deposit to a mint. */
  data: Record<string, unknown>;
}

export interface EmittedEvent {
  eventId: string;
  /** One per agent that will receive it (none when no enabled agent subscribes). */
  deliveryIds: string[];
}

const queuedListeners = new Set<() => void>();

/**
 * Calls `listener` whenever emitEvent queues deliveries (in this process), so
 * that the webhook worker, slow at rest, looks at once and polls fast for a
 * while: the row is visible once the caller's transaction commits. Answers
 * the unsubscribe.
 */
export function onDeliveriesQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

/**
 * Records an event and one delivery per enabled agent of the account and
 * environment that subscribes to its type, inside the caller's transaction:
 *
 *   await db.transaction(async (tx) => {
 *     await tx.query("UPDATE mints SET status = 'confirmed' …");
 *     await emitEvent(tx, { account, environment, type: "mint.confirmed", data: { mintId, txHash } });
 *   });
 *
 * `only` sends it to one agent instead (a ping). Nothing is sent from here:
 * the webhook worker picks deliveries up once the transaction commits.
 */
export async function emitEvent(tx: Queryable, event: EventInput, only?: { agentId: string }): Promise<EmittedEvent> {
  const eventId = randomId("evt");
  // The time is taken from the database, as every other timestamp of the row's transaction.
  const createdAt = new Date(await transactionNow(tx)).toISOString();
  // Serialised once: every attempt sends (and signs) the same bytes.
  const payload = JSON.stringify({
    id: eventId,
    type: event.type,
    createdAt,
    environment: event.environment,
    data: event.data,
  });
  await insertEvent(tx, {
    id: eventId,
    accountId: event.account,
    environment: event.environment,
    type: event.type,
    payload,
    createdAt,
  });
  const agents = await recipientAgents(tx, event.account, event.environment, only?.agentId ?? null, event.type);
  const deliveryIds: string[] = [];
  for (const agent of agents) {
    const deliveryId = randomId("dlv");
    await insertPendingDelivery(tx, deliveryId, eventId, agent.id);
    deliveryIds.push(deliveryId);
  }
  if (deliveryIds.length > 0) for (const listener of queuedListeners) listener();
  return { eventId, deliveryIds };
}
