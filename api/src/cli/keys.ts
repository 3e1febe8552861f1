// npm run keys -- create --env sandbox --name "my app" [--account acct_…]
// npm run keys -- list --account acct_…
// npm run keys -- revoke --account acct_… --key key_…
//
// The database is DATABASE_URL's, else PGLITE_DIRECTORY's, else that of the
// dev stack (`npm start`, build/dev/api) when there is one. A PGlite
// directory that a running API holds is used through that API's socket.
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config.ts";
import { DirectoryInUseError, openDatabase } from "../db/index.ts";
import { toolDirectory } from "../db/local.ts";
import { type Environment, KeyService } from "../resources/keys/service.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    env: { type: "string" },
    name: { type: "string" },
    account: { type: "string" },
    key: { type: "string" },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const DEV_STACK_DIRECTORY = fileURLToPath(new URL("../../../build/dev/api", import.meta.url));

let config;
let db;
try {
  config = loadConfig({ ...process.env, PGLITE_DIRECTORY: toolDirectory(process.env, DEV_STACK_DIRECTORY) });
  if (!config.DATABASE_URL) console.error(`database: PGlite at ${config.PGLITE_DIRECTORY}`);
  db = await openDatabase({ url: config.DATABASE_URL, directory: config.PGLITE_DIRECTORY, viaHolder: true });
} catch (error) {
  if (error instanceof ConfigError || error instanceof DirectoryInUseError) fail(error.message);
  throw error;
}
const keys = new KeyService(db);
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
      if (!values.account) fail("--account is required");
      for (const k of await keys.list(values.account)) {
        console.log(
          `${k.id}  ${k.prefix}…${k.last4}  ${k.environment}  ${k.name}  created ${k.createdAt}  last used ${k.lastUsedAt ?? "never"}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ""}`,
        );
      }
      break;
    }
    case "revoke": {
      if (!values.account || !values.key) fail("--account and --key are required");
      const revoked = await keys.revoke(values.account, values.key);
      if (!revoked) fail(`account ${values.account} has no key ${values.key}`);
      console.log(`revoked ${revoked.id}`);
      break;
    }
    default:
      fail(
        "usage: keys create --env sandbox|production --name NAME [--account ID] | list --account ID | revoke --account ID --key ID",
      );
  }
} finally {
  await db.close();
}
