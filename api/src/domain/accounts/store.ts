// Every statement against the accounts aggregate's tables (accounts,
// dashboard_sessions, account_tokens, api_keys): the sign-in, token and key
// services call these, as do other aggregates (the account lock that
// serialises one account's submissions) and the dev tools.
import type { Queryable } from "../../adapters/db/index.ts";

export interface AccountRow {
  id: string;
  name: string;
  email: string | null;
  password_hash: string | null;
  email_verified_at: Date | string | null;
  created_at: Date | string;
}

/** Locks the account's row, so that one account's concurrent submissions are counted one after another. */
export async function lockAccount(tx: Queryable, accountId: string): Promise<void> {
  await tx.query("SELECT id FROM accounts WHERE id = $1 FOR UPDATE", [accountId]);
}

/** The account with this email, if any. */
export async function accountWithEmail(db: Queryable, email: string): Promise<{ id: string } | undefined> {
  const [row] = await db.query<{ id: string }>("SELECT id FROM accounts WHERE email = $1", [email]);
  return row;
}

/** The first `limit` accounts, oldest first. */
export function firstAccounts(
  db: Queryable,
  limit: number,
): Promise<{ id: string; email: string | null; name: string }[]> {
  return db.query<{ id: string; email: string | null; name: string }>(
    "SELECT id, email, name FROM accounts ORDER BY created_at, id LIMIT $1",
    [limit],
  );
}

/** An account without a login (the CLI's). */
export async function insertAccount(db: Queryable, id: string, name: string): Promise<void> {
  await db.query("INSERT INTO accounts (id, name) VALUES ($1, $2)", [id, name]);
}

export async function accountExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query("SELECT 1 FROM accounts WHERE id = $1", [id])).length > 0;
}

/** A new account with a login; undefined when the email has one already (left as it is). */
export async function insertAccountWithLogin(
  db: Queryable,
  id: string,
  email: string,
  passwordHash: string,
): Promise<AccountRow | undefined> {
  const rows = await db.query<AccountRow>(
    `INSERT INTO accounts (id, name, email, password_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (email) WHERE email IS NOT NULL DO NOTHING RETURNING *`,
    [id, email, email, passwordHash],
  );
  return rows[0];
}

/** The account that signs in with this email, if any. */
export async function findLoginByEmail(db: Queryable, email: string): Promise<AccountRow | undefined> {
  const [row] = await db.query<AccountRow>("SELECT * FROM accounts WHERE email = $1 AND password_hash IS NOT NULL", [
    email,
  ]);
  return row;
}

/** The account with this email, with or without a login. */
export async function findAccountByEmail(db: Queryable, email: string): Promise<AccountRow | undefined> {
  const [row] = await db.query<AccountRow>("SELECT * FROM accounts WHERE email = $1", [email]);
  return row;
}

export async function findAccount(db: Queryable, accountId: string): Promise<AccountRow | undefined> {
  const [row] = await db.query<AccountRow>("SELECT * FROM accounts WHERE id = $1", [accountId]);
  return row;
}

/** Marks the account's address verified, if it is still `email`. */
export async function markEmailVerified(
  db: Queryable,
  accountId: string,
  email: string,
): Promise<AccountRow | undefined> {
  const [row] = await db.query<AccountRow>(
    `UPDATE accounts SET email_verified_at = COALESCE(email_verified_at, now())
       WHERE id = $1 AND email = $2 RETURNING *`,
    [accountId, email],
  );
  return row;
}

/** A new password, the address verified, if the account's address is still `email`. */
export async function resetAccountPassword(
  db: Queryable,
  accountId: string,
  email: string,
  passwordHash: string,
): Promise<AccountRow | undefined> {
  const [row] = await db.query<AccountRow>(
    `UPDATE accounts SET password_hash = $3, email_verified_at = COALESCE(email_verified_at, now())
       WHERE id = $1 AND email = $2 RETURNING *`,
    [accountId, email, passwordHash],
  );
  return row;
}

/** Sets the account's login, its address counted as verified; throws the unique violation when the email is taken. */
export async function setAccountLogin(
  db: Queryable,
  accountId: string,
  email: string,
  passwordHash: string,
): Promise<AccountRow | undefined> {
  const rows = await db.query<AccountRow>(
    "UPDATE accounts SET email = $2, password_hash = $3, email_verified_at = now() WHERE id = $1 RETURNING *",
    [accountId, email, passwordHash],
  );
  return rows[0];
}

export async function setAccountPassword(db: Queryable, accountId: string, passwordHash: string): Promise<void> {
  await db.query("UPDATE accounts SET password_hash = $2 WHERE id = $1", [accountId, passwordHash]);
}

// Dashboard sessions: the id is a SHA-256 of the cookie's token.

export async function insertSession(
  db: Queryable,
  id: string,
  accountId: string,
  csrfToken: string,
  expiresAt: Date,
): Promise<void> {
  await db.query("INSERT INTO dashboard_sessions (id, account_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4)", [
    id,
    accountId,
    csrfToken,
    expiresAt,
  ]);
}

/** The live session with this id, with its account. */
export async function findLiveSession(
  db: Queryable,
  id: string,
): Promise<(AccountRow & { csrf_token: string; expires_at: Date | string }) | undefined> {
  const [row] = await db.query<AccountRow & { csrf_token: string; expires_at: Date | string }>(
    `SELECT a.*, s.csrf_token, s.expires_at FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
       WHERE s.id = $1 AND s.expires_at > now()`,
    [id],
  );
  return row;
}

export async function deleteSession(db: Queryable, id: string): Promise<void> {
  await db.query("DELETE FROM dashboard_sessions WHERE id = $1", [id]);
}

export async function deleteAccountSessions(db: Queryable, accountId: string): Promise<void> {
  await db.query("DELETE FROM dashboard_sessions WHERE account_id = $1", [accountId]);
}

/** Every session of the account but the one with id `keepId`. */
export async function deleteOtherSessions(db: Queryable, accountId: string, keepId: string): Promise<void> {
  await db.query("DELETE FROM dashboard_sessions WHERE account_id = $1 AND id <> $2", [accountId, keepId]);
}

export async function deleteExpiredSessions(db: Queryable): Promise<void> {
  await db.query("DELETE FROM dashboard_sessions WHERE expires_at <= now()");
}

// Mailed single-use tokens: the row keeps a SHA-256 of the secret.

export interface AccountTokenRow {
  id: string;
  account_id: string;
  secret_hash: string;
  email: string;
  account_email: string | null;
}

export async function deleteExpiredTokens(db: Queryable): Promise<void> {
  await db.query("DELETE FROM account_tokens WHERE expires_at <= now()");
}

export async function insertToken(
  db: Queryable,
  token: { id: string; accountId: string; purpose: string; secretHash: string; email: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO account_tokens (id, account_id, purpose, secret_hash, email, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
    [token.id, token.accountId, token.purpose, token.secretHash, token.email, token.expiresAt],
  );
}

/** The unexpired token with this id and purpose, with its account's current address. */
export async function findLiveToken(db: Queryable, id: string, purpose: string): Promise<AccountTokenRow | undefined> {
  const [row] = await db.query<AccountTokenRow>(
    `SELECT t.id, t.account_id, t.secret_hash, t.email, a.email AS account_email
       FROM account_tokens t JOIN accounts a ON a.id = t.account_id
       WHERE t.id = $1 AND t.purpose = $2 AND t.expires_at > now()`,
    [id, purpose],
  );
  return row;
}

/** Deletes the token; false when another use deleted it first. */
export async function deleteToken(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db.query("DELETE FROM account_tokens WHERE id = $1 RETURNING id", [id]);
  return deleted.length > 0;
}

export async function deleteAccountTokens(db: Queryable, accountId: string, purpose: string): Promise<void> {
  await db.query("DELETE FROM account_tokens WHERE account_id = $1 AND purpose = $2", [accountId, purpose]);
}

// API keys: the row keeps the lookup part and a SHA-256 of the whole key.

export interface ApiKeyRow {
  id: string;
  account_id: string;
  environment: "sandbox" | "production";
  lookup: string;
  hash: string;
  last4: string;
  name: string;
  created_at: Date | string;
  last_used_at: Date | string | null;
  revoked_at: Date | string | null;
  read_only: boolean;
  resources: string[] | null;
  allowed_ips: string[] | null;
}

/** Revokes the account's live keys that a run of the same idempotent request made within `ttlHours`. */
export async function revokeKeysOfIdempotencyKey(
  tx: Queryable,
  accountId: string,
  environment: string,
  idempotencyKey: string,
  ttlHours: number,
): Promise<void> {
  await tx.query(
    `UPDATE api_keys SET revoked_at = now()
           WHERE account_id = $1 AND environment = $2 AND idempotency_key = $3 AND revoked_at IS NULL
           AND created_at > now() - make_interval(hours => $4::int)`,
    [accountId, environment, idempotencyKey, ttlHours],
  );
}

export async function countActiveKeys(tx: Queryable, accountId: string, environment: string): Promise<number> {
  const [active] = await tx.query<{ n: number | string }>(
    "SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND environment = $2 AND revoked_at IS NULL",
    [accountId, environment],
  );
  return Number(active?.n ?? 0);
}

export async function insertKey(
  tx: Queryable,
  key: {
    id: string;
    accountId: string;
    environment: string;
    lookup: string;
    hash: string;
    last4: string;
    name: string;
    readOnly: boolean;
    resources: string[] | null;
    allowedIps: string[] | null;
    idempotencyKey: string | null;
  },
): Promise<ApiKeyRow> {
  const rows = await tx.query<ApiKeyRow>(
    `INSERT INTO api_keys
           (id, account_id, environment, lookup, hash, last4, name, read_only, resources, allowed_ips, idempotency_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      key.id,
      key.accountId,
      key.environment,
      key.lookup,
      key.hash,
      key.last4,
      key.name,
      key.readOnly,
      key.resources,
      key.allowedIps,
      key.idempotencyKey,
    ],
  );
  return rows[0]!;
}

/** The account's keys, newest first: of one environment, or of all when `environment` is null. */
export function keysOfAccount(db: Queryable, accountId: string, environment: string | null): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow>(
    `SELECT * FROM api_keys WHERE account_id = $1 AND ($2::text IS NULL OR environment = $2)
       ORDER BY created_at DESC, id`,
    [accountId, environment],
  );
}

/** Locks and reads a key of the account (in `environment` unless null). */
export async function lockKey(
  tx: Queryable,
  keyId: string,
  accountId: string,
  environment: string | null,
): Promise<ApiKeyRow | undefined> {
  const [found] = await tx.query<ApiKeyRow>(
    `SELECT * FROM api_keys WHERE id = $1 AND account_id = $2 AND ($3::text IS NULL OR environment = $3) FOR UPDATE`,
    [keyId, accountId, environment],
  );
  return found;
}

export async function revokeKey(tx: Queryable, keyId: string): Promise<ApiKeyRow | undefined> {
  const [updated] = await tx.query<ApiKeyRow>(
    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *",
    [keyId],
  );
  return updated;
}

/** Replaces a live key's restrictions; undefined when the account has no such live key. */
export async function setKeyRestrictions(
  db: Queryable,
  keyId: string,
  accountId: string,
  restrictions: { readOnly: boolean; resources: string[] | null; allowedIps: string[] | null },
): Promise<ApiKeyRow | undefined> {
  const rows = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET read_only = $3, resources = $4, allowed_ips = $5
       WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING *`,
    [keyId, accountId, restrictions.readOnly, restrictions.resources, restrictions.allowedIps],
  );
  return rows[0];
}

export async function findKeyByLookup(db: Queryable, lookup: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query<ApiKeyRow>("SELECT * FROM api_keys WHERE lookup = $1", [lookup]);
  return row;
}

export function touchKey(db: Queryable, keyId: string): Promise<unknown> {
  return db.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [keyId]);
}
