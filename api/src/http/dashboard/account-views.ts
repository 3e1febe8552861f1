// The dashboard's account pages: sign-in, sign-up, "check your email", the
// verification and reset links' forms, the Account tab, and the sandbox's
// mailbox.
import { MAIL_ADDRESS_RULES } from "../../adapters/mail/address.ts";
import type { CapturedMail } from "../../adapters/mail/index.ts";
import { PASSWORD_MAX, PASSWORD_MIN, isUnverified } from "../../domain/accounts/accounts.ts";
import { TOKEN_LIFETIME_MINUTES } from "../../domain/accounts/tokens.ts";
import { type Html, html } from "./html.ts";
import { type PageContext, csrfField, layout } from "./layout.ts";

const newPassword = (id: string, name: string) =>
  html`<label for="${id}">New password <small>(at least ${PASSWORD_MIN} characters)</small></label>
    <input
      id="${id}"
      name="${name}"
      type="password"
      autocomplete="new-password"
      required
      minlength="${PASSWORD_MIN}"
      maxlength="${PASSWORD_MAX}"
    />`;

const emailField = (email: string, hint?: string) =>
  html`<label for="email">Email${hint ? html` <small id="email-rules">${hint}</small>` : ""}</label>
    <input
      id="email"
      name="email"
      type="email"
      autocomplete="username"
      required
      maxlength="254"
      value="${email}"
      ${hint ? html`aria-describedby="email-rules"` : ""}
    />`;

export function signInPage(ctx: PageContext, csrf: string, email = ""): string {
  return layout(
    ctx,
    html`<form method="post" action="/dashboard/signin">
        ${csrfField(csrf)} ${emailField(email)}
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <p><a href="/dashboard/reset">Forgot your password?</a></p>
      <p>
        No account? <a href="/dashboard/signup">Create one</a>: it is free and includes the sandbox and API analytics.
      </p>`,
  );
}

export function signUpPage(ctx: PageContext, csrf: string, email = ""): string {
  return layout(
    ctx,
    html`<form method="post" action="/dashboard/signup">
        ${csrfField(csrf)} ${emailField(email, MAIL_ADDRESS_RULES)}
        <label for="password">Password <small>(at least ${PASSWORD_MIN} characters)</small></label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minlength="${PASSWORD_MIN}"
          maxlength="${PASSWORD_MAX}"
        />
        <button type="submit">Create account</button>
      </form>
      <p>Already have an account? <a href="/dashboard/signin">Sign in</a>.</p>`,
  );
}

/** After a sign-up, whether or not the address had an account: the same words either way. */
export function checkEmailPage(ctx: PageContext, email: string, sandboxMailbox: boolean): string {
  return layout(
    ctx,
    html`<p>
        We sent a mail to <strong>${email}</strong>. Follow its link (it works for
        ${TOKEN_LIFETIME_MINUTES.verify_email / 60} hours) to confirm the address, then
        <a href="/dashboard/signin">sign in</a>.
      </p>
      ${
        sandboxMailbox
          ? html`<p>This sandbox keeps its mail: read it in the <a href="/dashboard/mail">mailbox</a>.</p>`
          : html`<p>
              No mail after a few minutes? Look in the spam folder, or sign in and send it again from the Account tab.
            </p>`
      }`,
  );
}

export function verifyPage(ctx: PageContext, csrf: string, token: string): string {
  return layout(
    ctx,
    html`<form method="post" action="/dashboard/verify">
      ${csrfField(csrf)}<input type="hidden" name="token" value="${token}" />
      <p>Confirm that this address is yours.</p>
      <button type="submit">Confirm my email</button>
    </form>`,
  );
}

export function resetRequestPage(ctx: PageContext, csrf: string, email = ""): string {
  return layout(
    ctx,
    html`<p>We will mail a link to choose a new password to the account's address.</p>
      <form method="post" action="/dashboard/reset">
        ${csrfField(csrf)} ${emailField(email)}
        <button type="submit">Send the link</button>
      </form>
      <p><a href="/dashboard/signin">Back to sign in</a></p>`,
  );
}

export function resetSentPage(ctx: PageContext, email: string, sandboxMailbox: boolean): string {
  return layout(
    ctx,
    html`<p>
        If <strong>${email}</strong> signs in to an account, a link to choose a new password is on its way (it works for
        ${TOKEN_LIFETIME_MINUTES.reset_password} minutes).
      </p>
      ${sandboxMailbox ? html`<p>This sandbox keeps its mail: read it in the <a href="/dashboard/mail">mailbox</a>.</p>` : ""}
      <p><a href="/dashboard/signin">Back to sign in</a></p>`,
  );
}

export function resetPage(ctx: PageContext, csrf: string, token: string): string {
  return layout(
    ctx,
    html`<form method="post" action="/dashboard/reset/confirm">
      ${csrfField(csrf)}<input type="hidden" name="token" value="${token}" /> ${newPassword("password", "password")}
      <p><small>Every session of the account is signed out.</small></p>
      <button type="submit">Set the new password</button>
    </form>`,
  );
}

export function accountPage(ctx: PageContext): string {
  const a = ctx.account!;
  const verification = isUnverified(a)
    ? html`<strong>not verified</strong>: production keys wait for it.
        <form method="post" action="/dashboard/account/verification" class="inline">
          ${csrfField(ctx.csrfToken)}<button type="submit" class="link">Send the link again</button>
        </form>`
    : a.emailVerifiedAt
      ? html`verified`
      : "";
  return layout(
    ctx,
    html`<dl>
        <dt>Email</dt>
        <dd>${a.email} ${verification}</dd>
        <dt>Account id</dt>
        <dd>
          <code>${a.id}</code> <small>(the CLI's <code>--account</code>: keys it makes show here)</small>
        </dd>
        <dt>Created</dt>
        <dd><time datetime="${a.createdAt}">${a.createdAt}</time></dd>
      </dl>
      <h2>Change password</h2>
      <form method="post" action="/dashboard/account/password">
        ${csrfField(ctx.csrfToken)}
        <label for="current">Current password</label>
        <input id="current" name="current" type="password" autocomplete="current-password" required />
        ${newPassword("next", "next")}
        <button type="submit">Change password</button>
      </form>`,
  );
}

/**
 * Links in a mail's text become links on the page; everything else stays
 * text. A link to the dashboard opens on this server, whatever origin the mail
 * names (a test's server listens on a port of its own).
 */
const withLinks = (text: string): Html[] =>
  text.split(/(https?:\/\/[^\s<>"']+)/).map((part, i) => {
    if (i % 2 === 0 || !URL.canParse(part)) return html`${part}`;
    const url = new URL(part);
    const href = url.pathname.startsWith("/dashboard/") ? `${url.pathname}${url.search}` : part;
    return html`<a href="${href}">${part}</a>`;
  });

export function mailboxPage(ctx: PageContext, mail: CapturedMail[]): string {
  return layout(
    ctx,
    html`<p>
        Mail this sandbox sent (verification and reset links), kept in memory by its SMTP capture and shown on this
        machine only. Set <code>SMTP_URL</code> to send real mail instead.
      </p>
      ${
        mail.length
          ? mail.map(
              (m) =>
                html`<article>
                  <header>
                    <strong>${m.subject}</strong><br /><small
                      >to ${m.to.join(", ")} · <time datetime="${m.receivedAt}">${m.receivedAt}</time></small
                    >
                  </header>
                  <pre class="mail">${withLinks(m.text)}</pre>
                </article>`,
            )
          : html`<p>No mail yet.</p>`
      }`,
  );
}
