import type { Alert, ComplianceService } from "../../../domain/compliance/compliance.ts";
import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { type AnyRoute, route } from "../../routes.ts";
import {
  alertIdParams,
  alertListSchema,
  alertSchema,
  alertsQuery,
  raiseAlertBody,
  rejectBody,
  releaseBody,
  updateAlertBody,
  verdictBody,
  verdictSchema,
} from "./schema.ts";

const present = (alert: Alert) => ({ object: "alert" as const, ...alert });
const AGENT = "agt_4fQm9ZkT2xWb7LcN1pRs";
const EXAMPLE_ALERT = {
  object: "alert",
  alertId: "alt_8HwV2nQk5TzR1mXb6LcP",
  raisedBy: AGENT,
  subject: { type: "mint", id: "mint_7KpX2mN9qR4tV6wY8zA1" },
  severity: "high",
  category: "sanctions",
  reason: "The recipient matches a sanctions list entry.",
  action: "hold",
  status: "open",
  closeReason: null,
  hold: "held",
  history: [{ status: "open", at: "2026-03-09T08:00:00.000Z", by: AGENT }],
  createdAt: "2026-03-09T08:00:00.000Z",
  updatedAt: "2026-03-09T08:00:00.000Z",
};
const NOT_FOUND = ["resource_not_found", "agent_disabled"] as const;
const TAG = "Compliance alerts";

/** Alerts and holds of the caller's account and environment (mounted before /agents/:agentId). */
export function alertRoutes(compliance: ComplianceService): AnyRoute[] {
  const accountOf = (res: { locals: Record<string, unknown> }) => (res.locals.apiKey as ApiKey).accountId;
  return [
    route({
      method: "post",
      path: "/agents/alerts",
      operationId: "raiseAlert",
      summary:
        "An agent raises an alert on a mint, redemption, position action, deposit or address; a screener's hold stops it",
      tag: TAG,
      auth: true,
      body: raiseAlertBody,
      requestExamples: {
        hold: {
          summary: "A screener holds a queued mint",
          value: {
            agentId: AGENT,
            subject: { type: "mint", id: "mint_7KpX2mN9qR4tV6wY8zA1" },
            severity: "high",
            category: "sanctions",
            reason: "The recipient matches a sanctions list entry.",
            action: "hold",
          },
        },
        holdAction: {
          summary: "A screener holds a queued withdrawal from a position (the relay sends none of the signer's)",
          value: {
            agentId: AGENT,
            subject: { type: "position_action", id: "pact_4Rt8vN2kQ7xZ1mB5cW9y" },
            severity: "high",
            category: "sanctions",
            reason: "The Zcash address it pays matches a list entry.",
            action: "hold",
          },
        },
      },
      responses: { 201: { description: "The alert", schema: alertSchema, example: EXAMPLE_ALERT } },
      problems: [...NOT_FOUND, "screener_required", "not_holdable"],
      handler: async ({ body }, _req, res) => {
        const { agentId, ...input } = body;
        return { status: 201, body: present(await compliance.raise(accountOf(res), agentId, input)) };
      },
    }),
    route({
      method: "get",
      path: "/agents/alerts",
      operationId: "listAlerts",
      summary: "Alerts of the account, newest first, with filters",
      tag: TAG,
      auth: true,
      query: alertsQuery,
      responses: {
        200: {
          description: "A page of alerts",
          schema: alertListSchema,
          example: { object: "list", data: [EXAMPLE_ALERT], hasMore: false },
        },
      },
      handler: async ({ query }, _req, res) => {
        const page = await compliance.list(accountOf(res), query);
        return { status: 200, body: { object: "list", data: page.data.map(present), hasMore: page.hasMore } };
      },
    }),
    route({
      method: "get",
      path: "/alerts/:alertId",
      operationId: "getAlert",
      summary: "An alert, with its history",
      tag: TAG,
      auth: true,
      params: alertIdParams,
      responses: { 200: { description: "The alert", schema: alertSchema, example: EXAMPLE_ALERT } },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: present(await compliance.get(accountOf(res), params.alertId)),
      }),
    }),
    route({
      method: "post",
      path: "/alerts/:alertId",
      operationId: "updateAlert",
      summary: "Move an alert on: open → in_review → dismissed | confirmed (closing says why)",
      tag: TAG,
      auth: true,
      params: alertIdParams,
      body: updateAlertBody,
      requestExamples: {
        close: {
          summary: "Dismiss an alert, saying why",
          value: { agentId: AGENT, status: "dismissed", closeReason: "False positive: a namesake." },
        },
      },
      responses: {
        200: {
          description: "The alert",
          schema: alertSchema,
          example: { ...EXAMPLE_ALERT, status: "dismissed", closeReason: "False positive: a namesake." },
        },
      },
      problems: [...NOT_FOUND, "alert_transition_invalid"],
      handler: async ({ params, body }, _req, res) => {
        const { agentId, ...change } = body;
        return {
          status: 200,
          body: present(await compliance.update(accountOf(res), agentId, params.alertId, change)),
        };
      },
    }),
    route({
      method: "post",
      path: "/alerts/:alertId/release",
      operationId: "releaseHold",
      summary: "A screener releases the mint, redemption or position action the alert holds: it moves on",
      tag: TAG,
      auth: true,
      params: alertIdParams,
      body: releaseBody,
      requestExamples: {
        release: { summary: "Let the mint go on", value: { agentId: AGENT, note: "Cleared after review." } },
      },
      responses: {
        200: { description: "The alert", schema: alertSchema, example: { ...EXAMPLE_ALERT, hold: "released" } },
      },
      problems: [...NOT_FOUND, "screener_required", "not_held"],
      handler: async ({ params, body }, _req, res) => ({
        status: 200,
        body: present(await compliance.release(accountOf(res), body.agentId, params.alertId, body.note)),
      }),
    }),
    route({
      method: "post",
      path: "/alerts/:alertId/reject",
      operationId: "rejectHold",
      summary:
        "A screener rejects what the alert holds: a mint fails (its proof given back), a redemption is failed and its ZEC held for the owner",
      tag: TAG,
      auth: true,
      params: alertIdParams,
      body: rejectBody,
      requestExamples: {
        reject: { summary: "Refuse the mint", value: { agentId: AGENT, reasonCode: "sanctions_match" } },
      },
      responses: {
        200: { description: "The alert", schema: alertSchema, example: { ...EXAMPLE_ALERT, hold: "rejected" } },
      },
      problems: [...NOT_FOUND, "screener_required", "not_held"],
      handler: async ({ params, body }, _req, res) => ({
        status: 200,
        body: present(await compliance.reject(accountOf(res), body.agentId, params.alertId, body.reasonCode)),
      }),
    }),
    route({
      method: "post",
      path: "/agents/verdicts",
      operationId: "giveVerdict",
      summary:
        "A screener's verdict on a mint, redemption or position action waiting for one (when screening is required)",
      tag: TAG,
      auth: true,
      body: verdictBody,
      requestExamples: {
        passed: {
          summary: "A mint screened and passed",
          value: { agentId: AGENT, subject: { type: "mint", id: "mint_7KpX2mN9qR4tV6wY8zA1" }, verdict: "PASSED" },
        },
      },
      responses: {
        200: {
          description: "Where the hold stands now",
          schema: verdictSchema,
          example: {
            object: "verdict",
            subject: { type: "mint", id: "mint_7KpX2mN9qR4tV6wY8zA1" },
            verdict: "PASSED",
            hold: "released",
          },
        },
      },
      problems: [...NOT_FOUND, "screener_required", "verdict_not_awaited"],
      handler: async ({ body }, _req, res) => {
        const { state } = await compliance.verdict(
          accountOf(res),
          body.agentId,
          body.subject,
          body.verdict,
          body.reason,
        );
        return {
          status: 200,
          body: {
            object: "verdict",
            subject: body.subject,
            verdict: body.verdict,
            hold: state as "released" | "rejected",
          },
        };
      },
    }),
  ];
}
