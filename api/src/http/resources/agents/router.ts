import type { Agent, AgentService, Delivery } from "../../../domain/agents/agents.ts";
import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { problems } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { EXAMPLE_AGENT, EXAMPLE_DELIVERY, EXAMPLE_PING, EXAMPLE_REGISTER, EXAMPLE_SECRET } from "./examples.ts";
import {
  agentIdParams,
  agentListSchema,
  agentSchema,
  agentWithSecretSchema,
  deletedAgentSchema,
  deliveriesQuery,
  deliveryListSchema,
  deliveryParams,
  deliverySchema,
  registerAgentBody,
  retriedSchema,
  retrySinceBody,
  updateAgentBody,
} from "./schema.ts";

const present = (agent: Agent) => ({ object: "agent" as const, ...agent });
const presentDelivery = (delivery: Delivery) => ({ object: "webhook_delivery" as const, ...delivery });
const TAG = "Compliance agents";

/** Compliance agents of the caller's account and environment; any other agent is not found. */
export function agentRoutes(agents: AgentService): AnyRoute[] {
  const caller = (res: { locals: Record<string, unknown> }) => res.locals.apiKey as ApiKey;
  return [
    // Before /agents/:agentId, which would otherwise take "register" for an id.
    route({
      method: "post",
      path: "/agents/register",
      operationId: "registerAgent",
      summary:
        "Register a compliance agent: its webhook receives the events it subscribes to, signed (secret shown once)",
      tag: TAG,
      auth: true,
      problems: ["webhook_url_not_allowed", "agent_limit_reached"],
      body: registerAgentBody,
      requestExamples: {
        observer: { summary: "An observer of mints, redemptions and alerts", value: EXAMPLE_REGISTER },
      },
      responses: {
        201: {
          description: "The agent, with its signing secret",
          schema: agentWithSecretSchema,
          example: { ...EXAMPLE_AGENT, secret: EXAMPLE_SECRET },
        },
        409: { description: "The account holds its allowance of agents in this environment" },
      },
      handler: async ({ body }, _req, res) => {
        const { accountId, environment } = caller(res);
        const { agent, secret } = await agents.register(accountId, environment, body);
        res.locals.idempotencyRedact = ["secret"];
        return { status: 201, body: { ...present(agent), secret } };
      },
    }),
    route({
      method: "get",
      path: "/agents",
      operationId: "listAgents",
      summary: "List the account's compliance agents of this environment",
      tag: TAG,
      auth: true,
      problems: ["not_found"],
      responses: {
        200: { description: "The agents", schema: agentListSchema, example: { object: "list", data: [EXAMPLE_AGENT] } },
      },
      handler: async (_input, req, res) => {
        // "/v1/agents/" is an agent path with its id left out (Express would take it for this one).
        if (req.originalUrl.split("?")[0]!.endsWith("/")) throw problems.notFound(req.originalUrl.split("?")[0]!);
        const { accountId, environment } = caller(res);
        return {
          status: 200,
          body: { object: "list", data: (await agents.list(accountId, environment)).map(present) },
        };
      },
    }),
    route({
      method: "get",
      path: "/agents/:agentId",
      operationId: "getAgent",
      summary: "A compliance agent",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found"],
      params: agentIdParams,
      responses: { 200: { description: "The agent", schema: agentSchema, example: EXAMPLE_AGENT } },
      handler: async ({ params }, _req, res) => {
        const { accountId, environment } = caller(res);
        return { status: 200, body: present(await agents.get(accountId, environment, params.agentId)) };
      },
    }),
    route({
      method: "post",
      path: "/agents/:agentId",
      operationId: "updateAgent",
      summary: "Change a compliance agent (name, URL, events, description, role), or disable / enable it",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found", "webhook_url_not_allowed"],
      params: agentIdParams,
      body: updateAgentBody,
      requestExamples: {
        events: { summary: "Subscribe to other events", value: { events: ["alert.raised", "alert.updated"] } },
        disable: { summary: "Stop deliveries", value: { enabled: false } },
      },
      responses: {
        200: {
          description: "The agent as changed",
          schema: agentSchema,
          example: { ...EXAMPLE_AGENT, events: ["alert.raised", "alert.updated"] },
        },
      },
      handler: async ({ params, body }, _req, res) => {
        const { accountId, environment } = caller(res);
        return { status: 200, body: present(await agents.update(accountId, environment, params.agentId, body)) };
      },
    }),
    route({
      method: "delete",
      path: "/agents/:agentId",
      operationId: "deleteAgent",
      summary: "Delete a compliance agent: it receives nothing more",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found"],
      params: agentIdParams,
      responses: {
        200: {
          description: "The agent is deleted",
          schema: deletedAgentSchema,
          example: { object: "agent", agentId: EXAMPLE_AGENT.agentId, deleted: true },
        },
      },
      handler: async ({ params }, _req, res) => {
        const { accountId, environment } = caller(res);
        await agents.remove(accountId, environment, params.agentId);
        return { status: 200, body: { object: "agent", agentId: params.agentId, deleted: true } };
      },
    }),
    route({
      method: "post",
      path: "/agents/:agentId/rotate-secret",
      operationId: "rotateAgentSecret",
      summary:
        "A new signing secret (shown once); the previous one keeps signing beside it for a grace period " +
        "(WEBHOOK_SECRET_GRACE_SECONDS, a day by default)",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found"],
      params: agentIdParams,
      responses: {
        200: {
          description: "The agent, with its new signing secret",
          schema: agentWithSecretSchema,
          example: {
            ...EXAMPLE_AGENT,
            previousSecretExpiresAt: "2026-03-10T08:00:00.000Z",
            updatedAt: "2026-03-09T08:00:00.000Z",
            secret: EXAMPLE_SECRET,
          },
        },
      },
      handler: async ({ params }, _req, res) => {
        const { accountId, environment } = caller(res);
        const { agent, secret } = await agents.rotateSecret(accountId, environment, params.agentId);
        res.locals.idempotencyRedact = ["secret"];
        return { status: 200, body: { ...present(agent), secret } };
      },
    }),
    route({
      method: "post",
      path: "/agents/:agentId/test",
      operationId: "testAgent",
      summary: "Send the agent a ping event, as every event is sent (signed, retried, logged)",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found", "agent_disabled"],
      params: agentIdParams,
      responses: {
        202: { description: "The ping's delivery, queued", schema: deliverySchema, example: EXAMPLE_PING },
        409: { description: "The agent is disabled" },
      },
      handler: async ({ params }, _req, res) => {
        const { accountId, environment } = caller(res);
        return { status: 202, body: presentDelivery(await agents.ping(accountId, environment, params.agentId)) };
      },
    }),
    route({
      method: "get",
      path: "/agents/:agentId/deliveries",
      operationId: "listAgentDeliveries",
      summary: "The agent's delivery log: each event sent to it, its status and its attempts (status, latency, error)",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found"],
      params: agentIdParams,
      query: deliveriesQuery,
      responses: {
        200: {
          description: "The deliveries, newest first",
          schema: deliveryListSchema,
          example: { object: "list", data: [EXAMPLE_DELIVERY] },
        },
      },
      handler: async ({ params, query }, _req, res) => {
        const { accountId, environment } = caller(res);
        const deliveries = await agents.deliveries(accountId, environment, params.agentId, query);
        return { status: 200, body: { object: "list", data: deliveries.map(presentDelivery) } };
      },
    }),
    route({
      method: "post",
      path: "/agents/:agentId/deliveries/retry",
      operationId: "retryFailedAgentDeliveries",
      summary: "Send again every failed delivery of the agent made since a time (same events, same webhook-ids)",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found", "agent_disabled"],
      params: agentIdParams,
      body: retrySinceBody,
      requestExamples: {
        since: { summary: "Every failed delivery of the last day", value: { since: "2026-03-08T08:00:00Z" } },
      },
      responses: {
        202: {
          description: "How many deliveries were queued again",
          schema: retriedSchema,
          example: {
            object: "delivery_retry",
            agentId: EXAMPLE_AGENT.agentId,
            since: "2026-03-08T08:00:00.000Z",
            count: 3,
          },
        },
        409: { description: "The agent is disabled" },
      },
      handler: async ({ params, body }, _req, res) => {
        const { accountId, environment } = caller(res);
        const count = await agents.retryFailedSince(accountId, environment, params.agentId, body.since);
        return {
          status: 202,
          body: { object: "delivery_retry", agentId: params.agentId, since: body.since.toISOString(), count },
        };
      },
    }),
    route({
      method: "post",
      path: "/agents/:agentId/deliveries/:deliveryId/retry",
      operationId: "retryAgentDelivery",
      summary: "Send a delivery again, on a new schedule of attempts (same event, same webhook-id)",
      tag: TAG,
      auth: true,
      problems: ["resource_not_found", "agent_disabled"],
      params: deliveryParams,
      responses: {
        202: {
          description: "The delivery, queued again (one still pending is left as it is)",
          schema: deliverySchema,
          example: {
            ...EXAMPLE_DELIVERY,
            status: "pending",
            nextAttemptAt: "2026-03-09T09:00:00.000Z",
            deliveredAt: "2026-03-09T08:00:05.412Z",
          },
        },
        409: { description: "The agent is disabled" },
      },
      handler: async ({ params }, _req, res) => {
        const { accountId, environment } = caller(res);
        const delivery = await agents.retry(accountId, environment, params.agentId, params.deliveryId);
        return { status: 202, body: presentDelivery(delivery) };
      },
    }),
  ];
}
