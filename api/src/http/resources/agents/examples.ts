// Example requests and answers for the OpenAPI document (each one passes its schema: test/api/http/openapi.test.ts).
const AGENT_ID = "agt_4kQ9zR2mT7vB1nX8cL5p";

export const EXAMPLE_AGENT = {
  object: "agent" as const,
  agentId: AGENT_ID,
  environment: "sandbox" as const,
  name: "Screening desk",
  description: "Our compliance team's case tool",
  role: "observer" as const,
  webhookUrl: "https://compliance.example.com/zsd/webhooks",
  events: ["mint.confirmed", "redemption.requested", "alert.raised"] as const,
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  previousSecretExpiresAt: null,
  createdAt: "2026-03-09T08:00:00.000Z",
  updatedAt: "2026-03-09T08:00:00.000Z",
};

export const EXAMPLE_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1Hdyc9gFj3E=";

export const EXAMPLE_REGISTER = {
  name: "Screening desk",
  webhookUrl: "https://compliance.example.com/zsd/webhooks",
  events: ["mint.confirmed", "redemption.requested", "alert.raised"],
  description: "Our compliance team's case tool",
  role: "observer",
};

export const EXAMPLE_DELIVERY = {
  object: "webhook_delivery" as const,
  deliveryId: "dlv_9sW3eR5tY7uI1oP3aS5d",
  agentId: AGENT_ID,
  eventId: "evt_2bN4mQ6wE8rT0yU2iO4p",
  eventType: "mint.confirmed",
  status: "succeeded" as const,
  attemptCount: 2,
  nextAttemptAt: null,
  lastResponseStatus: 200,
  lastError: null,
  deliveredAt: "2026-03-09T08:00:05.412Z",
  createdAt: "2026-03-09T08:00:00.000Z",
  attempts: [
    { attempt: 2, startedAt: "2026-03-09T08:00:05.301Z", responseStatus: 200, latencyMs: 111, error: null },
    { attempt: 1, startedAt: "2026-03-09T08:00:00.120Z", responseStatus: 503, latencyMs: 87, error: "answered 503" },
  ],
};

export const EXAMPLE_PING = {
  ...EXAMPLE_DELIVERY,
  eventType: "ping",
  status: "pending" as const,
  attemptCount: 0,
  nextAttemptAt: "2026-03-09T08:00:00.000Z",
  lastResponseStatus: null,
  deliveredAt: null,
  attempts: [],
};
