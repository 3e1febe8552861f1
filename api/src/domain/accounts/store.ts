// The accounts table as other aggregates and the tools touch it: a lock that
// serialises one account's submissions, and the account the dev tools act as.
// The sign-in service's own statements are in accounts.ts.
import type { Queryable } from "../../adapters/db/index.ts";

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
