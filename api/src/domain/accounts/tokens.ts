// Single-use tokens mailed to an account's address: email verification and
// password reset. A token is `<id>.<secret>`; the database keeps the id, a
// SHA-256 of the secret and the address it was mailed to, so that a copy of
// the table opens nothing. Found by id, the secret is compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Database } from "../../adapters/db/index.ts";
import { base62 } from "../../adapters/ids.ts";
import { deleteAccountTokens, deleteExpiredTokens, deleteToken, findLiveToken, insertToken } from "./store.ts";

export type TokenPurpose = "verify_email" | "reset_password";

/** How long a mailed link works. A reset link is short-lived: it replaces the password. */
export const TOKEN_LIFETIME_MINUTES: Record<TokenPurpose, number> = {
  verify_email: 24 * 60,
  reset_password: 60,
};

const TOKEN_PATTERN = /^([0-9A-Za-z]{20})\.([A-Za-z0-9_-]{43})$/;

const sha256 = (value: string) => createHash("sha256").update(value).digest();

export interface TokenHolder {
  accountId: string;
  email: string;
}

export class AccountTokens {
  constructor(private readonly db: Database) {}

  async issue(accountId: string, purpose: TokenPurpose, email: string): Promise<string> {
    // Issuing sweeps expired tokens: the table holds about as many rows as there are links in flight.
    await deleteExpiredTokens(this.db);
    const id = base62(20);
    const secret = randomBytes(32).toString("base64url");
    const expiresAt = new Date(Date.now() + TOKEN_LIFETIME_MINUTES[purpose] * 60_000);
    await insertToken(this.db, {
      id,
      accountId,
      purpose,
      secretHash: sha256(secret).toString("hex"),
      email,
      expiresAt,
    });
    return `${id}.${secret}`;
  }

  /** Who the token is for, if it is valid now: unused, unexpired, for the account's current address. */
  async check(token: unknown, purpose: TokenPurpose): Promise<TokenHolder | undefined> {
    const match = typeof token === "string" ? TOKEN_PATTERN.exec(token) : null;
    if (!match) return undefined;
    const row = await findLiveToken(this.db, match[1]!, purpose);
    if (!row) return undefined;
    const expected = Buffer.from(row.secret_hash, "hex");
    const actual = sha256(match[2]!);
    if (expected.length !== actual.length || !timingSafeEqual(actual, expected)) return undefined;
    if (row.account_email !== row.email) return undefined;
    return { accountId: row.account_id, email: row.email };
  }

  /** As check, and the token is spent: of two uses at once, one wins. */
  async consume(token: unknown, purpose: TokenPurpose): Promise<TokenHolder | undefined> {
    const holder = await this.check(token, purpose);
    if (!holder) return undefined;
    return (await deleteToken(this.db, (token as string).split(".")[0]!)) ? holder : undefined;
  }

  /** Voids every outstanding token of a purpose (the others of a used reset link, say). */
  async revokeAll(accountId: string, purpose: TokenPurpose): Promise<void> {
    await deleteAccountTokens(this.db, accountId, purpose);
  }
}
