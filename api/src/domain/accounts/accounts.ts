// Dashboard sign-in: an email and a password on the same `accounts` row that
// API keys belong to (a key made with the CLI for an account shows on that
// account's dashboard). Passwords are hashed with scrypt; sessions are random
// tokens of which the database keeps only a SHA-256. The address is verified
// by a mailed link (account-tokens.ts); a mailed reset link replaces the password.
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import type { Database } from "../../adapters/db/index.ts";
import { AccountTokens } from "./tokens.ts";
import { base62 } from "../../adapters/ids.ts";
import {
  type AccountRow,
  deleteAccountSessions,
  deleteExpiredSessions,
  deleteOtherSessions,
  deleteSession,
  findAccount,
  findAccountByEmail,
  findLiveSession,
  findLoginByEmail,
  insertAccountWithLogin,
  insertSession,
  markEmailVerified,
  resetAccountPassword,
  setAccountLogin,
  setAccountPassword,
} from "./store.ts";

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

// OWASP's scrypt minimum is N=2^17 with r=8; 2^15 keeps a sign-in near 100 ms on a small
// machine while the login limiter bounds guessing. Parameters are stored with each hash.
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 };
const maxmem = (N: number, r: number) => 256 * N * r;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keylen } = SCRYPT;
  const hash = await scrypt(password.normalize("NFKC"), salt, keylen, { N, r, p, maxmem: maxmem(N, r) });
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const options = { N: Number(n), r: Number(r), p: Number(p) };
  const actual = await scrypt(password.normalize("NFKC"), Buffer.from(salt, "base64url"), expected.length, {
    ...options,
    maxmem: maxmem(options.N, options.r),
  });
  return timingSafeEqual(actual, expected);
}

// Compared against when the email is unknown, so that a sign-in takes as long either way.
const DUMMY_HASH = hashPassword(randomBytes(16).toString("hex"));

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
// Deliberately loose: whether the address works is what the verification mail finds out.
export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@.]{1,63}$/;

export interface Account {
  id: string;
  name: string;
  email: string | null;
  /** When the owner followed a verification (or reset) link; null until then. Accounts without an email never need one. */
  emailVerifiedAt: string | null;
  createdAt: string;
}

/** Unverified: signed up, link not yet followed. Such an account uses the sandbox but makes no production key. */
export const isUnverified = (account: Account) => account.email !== null && account.emailVerifiedAt === null;

/** A sign-up either made an account or found one with that email: the caller answers both alike. */
export type SignUpResult = { created: true; account: Account } | { created: false; email: string };

export interface Session {
  account: Account;
  csrfToken: string;
  expiresAt: string;
}

export class EmailTakenError extends Error {}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  email: row.email,
  emailVerifiedAt: row.email_verified_at === null ? null : new Date(row.email_verified_at).toISOString(),
  createdAt: new Date(row.created_at).toISOString(),
});

export class AccountService {
  readonly tokens: AccountTokens;

  constructor(
    private readonly db: Database,
    private readonly sessionHours: number,
  ) {
    this.tokens = new AccountTokens(db);
  }

  /**
   * A new, unverified account with a login, or the finding that the email has
   * one (left as it is). Both run the same hash and the same statement, so
   * that neither answers sooner.
   */
  async signUp(email: string, password: string): Promise<SignUpResult> {
    const address = normaliseEmail(email);
    const hash = await hashPassword(password);
    const id = `acct_${base62(16)}`;
    const row = await insertAccountWithLogin(this.db, id, address, hash);
    return row ? { created: true, account: toAccount(row) } : { created: false, email: address };
  }

  /** The account that signs in with this email, if any. */
  async byEmail(email: string): Promise<Account | undefined> {
    const row = await findLoginByEmail(this.db, normaliseEmail(email));
    return row && toAccount(row);
  }

  /** Follows a verification link: the account's current address is verified, and the link spent. */
  async verifyEmail(token: unknown): Promise<Account | undefined> {
    const holder = await this.tokens.consume(token, "verify_email");
    if (!holder) return undefined;
    const row = await markEmailVerified(this.db, holder.accountId, holder.email);
    await this.tokens.revokeAll(holder.accountId, "verify_email");
    return row && toAccount(row);
  }

  /**
   * Follows a reset link: a new password, every session signed out (whoever
   * held one held it under the old password), the other reset links void, and
   * the address verified (the link reached it).
   */
  async resetPassword(token: unknown, password: string): Promise<Account | undefined> {
    const hash = await hashPassword(password);
    const holder = await this.tokens.consume(token, "reset_password");
    if (!holder) return undefined;
    const row = await resetAccountPassword(this.db, holder.accountId, holder.email, hash);
    await deleteAccountSessions(this.db, holder.accountId);
    await this.tokens.revokeAll(holder.accountId, "reset_password");
    return row && toAccount(row);
  }

  /**
   * Gives an existing account (one the CLI made) a login, so that its owner
   * sees its keys on the dashboard; for an account that has one, replaces it
   * and signs the account out everywhere. The address counts as verified: the
   * operator who runs this vouches for it.
   */
  async setLogin(accountId: string, email: string, password: string): Promise<Account | undefined> {
    const address = normaliseEmail(email);
    const hash = await hashPassword(password);
    try {
      const row = await setAccountLogin(this.db, accountId, address, hash);
      if (!row) return undefined;
      // Run again, this is a password reset: sessions signed in with the old password end with it.
      await deleteAccountSessions(this.db, accountId);
      return toAccount(row);
    } catch (error) {
      if ((error as { code?: string }).code === "23505") throw new EmailTakenError(address);
      throw error;
    }
  }

  /** The account when the password is right; undefined otherwise, in the same time whether the email exists or not. */
  async verify(email: string, password: string): Promise<Account | undefined> {
    const row = await findAccountByEmail(this.db, normaliseEmail(email));
    const ok = await verifyPassword(password, row?.password_hash ?? (await DUMMY_HASH));
    return ok && row?.password_hash ? toAccount(row) : undefined;
  }

  async changePassword(accountId: string, current: string, next: string): Promise<boolean> {
    const row = await findAccount(this.db, accountId);
    if (!row?.password_hash || !(await verifyPassword(current, row.password_hash))) return false;
    await setAccountPassword(this.db, accountId, await hashPassword(next));
    return true;
  }

  /**
   * A new session for the account; its token goes in the cookie. `replacing`
   * (the token the browser sent, if any) is ended: a token planted before
   * sign-in never becomes a signed-in session.
   */
  async startSession(accountId: string, replacing?: string): Promise<{ token: string; session: Session }> {
    if (replacing) await this.endSession(replacing);
    // Sign-ins sweep expired sessions: the table holds about as many rows as there are live sign-ins.
    await this.pruneSessions();
    const token = randomBytes(32).toString("base64url");
    const csrfToken = randomBytes(32).toString("base64url");
    const expiresAt = new Date(Date.now() + this.sessionHours * 3_600_000);
    await insertSession(this.db, sha256(token), accountId, csrfToken, expiresAt);
    const session = await this.session(token);
    return { token, session: session! };
  }

  async session(token: string): Promise<Session | undefined> {
    const row = await findLiveSession(this.db, sha256(token));
    if (!row) return undefined;
    return { account: toAccount(row), csrfToken: row.csrf_token, expiresAt: new Date(row.expires_at).toISOString() };
  }

  async endSession(token: string): Promise<void> {
    await deleteSession(this.db, sha256(token));
  }

  /** Signs the account out everywhere but `keep` (after a password change). */
  async endOtherSessions(accountId: string, keep?: string): Promise<void> {
    await deleteOtherSessions(this.db, accountId, keep ? sha256(keep) : "");
  }

  async pruneSessions(): Promise<void> {
    await deleteExpiredSessions(this.db);
  }
}
