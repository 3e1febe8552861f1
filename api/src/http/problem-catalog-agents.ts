// The problems of compliance agents, alerts and holds. Spread into
// PROBLEM_CATALOG (problem-catalog.ts); kept apart so that file stays readable.
import type { ProblemEntry } from "./problem-fields.ts";

export const AGENT_PROBLEMS = {
  webhook_url_not_allowed: {
    status: 400,
    title: "Webhook URL not allowed",
    meaning:
      "The webhook URL may not receive events here: in production it must be https and resolve to public " +
      "addresses only (no loopback, private, link-local or other special address); the sandbox also allows " +
      "http and loopback. Nothing was registered or changed.",
    fields: ["errors"],
    example: {
      detail: "The webhook URL resolves to a private address (10.0.0.1), which is not allowed.",
      errors: [{ field: "body.webhookUrl", message: "resolves to a private address (10.0.0.1), which is not allowed" }],
    },
  },
  agent_limit_reached: {
    status: 409,
    title: "Agent limit reached",
    meaning: "The account holds the most agents allowed in this environment: delete one first.",
    fields: ["limit"],
    example: { detail: "This account holds 25 sandbox agents, the most allowed; delete one first.", limit: 25 },
  },
  agent_disabled: {
    status: 409,
    title: "Agent disabled",
    meaning:
      "The agent is disabled (by its owner, by a 410 from its endpoint, or after every attempt failed for days): " +
      "nothing is sent to it. Enable it (POST /v1/agents/{agentId} with enabled: true) first.",
    example: {
      detail:
        'Agent agt_00000000000000000000 is disabled; enable it (POST /v1/agents/agt_00000000000000000000 with {"enabled": true}) first.',
    },
  },
  screener_required: {
    status: 422,
    title: "Screener required",
    meaning:
      "Holding, releasing, rejecting and verdicts are for screener agents; this agent is an observer. " +
      "Change its role (POST /v1/agents/{agentId} with role: screener) or act with a screener.",
    fields: ["agentId"],
    example: {
      detail:
        "Agent agt_00000000000000000000 is an observer; only a screener agent may hold, release, reject or give verdicts.",
      agentId: "agt_00000000000000000000",
    },
  },
  not_holdable: {
    status: 409,
    title: "Cannot be held",
    meaning:
      "Only a queued mint, or a redemption whose burn or payout has not started, can be held: this one has moved on. " +
      "Raise the alert with action none.",
    example: {
      detail:
        "The mint mint_00000000000000000000 is confirmed; only a queued mint, or a redemption whose burn or payout has not started, can be held.",
    },
  },
  not_held: {
    status: 409,
    title: "Nothing held",
    meaning: "The alert's subject is not held (it was released or rejected already, or never held): nothing to decide.",
    example: { detail: "The mint mint_00000000000000000000 is not held (its hold was released)." },
  },
  alert_transition_invalid: {
    status: 409,
    title: "Alert cannot move so",
    meaning: "Alerts move open → in_review → dismissed | confirmed; a closed alert does not move again.",
    fields: ["alertStatus"],
    example: {
      detail: "The alert is dismissed; it can move to nothing (it is closed).",
      alertStatus: "dismissed",
    },
  },
  verdict_not_awaited: {
    status: 409,
    title: "No verdict awaited",
    meaning:
      "The mint, redemption or position action is not waiting for a verdict (screening is off, the verdict came already, or its timeout applied the default).",
    example: { detail: "The mint mint_00000000000000000000 is not waiting for a verdict (it is released)." },
  },
} as const satisfies Record<string, ProblemEntry>;
