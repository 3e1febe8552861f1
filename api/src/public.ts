// What other packages may use of the API (`@zsd/api`): the app to embed, its
// configuration and database, and the key service that provisions accounts.
// Everything else under src/ is internal.
export { type App, type AppDependencies, createApp } from "./app.ts";
export { type Config, ConfigError, loadConfig } from "./config/config.ts";
export { type Database, openDatabase } from "./adapters/db/index.ts";
export { KeyService } from "./domain/accounts/keys.ts";
export { DEV_ACCOUNT_EMAIL, type DevAccount, provisionDevAccount } from "./cli/dev-account.ts";
