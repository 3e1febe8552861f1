// Every statement against the request analytics tables: request_stats (one
// row per key, minute, method, route template and status, which replicas add
// to) and request_log (each key's last requests).
import type { Queryable } from "../../adapters/db/index.ts";

/** One minute's requests of a key to a route with one status, and their latency histogram. */
export interface RequestStatsCell {
  /** The minute's start, in ms since the epoch. */
  minute: number;
  apiKeyId: string;
  accountId: string;
  method: string;
  route: string;
  status: number;
  count: number;
  totalMs: number;
  buckets: number[];
}

export interface RequestLogInput {
  apiKeyId: string;
  accountId: string;
  at: Date;
  method: string;
  /** The route template (/v1/mints/:mintId), never the path. */
  route: string;
  status: number;
  latencyMs: number;
  requestId: string;
  idempotencyKey?: string;
}

export interface RequestLogRow {
  id: string | number;
  at: Date | string;
  api_key_id: string;
  method: string;
  route: string;
  status: number;
  latency_ms: number;
  request_id: string;
  idempotency_key: string | null;
}

/** `(…, $n)` placeholders for `rows` rows of 9 columns, numbered from $1. */
const valueLists = (rows: number) =>
  Array.from({ length: rows }, (_, r) => `(${Array.from({ length: 9 }, (_, i) => `$${9 * r + 1 + i}`).join(", ")})`);

/** Adds the cells to their rows: another replica (or an earlier flush) may have written the same minute. */
export async function addRequestStats(db: Queryable, cells: RequestStatsCell[]): Promise<void> {
  if (cells.length === 0) return;
  const params = cells.flatMap((c) => [
    new Date(c.minute),
    c.apiKeyId,
    c.accountId,
    c.method,
    c.route,
    c.status,
    c.count,
    c.totalMs,
    c.buckets,
  ]);
  await db.query(
    `INSERT INTO request_stats AS s (minute, api_key_id, account_id, method, route, status, count, total_ms, buckets)
       VALUES ${valueLists(cells.length).join(", ")}
       ON CONFLICT (api_key_id, minute, method, route, status) DO UPDATE SET
         count = s.count + EXCLUDED.count,
         total_ms = s.total_ms + EXCLUDED.total_ms,
         buckets = ARRAY(SELECT a + b FROM unnest(s.buckets, EXCLUDED.buckets) WITH ORDINALITY AS u(a, b, i) ORDER BY i)`,
    params,
  );
}

export async function insertRequestLog(db: Queryable, entries: RequestLogInput[]): Promise<void> {
  if (entries.length === 0) return;
  const params = entries.flatMap((e) => [
    e.apiKeyId,
    e.accountId,
    e.at,
    e.method,
    e.route,
    e.status,
    e.latencyMs,
    e.requestId,
    e.idempotencyKey ?? null,
  ]);
  await db.query(
    `INSERT INTO request_log (api_key_id, account_id, at, method, route, status, latency_ms, request_id, idempotency_key)
       VALUES ${valueLists(entries.length).join(", ")}`,
    params,
  );
}

/** Deletes all but the key's newest `keep` log entries. */
export async function trimRequestLog(db: Queryable, apiKeyId: string, keep: number): Promise<void> {
  await db.query(
    `DELETE FROM request_log WHERE api_key_id = $1 AND id < (
           SELECT id FROM request_log WHERE api_key_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)`,
    [apiKeyId, keep - 1],
  );
}

/** Drops the stats and log entries older than `cutoff`. */
export async function deleteRequestsBefore(db: Queryable, cutoff: Date): Promise<void> {
  await db.query("DELETE FROM request_stats WHERE minute < $1", [cutoff]);
  await db.query("DELETE FROM request_log WHERE at < $1", [cutoff]);
}

/**
 * The account's logged requests, newest first, at most `limit`: of one key,
 * with a status in [statusLow, statusHigh], of one route, and with an id
 * below `beforeId`, each when not null.
 */
export function requestLogOf(
  db: Queryable,
  accountId: string,
  filter: {
    apiKeyId: string | null;
    statusLow: number | null;
    statusHigh: number | null;
    route: string | null;
    beforeId: string | null;
    limit: number;
  },
): Promise<RequestLogRow[]> {
  return db.query<RequestLogRow>(
    `SELECT id, at, api_key_id, method, route, status, latency_ms, request_id, idempotency_key FROM request_log
       WHERE account_id = $1 AND ($2::text IS NULL OR api_key_id = $2)
         AND ($3::int IS NULL OR status BETWEEN $3 AND $4) AND ($5::text IS NULL OR route = $5)
         AND ($7::bigint IS NULL OR id < $7)
       ORDER BY id DESC LIMIT $6`,
    [accountId, filter.apiKeyId, filter.statusLow, filter.statusHigh, filter.route, filter.limit, filter.beforeId],
  );
}

/** Route templates the account's log holds. */
export async function loggedRoutesOf(db: Queryable, accountId: string): Promise<string[]> {
  const rows = await db.query<{ route: string }>(
    "SELECT DISTINCT route FROM request_log WHERE account_id = $1 ORDER BY route",
    [accountId],
  );
  return rows.map((r) => r.route);
}

/** The account's stats from `since`, of one key unless null. */
export interface StatsScope {
  accountId: string;
  since: Date;
  apiKeyId: string | null;
}

const scoped = (scope: StatsScope) => ({
  where: `account_id = $1 AND minute >= $2 AND ($3::text IS NULL OR api_key_id = $3)`,
  args: [scope.accountId, scope.since, scope.apiKeyId],
});

/** Requests (n) and errors (e: status 400 and above) per hour or day, in UTC. */
export function requestSeries(
  db: Queryable,
  step: "hour" | "day",
  scope: StatsScope,
): Promise<{ at: Date | string; n: string | number; e: string | number }[]> {
  const { where, args } = scoped(scope);
  return db.query<{ at: Date | string; n: string | number; e: string | number }>(
    // In UTC, as the buckets the caller fills in.
    `SELECT date_trunc('${step}', minute AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS at, sum(count) AS n,
              sum(CASE WHEN status >= 400 THEN count ELSE 0 END) AS e
       FROM request_stats WHERE ${where} GROUP BY 1 ORDER BY 1`,
    args,
  );
}

/** What a breakdown groups by: one group of all, or by key, route or status. */
export type StatsGrouping = "'all'::text" | "api_key_id" | "method || ' ' || route" | "status";

/** Requests (n) and errors (e) per group, the busiest first. */
export function requestTotalsBy(
  db: Queryable,
  grouping: StatsGrouping,
  scope: StatsScope,
): Promise<{ label: string | number; n: string | number; e: string | number }[]> {
  const { where, args } = scoped(scope);
  return db.query<{ label: string | number; n: string | number; e: string | number }>(
    `SELECT ${grouping} AS label, sum(count) AS n, sum(CASE WHEN status >= 400 THEN count ELSE 0 END) AS e
         FROM request_stats WHERE ${where} GROUP BY 1 ORDER BY 2 DESC, 1`,
    args,
  );
}

/** Each group's histogram, added in SQL bucket by bucket (i counts from 1): a few rows per group whatever the traffic. */
export function latencyHistogramsBy(
  db: Queryable,
  grouping: StatsGrouping,
  scope: StatsScope,
): Promise<{ label: string | number; i: string | number; n: string | number }[]> {
  const { where, args } = scoped(scope);
  return db.query<{ label: string | number; i: string | number; n: string | number }>(
    `SELECT ${grouping} AS label, u.i, sum(u.b) AS n
         FROM request_stats, unnest(buckets) WITH ORDINALITY AS u(b, i) WHERE ${where} GROUP BY 1, 2`,
    args,
  );
}
