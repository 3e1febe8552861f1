// The frame of every dashboard page (head, tabs, errors and notices) and the
// small pieces all pages share. Apart from the pages so that each group of
// pages (key-views.ts, traffic-views.ts, agent-views.ts, sandbox-views.ts,
// account-views.ts) imports it without importing one another. The markup is
// semantic HTML styled by Pico's classless sheet, so that labels, focus,
// contrast and a phone-sized layout come from the markup.
import type { Account } from "../../domain/accounts/accounts.ts";
import { type Html, html } from "./html.ts";

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
  tab?: "keys" | "analytics" | "requests" | "agents" | "reserves" | "sandbox" | "account";
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
    ["reserves", "Reserves", "/dashboard/reserves"],
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

export const time = (iso: string | null) =>
  iso ? html`<time datetime="${iso}">${iso.replace("T", " ").slice(0, 19)}</time>` : "never";

export function errorPage(ctx: PageContext, status: number, message: string): string {
  return layout(
    { ...ctx, title: status === 404 ? "Not found" : status === 403 ? "Refused" : "Something went wrong" },
    html`<p>${message}</p>
      <p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}
