// The dev stack's one account (`npm start`): its sandbox key and its dashboard
// sign-in belong to the same `accounts` row, so agents, mints and alerts made
// with the key show on the dashboard of whoever signs in with the printed
// email and password. The key CLI picks this account when none is named.
import { randomBytes } from "node:crypto";
import type { Database } from "../adapters/db/index.ts";
import { AccountService } from "../domain/accounts/accounts.ts";
import { KeyService } from "../domain/accounts/keys.ts";
import { accountWithEmail, firstAccounts } from "../domain/accounts/store.ts";

/** A reserved name (RFC 6761 .localhost): nothing is ever mailed there. */
export const DEV_ACCOUNT_EMAIL = "dev@zsd.localhost";

export interface DevAccount {
  accountId: string;
  /** The sandbox key, shown once. */
  secret: string;
  email: string;
  /** This run's password: the stack's database is made afresh at each start, so it lives as long as the run. */
  password: string;
}

/** Makes the dev account in a fresh database: a sandbox key and a dashboard sign-in. */
export async function provisionDevAccount(db: Database): Promise<DevAccount> {
  const keys = new KeyService(db);
  const accountId = (await keys.createAccount("local developer")).id;
  const { secret } = await keys.create(accountId, "sandbox", "npm start");
  // The session length matters only to sessions this service starts, and it starts none.
  const accounts = new AccountService(db, 12);
  const password = randomBytes(12).toString("base64url");
  // setLogin is the operator's vouching for the address: it counts as verified.
  await accounts.setLogin(accountId, DEV_ACCOUNT_EMAIL, password);
  return { accountId, secret, email: DEV_ACCOUNT_EMAIL, password };
}

/**
 * The account a key command means when none is named: the dev stack's, or
 * the only one; otherwise a message naming the accounts to choose from.
 */
export async function defaultAccount(db: Database): Promise<{ id: string } | { error: string }> {
  const dev = await accountWithEmail(db, DEV_ACCOUNT_EMAIL);
  if (dev) return { id: dev.id };
  const rows = await firstAccounts(db, 11);
  if (rows.length === 1) return { id: rows[0]!.id };
  if (rows.length === 0) return { error: "there is no account yet: keys create --env sandbox --name NAME makes one" };
  const listed = rows
    .slice(0, 10)
    .map((r) => `${r.id} (${r.email ?? r.name})`)
    .join(", ");
  const count = rows.length > 10 ? "more than 10" : String(rows.length);
  return { error: `--account is required: there are ${count} accounts (${listed})` };
}
