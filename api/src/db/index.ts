// One query layer over embedded PGlite (default, zero set-up) or PostgreSQL
// (DATABASE_URL): the same SQL, the same migrations.
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { MIGRATIONS } from "./migrations.ts";

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `work` in one transaction: all of its queries land, or none. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

class PostgresDatabase implements Database {
  readonly kind = "postgres";
  constructor(private readonly pool: pg.Pool) {}
  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(sql, params)).rows as T[];
  }
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work({
        query: async <R>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as R[],
      });
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
  close() {
    return this.pool.end();
  }
}

class PgliteDatabase implements Database {
  readonly kind = "pglite";
  constructor(private readonly db: PGlite) {}
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
    return this.db.close();
  }
}

/** Opens the database and applies pending migrations. `memory://` keeps PGlite in memory. */
export async function openDatabase(options: { url?: string; directory?: string }): Promise<Database> {
  const db: Database = options.url
    ? new PostgresDatabase(new pg.Pool({ connectionString: options.url, max: 10 }))
    : new PgliteDatabase(new PGlite(options.directory ?? "memory://"));
  await migrate(db);
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
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    // Statements run one by one: PGlite's extended protocol takes one at a time.
    for (const statement of migration.statements) await db.query(statement);
    await db.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      migration.version,
      migration.name,
    ]);
  }
}
