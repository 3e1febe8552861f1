// What an account's keys did: the analytics page (totals, a chart and its
// figures as a table, breakdowns by key, route and status) and the request log.
import type { Breakdown, LogEntry, Period, Report } from "../../domain/analytics/analytics.ts";
import type { ApiKey } from "../../domain/accounts/keys.ts";
import { type Html, html, jsonData } from "./html.ts";
import { type PageContext, layout, time } from "./layout.ts";
import { table } from "./table.ts";

/** A key in a table's cell: its name, and its prefix and last four as the identifier they are. */
function keyCell(keys: ApiKey[]) {
  const byId = new Map(keys.map((k) => [k.id, k]));
  return (id: string): Html | string => {
    const k = byId.get(id);
    return k ? html`${k.name} <code>${k.prefix}…${k.last4}</code>` : html`<code>${id}</code>`;
  };
}

const ms = (v: number | null) => (v === null ? "–" : v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`);
const rate = (b: Breakdown) => (b.requests ? `${((100 * b.errors) / b.requests).toFixed(1)} %` : "–");

function breakdownTable(caption: string, head: string, rows: Breakdown[], label: (b: Breakdown) => Html | string) {
  return table(
    rows,
    [
      { header: head, cell: label, rowHeader: true },
      { header: "Requests", cell: (b) => b.requests },
      { header: "Error rate", cell: rate },
      { header: "p50", cell: (b) => ms(b.p50) },
      { header: "p99", cell: (b) => ms(b.p99) },
    ],
    { caption, empty: { text: "No requests in this period.", as: "row" } },
  );
}

export function analyticsPage(ctx: PageContext, report: Report, keys: ApiKey[], keyId?: string): string {
  const names = new Map(keys.map((k) => [k.id, `${k.name} (${k.prefix}…${k.last4})`]));
  const periods: Period[] = ["24h", "7d", "30d"];
  const t = report.total;
  return layout(
    { ...ctx, charts: true },
    html`<form method="get" action="/dashboard/analytics" class="filters">
        <label for="period"
          >Period
          <select id="period" name="period">
            ${periods.map((p) => html`<option value="${p}" ${p === report.period ? html`selected` : ""}>${p}</option>`)}
          </select></label
        >
        <label for="key"
          >Key
          <select id="key" name="key">
            <option value="">All keys</option>
            ${keys.map((k) => html`<option value="${k.id}" ${k.id === keyId ? html`selected` : ""}>${names.get(k.id)}</option>`)}
          </select></label
        >
        <button type="submit">Show</button>
      </form>
      <section aria-label="Totals" class="totals">
        <p><strong data-total-requests>${t.requests}</strong> requests</p>
        <p><strong>${rate(t)}</strong> errors</p>
        <p><strong>${ms(t.p50)}</strong> p50</p>
        <p><strong>${ms(t.p99)}</strong> p99</p>
      </section>
      <h2>Requests per ${report.period === "24h" ? "hour" : "day"}</h2>
      <div
        id="chart"
        class="chart"
        role="img"
        aria-label="Requests and errors per ${report.period === "24h" ? "hour" : "day"}; the same figures are in the table below"
      ></div>
      <script type="application/json" id="series">
        ${jsonData(report.series)}
      </script>
      <details>
        <summary>As a table</summary>
        ${table(report.series, [
          { header: "From", cell: (p) => time(p.at) },
          { header: "Requests", cell: (p) => p.requests },
          { header: "Errors", cell: (p) => p.errors },
        ])}
      </details>
      ${breakdownTable("By key", "Key", report.byKey, (b) => keyCell(keys)(b.label))}
      ${breakdownTable("By route", "Route", report.byRoute, (b) => html`<code>${b.label}</code>`)}
      ${breakdownTable("By status", "Status", report.byStatus, (b) => b.label)}
      <p>
        <small
          >Errors are answers with status 400 and above. Latencies are read from per-minute histograms (buckets 25 %
          apart).</small
        >
      </p>`,
  );
}

export function requestsPage(
  ctx: PageContext,
  entries: LogEntry[],
  keys: ApiKey[],
  routes: string[],
  filter: { key?: string; status?: string; route?: string },
  /** Where the next page starts (an entry's id), and whether this one is not the newest. */
  paging: { older?: string; newer: boolean } = { newer: false },
): string {
  const query = (before?: string) =>
    `/dashboard/requests?${new URLSearchParams(
      Object.entries({ ...filter, before }).filter((e): e is [string, string] => e[1] !== undefined),
    ).toString()}`;
  const names = new Map(keys.map((k) => [k.id, `${k.name} (${k.prefix}…${k.last4})`]));
  return layout(
    ctx,
    html`<form method="get" action="/dashboard/requests" class="filters">
        <label for="key"
          >Key
          <select id="key" name="key">
            <option value="">All keys</option>
            ${keys.map((k) => html`<option value="${k.id}" ${k.id === filter.key ? html`selected` : ""}>${names.get(k.id)}</option>`)}
          </select></label
        >
        <label for="status"
          >Status
          <input
            id="status"
            name="status"
            value="${filter.status ?? ""}"
            placeholder="e.g. 403 or 4xx"
            maxlength="3"
            pattern="[1-5]([0-9]{2}|xx)"
        /></label>
        <label for="route"
          >Route
          <select id="route" name="route">
            <option value="">All routes</option>
            ${routes.map((r) => html`<option value="${r}" ${r === filter.route ? html`selected` : ""}>${r}</option>`)}
          </select></label
        >
        <button type="submit">Filter</button>
      </form>
      <p>
        <small
          >The last requests of each key: no bodies, no keys. Give a request id to support to find a request.</small
        >
      </p>
      ${table(
        entries,
        [
          { header: "Time", cell: (e) => time(e.at) },
          { header: "Key", cell: (e) => keyCell(keys)(e.apiKeyId) },
          { header: "Method", cell: (e) => e.method },
          { header: "Route", cell: (e) => html`<code>${e.route}</code>` },
          { header: "Status", cell: (e) => e.status },
          { header: "Latency", cell: (e) => ms(e.latencyMs) },
          { header: "Request id", cell: (e) => html`<code>${e.requestId}</code>` },
          { header: "Idempotency key", cell: (e) => (e.idempotencyKey ? html`<code>${e.idempotencyKey}</code>` : "–") },
        ],
        {
          empty: { text: "No requests match.", as: "row" },
          rowAttributes: (e) => html`data-request-id="${e.requestId}"`,
        },
      )}
      ${
        paging.older || paging.newer
          ? html`<nav aria-label="Request log pages" class="pages">
              <ul>
                ${paging.newer ? html`<li><a href="${query()}">Newest</a></li>` : ""}
                ${paging.older ? html`<li><a href="${query(paging.older)}" rel="next">Older requests</a></li>` : ""}
              </ul>
            </nav>`
          : ""
      }`,
  );
}
