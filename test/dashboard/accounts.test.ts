// AccountService: what a login change does to the sessions already signed in (PGlite), and the
// mailed tokens' rules (PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../api/src/adapters/db/index.ts";
import { AccountService } from "../../api/src/domain/accounts/accounts.ts";
import { KeyService } from "../../api/src/domain/accounts/keys.ts";
import { openStorage } from "../api/helpers.ts";

describe("AccountService.setLogin", () => {
  let db: Database;
  let accounts: AccountService;

  beforeAll(async () => {
    db = await openDatabase({});
    accounts = new AccountService(db, 12);
  });
  afterAll(() => db.close());

  it("signs out every session of the account when `keys login` sets a new password", async () => {
    // `keys login` run again is how an operator resets a leaked password: a session
    // signed in with the old one must not outlive it.
    const { id } = await new KeyService(db).createAccount("ops");
    await accounts.setLogin(id, "reset@example.com", "the first password");
    const signedIn = await accounts.verify("reset@example.com", "the first password");
    expect(signedIn?.id).toBe(id);
    const { token } = await accounts.startSession(id);
    expect(await accounts.session(token)).toBeDefined();

    await accounts.setLogin(id, "reset@example.com", "a second password");
    expect(await accounts.session(token)).toBeUndefined();
    expect(await accounts.verify("reset@example.com", "the first password")).toBeUndefined();
    expect((await accounts.verify("reset@example.com", "a second password"))?.id).toBe(id);
  });
});

describe("AccountTokens on PostgreSQL: single use, one purpose, the account's current address", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let accounts: AccountService;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    accounts = new AccountService(storage.db, 12);
  });
  afterAll(() => storage?.close());

  it("lets one of ten simultaneous uses of a link win, and refuses a token of another purpose or address", async () => {
    const signedUp = await accounts.signUp("tokens@example.com", "a long enough password");
    if (!signedUp.created) throw new Error("expected a new account");
    const { id } = signedUp.account;
    const reset = await accounts.tokens.issue(id, "reset_password", "tokens@example.com");
    // A reset token does not verify an address.
    expect(await accounts.verifyEmail(reset)).toBeUndefined();
    const uses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => accounts.resetPassword(reset, `new password number ${i}`)),
    );
    expect(uses.filter(Boolean)).toHaveLength(1);
    expect(await accounts.tokens.check(reset, "reset_password")).toBeUndefined();

    // A link mailed to an address the account no longer has is void.
    const verify = await accounts.tokens.issue(id, "verify_email", "tokens@example.com");
    await accounts.setLogin(id, "moved@example.com", "a long enough password");
    expect(await accounts.verifyEmail(verify)).toBeUndefined();
    for (const bad of ["", "x", `${verify}x`, verify.replace(".", "-"), 42, null])
      expect(await accounts.tokens.check(bad, "verify_email")).toBeUndefined();
  });
});
