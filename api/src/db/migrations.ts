/** Ordered schema changes; a deployed migration is never edited, only followed by a new one. */
export const MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 1,
    name: "accounts, api keys, idempotency",
    statements: [
      `CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        lookup text NOT NULL UNIQUE,
        hash text NOT NULL,
        last4 text NOT NULL,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`,
      `CREATE INDEX api_keys_account ON api_keys (account_id)`,
      `CREATE TABLE idempotency_records (
        api_key_id text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('in_flight', 'done')),
        response_status integer,
        response_body text,
        response_type text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (api_key_id, key)
      )`,
      `CREATE INDEX idempotency_expiry ON idempotency_records (expires_at)`,
    ],
  },
];
