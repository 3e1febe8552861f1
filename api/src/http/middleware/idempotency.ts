// Idempotency-Key for POSTs: the first response (status and body) is stored and
// replayed for a repeat with the same body; the same key with another body is
// 422; a duplicate while the first is still running is 409; a request refused
// before it ran (validation) is not remembered. A key is never left claimed
// for good: a claim whose release failed (the database down when the answer
// left) is released by this process at the next request, and one that a
// crashed process left is taken over once it is older than `abandonedAfterMs`.
// Scoped, as
// Stripe's are, to the account and environment: any key of the account
// replays the answer. Bodies are compared by content, not key order.
import { createHash } from "node:crypto";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Database } from "../../adapters/db/index.ts";
import { problems } from "../problems.ts";

const KEY = /^[\x21-\x7e]{1,255}$/;

interface RecordRow {
  request_hash: string;
  state: "in_flight" | "done";
  response_status: number | null;
  response_body: string | null;
  response_type: string | null;
  expires_at: Date | string;
}

/**
 * Fields a route marks as secret (a new API key) are not kept in the record:
 * a replay answers them as null rather than store a secret in clear.
 */
function redact(body: string, fields: string[] | undefined): string {
  if (!fields?.length) return body;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    for (const field of fields) if (field in parsed) parsed[field] = null;
    return JSON.stringify(parsed);
  } catch {
    return body;
  }
}

/** JSON with object keys sorted, so that `{a,b}` and `{b,a}` hash alike (the body guard bounds its depth). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function idempotency(db: Database, ttlHours: number, abandonedAfterMs: number): RequestHandler {
  /** Claims this process could not release, by scope and key: each claim is known by its created_at. */
  const unreleased = new Map<string, { owner: string; key: string; claimed: string }>();
  async function releaseLeftClaims() {
    for (const [id, claim] of unreleased) {
      await db.query(
        "DELETE FROM idempotency_records WHERE scope = $1 AND key = $2 AND state = 'in_flight' AND created_at = $3",
        [claim.owner, claim.key, claim.claimed],
      );
      unreleased.delete(id);
    }
  }
  async function keyed(req: Request, res: Response, next: NextFunction, key: string): Promise<void> {
    try {
      if (!KEY.test(key)) {
        throw problems.validation([
          { field: "header.Idempotency-Key", message: "1 to 255 printable ASCII characters" },
        ]);
      }
      const { accountId, environment } = res.locals.apiKey as { accountId: string; environment: string };
      const owner = `${accountId}:${environment}`;
      const requestHash = createHash("sha256")
        .update(`${req.method} ${req.originalUrl}\n${canonicalJson(req.body ?? null)}`)
        .digest("hex");

      await releaseLeftClaims();
      // Expired records, and claims a crashed process left, are forgotten before the key is claimed.
      await db.query(
        `DELETE FROM idempotency_records WHERE scope = $1 AND key = $2
         AND (expires_at < now() OR (state = 'in_flight' AND created_at < now() - make_interval(secs => $3)))`,
        [owner, key, abandonedAfterMs / 1000],
      );
      const claimed = await db.query<{ claimed: string }>(
        `INSERT INTO idempotency_records (scope, key, request_hash, state, expires_at)
         VALUES ($1, $2, $3, 'in_flight', now() + make_interval(hours => $4::int))
         ON CONFLICT (scope, key) DO NOTHING RETURNING created_at::text AS claimed`,
        [owner, key, requestHash, ttlHours],
      );
      if (claimed.length === 0) {
        const [existing] = await db.query<RecordRow>(
          "SELECT * FROM idempotency_records WHERE scope = $1 AND key = $2",
          [owner, key],
        );
        if (!existing) throw problems.idempotencyInFlight();
        if (existing.request_hash !== requestHash) throw problems.idempotencyMismatch();
        if (existing.state === "in_flight") throw problems.idempotencyInFlight();
        res.setHeader("Idempotent-Replayed", "true");
        res
          .status(existing.response_status!)
          .type(existing.response_type ?? "application/json")
          .send(existing.response_body);
        return;
      }

      // A handler whose effect has no natural key of its own (a new API key) tags it with this.
      res.locals.idempotency = { key, ttlHours };
      // Store the answer before it leaves, so that a repeat sees it at once.
      const send = res.send.bind(res);
      res.send = ((payload?: unknown) => {
        const status = res.statusCode;
        const text = redact(
          typeof payload === "string"
            ? payload
            : Buffer.isBuffer(payload)
              ? payload.toString()
              : JSON.stringify(payload ?? null),
          res.locals.idempotencyRedact as string[] | undefined,
        );
        // A server error is not an answer, and a request refused before it ran
        // (validation) did nothing: release the key so that a retry runs again.
        const stored =
          status >= 500 || !res.locals.validated
            ? db.query("DELETE FROM idempotency_records WHERE scope = $1 AND key = $2", [owner, key])
            : db.query(
                `UPDATE idempotency_records
                 SET state = 'done', response_status = $3, response_body = $4, response_type = $5
                 WHERE scope = $1 AND key = $2`,
                [owner, key, status, text, String(res.getHeader("content-type") ?? "application/json")],
              );
        // The answer leaves either way; if it could not be kept, the key is
        // released so that a retry runs again rather than waits on "in flight"
        // (and if the database is out of reach, released at the next request).
        const claim = claimed[0]!.claimed;
        stored
          .catch(() => db.query("DELETE FROM idempotency_records WHERE scope = $1 AND key = $2", [owner, key]))
          .catch(() => void unreleased.set(`${owner}\n${key}`, { owner, key, claimed: claim }))
          .finally(() => send(payload as never));
        return res;
      }) as typeof res.send;
      next();
    } catch (error) {
      next(error);
    }
  }
  // Synchronous for a request without a key (a DELETE, a POST without one): no promise for Express to await.
  return (req, res, next) => {
    const key = req.get("idempotency-key");
    if (req.method !== "POST" || key === undefined) return next();
    return keyed(req, res, next, key);
  };
}
