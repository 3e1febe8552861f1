// Schema changes for dashboard accounts, in their own file: migrations.ts is long enough.
export const ACCOUNT_MIGRATIONS: { version: number; name: string; statements: string[] }[] = [
  {
    version: 19,
    name: "accounts: verified email, single-use email verification and password reset tokens",
    statements: [
      // Accounts signed up before this are unverified until their owner confirms the address.
      `ALTER TABLE accounts ADD COLUMN email_verified_at timestamptz`,
      // A token is `<id>.<secret>`: looked up by id, its secret compared in constant time with
      // the SHA-256 kept here; deleted when used. `email` is the address it was sent to: a
      // token for an address the account no longer has is void.
      `CREATE TABLE account_tokens (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
        secret_hash text NOT NULL,
        email text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX account_tokens_account ON account_tokens (account_id, purpose)`,
      `CREATE INDEX account_tokens_expiry ON account_tokens (expires_at)`,
    ],
  },
  {
    version: 22,
    name: "api_keys: the Idempotency-Key of the request that made a key",
    statements: [
      // A key made by a request whose process died before its answer was stored is found by the retry
      // (which runs again after the claim is taken over) and revoked: its secret was never answered.
      `ALTER TABLE api_keys ADD COLUMN idempotency_key text`,
      `CREATE INDEX api_keys_idempotency ON api_keys (account_id, environment, idempotency_key)
       WHERE idempotency_key IS NOT NULL AND revoked_at IS NULL`,
    ],
  },
];
