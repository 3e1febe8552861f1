// The API keys pages: the list with its create form, a key's page with its
// restrictions, and the revocation's confirmation.
import { type ApiKey, KEY_RESOURCES, type KeyResource } from "../../domain/accounts/keys.ts";
import { type Html, html } from "./html.ts";
import { type PageContext, csrfField, layout, time } from "./layout.ts";
import { table } from "./table.ts";

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
  return layout(
    ctx,
    html`${secret}
      <h2>Keys</h2>
      ${table(
        keys,
        [
          { header: "Name", cell: (k) => html`<a href="/dashboard/keys/${k.id}">${k.name}</a>` },
          { header: "Key", cell: (k) => html`<code>${k.prefix}…${k.last4}</code>` },
          { header: "Environment", cell: (k) => k.environment },
          { header: "Access", cell: (k) => describeRestrictions(k) },
          { header: "Created", cell: (k) => time(k.createdAt) },
          { header: "Last used", cell: (k) => time(k.lastUsedAt) },
          {
            header: html`<span class="visually-hidden">Actions</span>`,
            cell: (k) =>
              k.revokedAt
                ? html`revoked ${time(k.revokedAt)}`
                : html`<a href="/dashboard/keys/${k.id}/revoke">Revoke</a>`,
          },
        ],
        { empty: { text: "No keys yet.", as: "paragraph" } },
      )}
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
