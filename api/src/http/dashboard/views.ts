// The dashboard's pages: semantic HTML styled by Pico's classless sheet, so
// that labels, focus, contrast and a phone-sized layout come from the markup.
import type { Agent, Delivery } from "../../domain/agents.ts";
import type { Breakdown, LogEntry, Period, Report } from "../../domain/analytics.ts";
import type { Account } from "../../domain/accounts.ts";
import { type ApiKey, KEY_RESOURCES, type KeyResource } from "../../domain/keys.ts";
import { type Html, html, jsonData } from "./html.ts";

export const ASSETS = {
  pico: "/dashboard/assets/pico.classless.min.css",
  css: "/dashboard/assets/dashboard.css",
  uplotCss: "/dashboard/assets/uPlot.min.css",
  uplotJs: "/dashboard/assets/uPlot.iife.min.js",
  js: "/dashboard/assets/dashboard.js",
};

export interface PageContext {
  title: string;
  account?: Account;
  csrfToken?: string;
  environment: "sandbox" | "production";
  /** The tab shown as current. */
  tab?: "keys" | "analytics" | "requests" | "agents" | "sandbox" | "account";
  notice?: string;
  errors?: string[];
  charts?: boolean;
}

export const csrfField = (token: string | undefined) => html`<input type="hidden" name="_csrf" value="${token}" />`;

export function layout(ctx: PageContext, body: Html): string {
  type Tab = readonly [NonNullable<PageContext["tab"]>, string, string];
  const tabs: Tab[] = [
    ["keys", "API Keys", "/dashboard/keys"],
    ["analytics", "Analytics", "/dashboard/analytics"],
    ["requests", "Request log", "/dashboard/requests"],
    ["agents", "Agents", "/dashboard/agents"],
    ...(ctx.environment === "sandbox" ? [["sandbox", "Sandbox", "/dashboard/sandbox"] as Tab] : []),
    ["account", "Account", "/dashboard/account"],
  ];
  const nav = ctx.account
    ? html`<nav aria-label="Dashboard">
        <ul>
          <li><strong>ZSD dashboard</strong> <small>${ctx.environment}</small></li>
        </ul>
        <ul>
          ${tabs.map(
            ([tab, label, href]) =>
              html`<li><a href="${href}" ${tab === ctx.tab ? html`aria-current="page"` : ""}>${label}</a></li>`,
          )}
          <li>
            <form method="post" action="/dashboard/signout" class="inline">
              ${csrfField(ctx.csrfToken)}<button type="submit" class="link">Sign out</button>
            </form>
          </li>
        </ul>
      </nav>`
    : html`<nav aria-label="Dashboard">
        <ul>
          <li><strong>ZSD dashboard</strong> <small>${ctx.environment}</small></li>
        </ul>
      </nav>`;
  const errors = ctx.errors?.length
    ? html`<section role="alert" class="errors">
        <ul>
          ${ctx.errors.map((e) => html`<li>${e}</li>`)}
        </ul>
      </section>`
    : "";
  const notice = ctx.notice ? html`<p role="status" class="notice">${ctx.notice}</p>` : "";
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>${ctx.title} · ZSD dashboard</title>
        <link rel="stylesheet" href="${ASSETS.pico}" />
        ${ctx.charts ? html`<link rel="stylesheet" href="${ASSETS.uplotCss}" />` : ""}
        <link rel="stylesheet" href="${ASSETS.css}" />
      </head>
      <body>
        <header>${nav}</header>
        <main>
          <h1>${ctx.title}</h1>
          ${errors}${notice}${body}
        </main>
        ${ctx.charts ? html`<script src="${ASSETS.uplotJs}"></script>` : ""}
        <script src="${ASSETS.js}"></script>
      </body>
    </html>`.value;
}

const time = (iso: string | null) =>
  iso ? html`<time datetime="${iso}">${iso.replace("T", " ").slice(0, 19)}</time>` : "never";

export const describeRestrictions = (k: ApiKey) => {
  const r = k.restrictions;
  const parts = [
    r.readOnly ? "read-only" : "",
    r.resources ? `resources: ${r.resources.join(", ") || "none"}` : "",
    r.allowedIps ? `IPs: ${r.allowedIps.join(", ")}` : "",
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "full access";
};

function restrictionFields(r: ApiKey["restrictions"] | undefined): Html {
  return html`<fieldset>
      <legend>Restrictions <small>(optional)</small></legend>
      <label
        ><input type="checkbox" name="readOnly" value="on" ${r?.readOnly ? html`checked` : ""} /> Read-only (GET
        requests only)</label
      >
    </fieldset>
    <fieldset>
      <legend>Resources this key may call <small>(none ticked: all)</small></legend>
      ${(Object.keys(KEY_RESOURCES) as KeyResource[]).map(
        (res) =>
          html`<label
            ><input
              type="checkbox"
              name="resources"
              value="${res}"
              ${r?.resources?.includes(res) ? html`checked` : ""}
            />
            <span>${res}</span> <small>(${KEY_RESOURCES[res].map((s) => `/v1/${s}`).join(", ")})</small></label
          >`,
      )}
    </fieldset>
    <label for="allowedIps"
      >Allowed IP addresses <small>(IPs or CIDR ranges, one a line or comma-separated; empty: any)</small></label
    >
    <textarea id="allowedIps" name="allowedIps" rows="2" maxlength="2000">
${r?.allowedIps?.join("\n") ?? ""}</textarea>`;
}

export function keysPage(ctx: PageContext, keys: ApiKey[], created?: ApiKey & { secret: string }): string {
  const secret = created
    ? html`<article aria-labelledby="new-key">
        <h2 id="new-key">Your new key “${created.name}”</h2>
        <p>
          <strong>Copy it now: it is shown once.</strong> Store it as a secret on your server; it never belongs in a
          browser.
        </p>
        <p><output id="secret" data-secret>${created.secret}</output></p>
        <button type="button" data-copy="#secret">Copy</button> <span data-copied role="status"></span>
      </article>`
    : "";
  const rows = keys.map(
    (k) =>
      html`<tr>
        <td><a href="/dashboard/keys/${k.id}">${k.name}</a></td>
        <td><code>${k.prefix}…${k.last4}</code></td>
        <td>${k.environment}</td>
        <td>${describeRestrictions(k)}</td>
        <td>${time(k.createdAt)}</td>
        <td>${time(k.lastUsedAt)}</td>
        <td>
          ${k.revokedAt ? html`revoked ${time(k.revokedAt)}` : html`<a href="/dashboard/keys/${k.id}/revoke">Revoke</a>`}
        </td>
      </tr>`,
  );
  return layout(
    ctx,
    html`${secret}
      <h2>Keys</h2>
      ${
        keys.length
          ? html`<figure class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Environment</th>
                    <th scope="col">Access</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${rows}
                </tbody>
              </table>
            </figure>`
          : html`<p>No keys yet.</p>`
      }
      <h2>Create a key</h2>
      <form method="post" action="/dashboard/keys">
        ${csrfField(ctx.csrfToken)}
        <label for="name">Name</label>
        <input id="name" name="name" required maxlength="100" placeholder="checkout backend" />
        <fieldset>
          <legend>Environment</legend>
          <label
            ><input type="radio" name="environment" value="sandbox" checked /> Sandbox (<code>sk_test_</code>)</label
          >
          <label><input type="radio" name="environment" value="production" /> Production (<code>sk_live_</code>)</label>
        </fieldset>
        ${restrictionFields(undefined)}
        <button type="submit">Create key</button>
      </form>`,
  );
}

export function keyPage(ctx: PageContext, key: ApiKey): string {
  return layout(
    ctx,
    html`<dl>
        <dt>Key</dt>
        <dd><code>${key.prefix}…${key.last4}</code> (${key.environment})</dd>
        <dt>Id</dt>
        <dd><code>${key.id}</code></dd>
        <dt>Access</dt>
        <dd>${describeRestrictions(key)}</dd>
        <dt>Created</dt>
        <dd>${time(key.createdAt)}</dd>
        <dt>Last used</dt>
        <dd>${time(key.lastUsedAt)}</dd>
        ${
          key.revokedAt
            ? html`<dt>Revoked</dt>
                <dd>${time(key.revokedAt)}</dd>`
            : ""
        }
      </dl>
      <p>
        <a href="/dashboard/requests?key=${key.id}">Request log</a> ·
        <a href="/dashboard/analytics?key=${key.id}">Analytics</a>
      </p>
      ${
        key.revokedAt
          ? ""
          : html`<h2>Restrictions</h2>
              <form method="post" action="/dashboard/keys/${key.id}/restrictions">
                ${csrfField(ctx.csrfToken)} ${restrictionFields(key.restrictions)}
                <button type="submit">Save restrictions</button>
              </form>
              <p><a href="/dashboard/keys/${key.id}/revoke">Revoke this key…</a></p>`
      }`,
  );
}

export function revokePage(ctx: PageContext, key: ApiKey): string {
  return layout(
    ctx,
    html`<p>
        Revoking <strong>${key.name}</strong> (<code>${key.prefix}…${key.last4}</code>) refuses every request made with
        it from now on. This cannot be undone.
      </p>
      <form method="post" action="/dashboard/keys/${key.id}/revoke">
        ${csrfField(ctx.csrfToken)}
        <button type="submit" class="danger">Yes, revoke this key</button>
        <a href="/dashboard/keys">Cancel</a>
      </form>`,
  );
}

const ms = (v: number | null) => (v === null ? "–" : v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`);
const rate = (b: Breakdown) => (b.requests ? `${((100 * b.errors) / b.requests).toFixed(1)} %` : "–");

function breakdownTable(caption: string, head: string, rows: Breakdown[], label: (b: Breakdown) => Html | string) {
  return html`<figure class="scroll">
    <table>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">${head}</th>
          <th scope="col">Requests</th>
          <th scope="col">Error rate</th>
          <th scope="col">p50</th>
          <th scope="col">p99</th>
        </tr>
      </thead>
      <tbody>
        ${
          rows.length
            ? rows.map(
                (b) =>
                  html`<tr>
                    <th scope="row">${label(b)}</th>
                    <td>${b.requests}</td>
                    <td>${rate(b)}</td>
                    <td>${ms(b.p50)}</td>
                    <td>${ms(b.p99)}</td>
                  </tr>`,
              )
            : html`<tr>
                <td colspan="5">No requests in this period.</td>
              </tr>`
        }
      </tbody>
    </table>
  </figure>`;
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
        <figure class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">Requests</th>
                <th scope="col">Errors</th>
              </tr>
            </thead>
            <tbody>
              ${report.series.map(
                (s) =>
                  html`<tr>
                    <td>${time(s.at)}</td>
                    <td>${s.requests}</td>
                    <td>${s.errors}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </figure>
      </details>
      ${breakdownTable("By key", "Key", report.byKey, (b) => names.get(b.label) ?? b.label)}
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
): string {
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
      <figure class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Key</th>
              <th scope="col">Method</th>
              <th scope="col">Route</th>
              <th scope="col">Status</th>
              <th scope="col">Latency</th>
              <th scope="col">Request id</th>
              <th scope="col">Idempotency key</th>
            </tr>
          </thead>
          <tbody>
            ${
              entries.length
                ? entries.map(
                    (e) =>
                      html`<tr data-request-id="${e.requestId}">
                        <td>${time(e.at)}</td>
                        <td>${names.get(e.apiKeyId) ?? e.apiKeyId}</td>
                        <td>${e.method}</td>
                        <td><code>${e.route}</code></td>
                        <td>${e.status}</td>
                        <td>${ms(e.latencyMs)}</td>
                        <td><code>${e.requestId}</code></td>
                        <td>${e.idempotencyKey ? html`<code>${e.idempotencyKey}</code>` : "–"}</td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="8">No requests match.</td>
                  </tr>`
            }
          </tbody>
        </table>
      </figure>`,
  );
}

export function agentsPage(ctx: PageContext, agents: Agent[]): string {
  return layout(
    ctx,
    html`<p>
        Compliance agents of this (${ctx.environment}) environment, registered with
        <code>POST /v1/agents/register</code>.
      </p>
      ${
        agents.length
          ? html`<figure class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Role</th>
                    <th scope="col">Status</th>
                    <th scope="col">Webhook</th>
                    <th scope="col">Events</th>
                  </tr>
                </thead>
                <tbody>
                  ${agents.map(
                    (a) =>
                      html`<tr>
                        <td><a href="/dashboard/agents/${a.agentId}">${a.name}</a></td>
                        <td>${a.role}</td>
                        <td>${a.enabled ? "enabled" : `disabled (${a.disabledReason ?? "requested"})`}</td>
                        <td><code>${a.webhookUrl}</code></td>
                        <td>${a.events.join(", ")}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </figure>`
          : html`<p>No agents yet.</p>`
      }`,
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
      ${
        deliveries.length
          ? html`<figure class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Created</th>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last answer</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${deliveries.map(
                    (d) =>
                      html`<tr>
                        <td>${time(d.createdAt)}</td>
                        <td>${d.eventType}</td>
                        <td>${d.status}</td>
                        <td>${d.attemptCount}</td>
                        <td>${d.lastResponseStatus ?? d.lastError ?? "–"}</td>
                        <td>
                          ${
                            d.status === "pending" || !agent.enabled
                              ? ""
                              : html`<form
                                  method="post"
                                  action="/dashboard/agents/${agent.agentId}/deliveries/${d.deliveryId}/redeliver"
                                  class="inline"
                                >
                                  ${csrfField(ctx.csrfToken)}<button type="submit">Redeliver</button>
                                </form>`
                          }
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </figure>`
          : html`<p>No deliveries yet.</p>`
      }`,
  );
}

export function sandboxPage(
  ctx: PageContext,
  available: boolean,
  result?: { leafIndex: number; txHash: string; amount: string; note?: string; noteCommitment: string },
): string {
  return layout(
    ctx,
    html`<h2>Simulate a deposit</h2>
      <p>
        Records a shielded ZEC deposit to the custody address on the sandbox chain, as the attestor would after seeing
        it (the same as <code>POST /v1/sandbox/deposits</code>).
      </p>
      ${
        result
          ? html`<article aria-labelledby="deposit-done">
              <h3 id="deposit-done">Deposit recorded</h3>
              <dl>
                <dt>Amount</dt>
                <dd>${result.amount} ZEC</dd>
                <dt>Leaf index</dt>
                <dd>${result.leafIndex}</dd>
                <dt>Transaction</dt>
                <dd><code>${result.txHash}</code></dd>
                <dt>Note commitment</dt>
                <dd><code>${result.noteCommitment}</code></dd>
                ${
                  result.note
                    ? html`<dt>Note (shown once: it spends the deposit)</dt>
                        <dd>
                          <output id="note">${result.note}</output>
                          <button type="button" data-copy="#note">Copy</button> <span data-copied role="status"></span>
                        </dd>`
                    : ""
                }
              </dl>
            </article>`
          : ""
      }
      ${
        available
          ? html`<form method="post" action="/dashboard/sandbox/deposits">
              ${csrfField(ctx.csrfToken)}
              <label for="amount">Amount (ZEC)</label>
              <input
                id="amount"
                name="amount"
                required
                inputmode="decimal"
                pattern="[0-9]{1,11}([.][0-9]{1,8})?"
                placeholder="1.5"
              />
              <label for="noteCommitment"
                >Note commitment <small>(empty: a new note is made for you and shown once)</small></label
              >
              <input id="noteCommitment" name="noteCommitment" maxlength="80" placeholder="0x… or decimal" />
              <button type="submit">Record deposit</button>
            </form>`
          : html`<p role="status">
              The sandbox custody is not configured on this server (no deployment or attestor key).
            </p>`
      }
      <h2>Magic values</h2>
      <p>
        The sandbox's rules agent fires on these, so that alert and hold handling can be tried without real traffic. An
        amount is a mint's or redemption's ZSD, or what a position action names: the ZSD a repayment burns, the ZEC a
        withdrawal or top-up moves, the collateral a close or liquidation releases.
      </p>
      <figure class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Send</th>
              <th scope="col">What happens</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>an amount ending in <code>.13</code> (e.g. a mint of <code>100.13</code> ZSD)</td>
              <td>a large-amount alert, as if above the threshold</td>
            </tr>
            <tr>
              <td>an amount ending in <code>.14</code> (e.g. a redemption of <code>25.14</code> ZSD)</td>
              <td>a velocity alert, as if too many in the window</td>
            </tr>
            <tr>
              <td>an amount ending in <code>.15</code> (e.g. a repayment of <code>5.15</code> ZSD)</td>
              <td>a denied-address alert, as if the address were denied: it is held</td>
            </tr>
            <tr>
              <td>a recipient, owner or signer address ending in <code>dead</code></td>
              <td>a denied-address alert: the mint, redemption or position action is held</td>
            </tr>
          </tbody>
        </table>
      </figure>`,
  );
}

export function errorPage(ctx: PageContext, status: number, message: string): string {
  return layout(
    { ...ctx, title: status === 404 ? "Not found" : status === 403 ? "Refused" : "Something went wrong" },
    html`<p>${message}</p>
      <p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}
