// AccountService on PGlite: what a login change does to the sessions already signed in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../api/src/adapters/db/index.ts";
import { AccountService } from "../../api/src/domain/accounts.ts";
import { KeyService } from "../../api/src/domain/keys.ts";

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
