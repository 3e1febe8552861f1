// One query layer over embedded PGlite (default, zero set-up) or PostgreSQL
// (DATABASE_URL): the same SQL, the same migrations.
import { PGlite } from "@electric-sql/pglite";
import { resolve } from "node:path";
import pg from "pg";
import { DirectoryInUseError, SOCKET_PORT, holderOf, initialise, serveSocket, socketPath, takeLock } from "./local.ts";
import { MIGRATIONS } from "./migrations.ts";
import { unavailable } from "../errors.ts";

export { DirectoryInUseError } from "./local.ts";

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `work` in one transaction: all of its queries land, or none. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Errors that say the server is out of reach (down, restarting, the connection cut), not that the query is wrong. */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND"]);
export function isDatabaseUnreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    if (UNREACHABLE_CODES.has(code)) return true;
    // SQLSTATE 08: connection exception; 57P01-57P03: shut down by an administrator, crashed, starting up.
    if (/^08...$/.test(code) || code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  return (
    typeof message === "string" &&
    /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect/.test(message)
  );
}

/**
 * PostgreSQL out of reach is an upstream's outage: 503 upstream_unavailable
 * (retry shortly), never a 500. The pool drops the dead connections and the
 * next query opens new ones once the server is back.
 */
async function reachable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isDatabaseUnreachable(error)) throw Object.assign(unavailable("The database", 2), { cause: error });
    throw error;
  }
}

class PostgresDatabase implements Database {
  readonly kind = "postgres";
  constructor(private readonly pool: pg.Pool) {
    // An idle connection the server closes (a restart, a failover, an
    // administrator) is dropped by the pool and replaced on the next query;
    // unhandled, its error event would end the process.
    pool.on("error", () => undefined);
  }
  query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return reachable(async () => (await this.pool.query(sql, params)).rows as T[]);
  }
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await reachable(() => this.pool.connect());
    let broken: unknown;
    // A checked-out connection has no pool listener: the server closing it while
    // the work awaits something else (an RPC call, a signature) emits an error
    // no query receives, which unheard ends the process. The next query fails
    // as unreachable, and the connection is not given back.
    const onError = (error: unknown) => (broken = error);
    client.on("error", onError);
    try {
      await reachable(() => client.query("BEGIN"));
      const result = await work({
        query: <R>(sql: string, params: unknown[] = []) =>
          reachable(async () => (await client.query(sql, params)).rows as R[]),
      });
      await reachable(() => client.query("COMMIT"));
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollback: unknown) => (broken = rollback));
      throw error;
    } finally {
      // A connection that failed its ROLLBACK is not given back to the pool for the next transaction.
      client.removeListener("error", onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
  close() {
    return this.pool.end();
  }
}

class PgliteDatabase implements Database {
  readonly kind = "pglite";
  constructor(
    private readonly db: PGlite,
    private readonly onClose: () => Promise<void> = () => db.close(),
  ) {}
  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.db.query<T>(sql, params)).rows;
  }
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const result = await this.db.transaction((tx) =>
      work({ query: async <R>(sql: string, params: unknown[] = []) => (await tx.query<R>(sql, params)).rows }),
    );
    return result as T;
  }
  close() {
    return this.onClose();
  }
}

/**
 * Opens the database and applies pending migrations. `memory://` keeps PGlite
 * in memory. A PGlite directory is this process's alone while it is open
 * (see ./local.ts): opening one that a live process holds throws
 * DirectoryInUseError, unless `viaHolder` (a tool such as the key CLI) asks
 * to use the holder's database through its socket instead.
 */
export async function openDatabase(options: {
  url?: string;
  directory?: string;
  viaHolder?: boolean;
}): Promise<Database> {
  if (options.url) {
    const db = new PostgresDatabase(new pg.Pool({ connectionString: options.url, max: 10 }));
    await migrate(db);
    return db;
  }
  const directory = options.directory ?? "memory://";
  if (directory.startsWith("memory://")) {
    const db = new PgliteDatabase(new PGlite(directory));
    await migrate(db);
    return db;
  }
  return openDirectory(resolve(directory), options.viaHolder ?? false);
}

async function openDirectory(directory: string, viaHolder: boolean): Promise<Database> {
  const holder = holderOf(directory);
  if (holder !== undefined) {
    if (viaHolder) return connectToHolder(directory, holder);
    throw new DirectoryInUseError(directory, holder);
  }
  await initialise(directory);
  const unlock = takeLock(directory);
  try {
    const pglite = new PGlite(directory);
    await pglite.waitReady;
    // Without the socket the API still serves; tools are told they cannot reach it.
    const stopServing = await serveSocket(pglite, directory).catch((error: Error) => {
      process.emitWarning(`PGlite ${directory} is not served to local tools: ${error.message}`);
      return async () => undefined;
    });
    const db = new PgliteDatabase(pglite, async () => {
      await stopServing();
      await pglite.close();
      unlock();
    });
    await migrate(db);
    return db;
  } catch (error) {
    unlock();
    throw error;
  }
}

/** The database of the process holding `directory`, through its socket; never its files. */
async function connectToHolder(directory: string, pid: number): Promise<Database> {
  const pool = new pg.Pool({
    host: directory,
    port: SOCKET_PORT,
    user: "postgres",
    database: "postgres",
    max: 1,
    connectionTimeoutMillis: 5_000,
  });
  // The holder stopping under an idle connection is not this process's crash.
  pool.on("error", () => undefined);
  const db = new PostgresDatabase(pool);
  try {
    await db.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new DirectoryInUseError(
      directory,
      pid,
      `its socket ${socketPath(directory)} does not answer (${(error as Error).message}), and the files are never opened twice; stop that process or retry.`,
    );
  }
  // The holder applied the migrations it knows; a tool does not change the schema under it.
  return db;
}

async function migrate(db: Database): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const applied = new Set(
    (await db.query<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => Number(r.version)),
  );
  // Each concern keeps its migrations in its own file; they run in version order.
  for (const migration of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    if (applied.has(migration.version)) continue;
    // Statements run one by one: PGlite's extended protocol takes one at a time.
    for (const statement of migration.statements) await db.query(statement);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      migration.version,
      migration.name,
    ]);
  }
}
