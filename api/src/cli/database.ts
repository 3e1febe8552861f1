// The database an operator's command line works on: DATABASE_URL's, else
// PGLITE_DIRECTORY's, else that of the dev stack (`npm start`, build/dev/api)
// when there is one. A PGlite directory that a running API holds is used
// through that API's socket, never opened a second time.
import { fileURLToPath } from "node:url";
import { type Config, ConfigError, loadConfig } from "../config/config.ts";
import { type Database, DirectoryInUseError, openDatabase } from "../adapters/db/index.ts";
import { toolDirectory } from "../adapters/db/local.ts";

const DEV_STACK_DIRECTORY = fileURLToPath(new URL("../../../build/dev/api", import.meta.url));

/** Opens the tool's database, or exits 2 saying why it cannot. */
export async function openToolDatabase(): Promise<{ config: Config; db: Database }> {
  try {
    const config = loadConfig({ ...process.env, PGLITE_DIRECTORY: toolDirectory(process.env, DEV_STACK_DIRECTORY) });
    if (!config.DATABASE_URL) console.error(`database: PGlite at ${config.PGLITE_DIRECTORY}`);
    const db = await openDatabase({ url: config.DATABASE_URL, directory: config.PGLITE_DIRECTORY, viaHolder: true });
    return { config, db };
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DirectoryInUseError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
}
