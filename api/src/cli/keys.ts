// npm run keys -- create --env sandbox --name "my app" [--account acct_…]
// npm run keys -- list [--account acct_…]
// npm run keys -- revoke [--account acct_…] --key key_…
//   (without --account: the dev stack's account, or the only one there is)
// printf '%s' "$PASSWORD" | npm run keys -- login --account acct_… --email you@example.com
//   (gives a CLI-made account a dashboard sign-in; the password comes on standard input, never in argv)
// (the database: see cli/database.ts)
import { parseArgs } from "node:util";
import { openToolDatabase } from "./database.ts";
import { defaultAccount } from "./dev-account.ts";
import { type Environment, KeyService } from "../domain/accounts/keys.ts";
import { mailAddressProblem } from "../adapters/mail/address.ts";
import { AccountService, EmailTakenError, PASSWORD_MAX, PASSWORD_MIN } from "../domain/accounts/accounts.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    env: { type: "string" },
    name: { type: "string" },
    account: { type: "string" },
    key: { type: "string" },
    email: { type: "string" },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const { config, db } = await openToolDatabase();
const keys = new KeyService(db);

/** --account, or the account meant when none is named (dev-account.ts). */
async function account(): Promise<string> {
  if (values.account) return values.account;
  const found = await defaultAccount(db);
  if ("error" in found) fail(found.error);
  return found.id;
}

try {
  switch (positionals[0]) {
    case "create": {
      const env = (values.env ?? config.ENVIRONMENT) as Environment;
      if (env !== "sandbox" && env !== "production") fail("--env must be sandbox or production");
      if (!values.name) fail("--name is required");
      let accountId = values.account;
      if (accountId && !(await keys.accountExists(accountId))) fail(`no account ${accountId}`);
      accountId ??= (await keys.createAccount(values.name)).id;
      const created = await keys.create(accountId, env, values.name);
      console.log(
        JSON.stringify({ account: accountId, id: created.id, environment: env, secret: created.secret }, null, 2),
      );
      console.error("The secret is shown once: store it now.");
      break;
    }
    case "list": {
      for (const k of await keys.list(await account())) {
        console.log(
          `${k.id}  ${k.prefix}…${k.last4}  ${k.environment}  ${k.name}  created ${k.createdAt}  last used ${k.lastUsedAt ?? "never"}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ""}`,
        );
      }
      break;
    }
    case "revoke": {
      if (!values.key) fail("--key is required");
      const accountId = await account();
      const revoked = await keys.revoke(accountId, values.key);
      if (!revoked) fail(`account ${accountId} has no key ${values.key}`);
      console.log(`revoked ${revoked.id}`);
      break;
    }
    case "login": {
      if (!values.account || !values.email) fail("--account and --email are required");
      const addressProblem = mailAddressProblem(values.email.trim());
      if (addressProblem) fail(`--email: ${addressProblem}`);
      let input = "";
      for await (const chunk of process.stdin) input += String(chunk);
      const password = input.replace(/\r?\n$/, "");
      if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
        fail(`the password (on standard input) has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
      const accounts = new AccountService(db, config.DASHBOARD_SESSION_HOURS);
      const account = await accounts.setLogin(values.account, values.email, password).catch((error: unknown) => {
        if (error instanceof EmailTakenError) fail("another account signs in with this email");
        throw error;
      });
      if (!account) fail(`no account ${values.account}`);
      console.log(`${account.id} signs in to /dashboard as ${account.email}`);
      break;
    }
    default:
      fail(
        "usage: keys create --env sandbox|production --name NAME [--account ID] | list [--account ID] | revoke [--account ID] --key ID | login --account ID --email EMAIL (password on stdin)",
      );
  }
} finally {
  await db.close();
}
