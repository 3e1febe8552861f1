// The compliance agents pages: the environment's agents, and an agent's page
// with its webhook delivery log (a delivery redelivered from there).
import type { Agent, Delivery } from "../../domain/agents/agents.ts";
import { html } from "./html.ts";
import { type PageContext, csrfField, layout, time } from "./layout.ts";
import { table } from "./table.ts";

export function agentsPage(ctx: PageContext, agents: Agent[]): string {
  return layout(
    ctx,
    html`<p>
        Compliance agents of this (${ctx.environment}) environment, registered with
        <code>POST /v1/agents/register</code>.
      </p>
      ${table(
        agents,
        [
          { header: "Name", cell: (a) => html`<a href="/dashboard/agents/${a.agentId}">${a.name}</a>` },
          { header: "Role", cell: (a) => a.role },
          { header: "Status", cell: (a) => (a.enabled ? "enabled" : `disabled (${a.disabledReason ?? "requested"})`) },
          { header: "Webhook", cell: (a) => html`<code>${a.webhookUrl}</code>` },
          { header: "Events", cell: (a) => a.events.join(", ") },
        ],
        { empty: { text: "No agents yet.", as: "paragraph" } },
      )}`,
  );
}

export function agentPage(ctx: PageContext, agent: Agent, deliveries: Delivery[]): string {
  return layout(
    ctx,
    html`<dl>
        <dt>Id</dt>
        <dd><code>${agent.agentId}</code></dd>
        <dt>Status</dt>
        <dd>${agent.enabled ? "enabled" : `disabled (${agent.disabledReason ?? "requested"})`}</dd>
        <dt>Webhook</dt>
        <dd><code>${agent.webhookUrl}</code></dd>
      </dl>
      <h2>Delivery log</h2>
      ${table(
        deliveries,
        [
          { header: "Created", cell: (d) => time(d.createdAt) },
          { header: "Event", cell: (d) => d.eventType },
          { header: "Status", cell: (d) => d.status },
          { header: "Attempts", cell: (d) => d.attemptCount },
          { header: "Last answer", cell: (d) => d.lastResponseStatus ?? d.lastError ?? "–" },
          {
            header: html`<span class="visually-hidden">Actions</span>`,
            cell: (d) =>
              d.status === "pending" || !agent.enabled
                ? ""
                : html`<form
                    method="post"
                    action="/dashboard/agents/${agent.agentId}/deliveries/${d.deliveryId}/redeliver"
                    class="inline"
                  >
                    ${csrfField(ctx.csrfToken)}<button type="submit">Redeliver</button>
                  </form>`,
          },
        ],
        { empty: { text: "No deliveries yet.", as: "paragraph" } },
      )}`,
  );
}
