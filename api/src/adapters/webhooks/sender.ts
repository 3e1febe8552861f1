// Sends one webhook as Standard Webhooks (https://www.standardwebhooks.com):
// `webhook-id`, `webhook-timestamp`, and `webhook-signature` with one
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per signing secret, so that
// during a rotation a receiver holding either secret accepts it.
import { createHmac, randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { LookupAddress } from "node:dns";
import type { CheckedTarget } from "./address-policy.ts";

export const SECRET_PREFIX = "whsec_";

/** A new signing secret: 32 random bytes, base64, as Standard Webhooks libraries read it. */
export const newSigningSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export interface SendResult {
  /** The receiver's status, when it answered. */
  status?: number;
  /** What went wrong when it did not answer (connection refused, timeout, …). */
  error?: string;
  /** No answer came in time: the attempt held its slot for the whole timeout. */
  timedOut?: boolean;
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  latencyMs: number;
}

/** The most of an answer read before it is dropped: receivers answer 2xx and little else. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Posts `body` to an address already checked against the address policy,
 * never resolving the name again. No redirect is followed: a 3xx is a failed
 * attempt (a redirect could point anywhere).
 */
export function send(
  target: CheckedTarget,
  message: { id: string; body: string; secrets: string[] },
  timeoutMs: number,
): Promise<SendResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = message.secrets.map((secret) => sign(secret, message.id, timestamp, message.body)).join(" ");
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const transport = target.url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: latency() });
    };
    const request = transport.request(
      target.url,
      {
        method: "POST",
        // One connection per attempt: a pooled socket would skip the address check.
        agent: false,
        // The checked address, for the name in the URL (TLS still verifies the certificate against the name).
        lookup: (_hostname, options, callback) => {
          const resolved: LookupAddress = { address: target.address, family: target.family };
          if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, [resolved]);
          else callback(null, target.address, target.family);
        },
        headers: {
          "content-type": "application/json",
          "user-agent": "ZSD-Webhooks/1.0",
          "webhook-id": message.id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature,
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const retryAfterMs = parseRetryAfter(response.headers["retry-after"]);
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        // The status is what counts: an answer cut short or too long still answered.
        const done = () => finish({ status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
        response.on("end", done);
        response.on("close", done);
        response.on("error", done);
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${timeoutMs} ms`, timedOut: true });
      request.destroy();
    }, timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) =>
      finish({ error: describe(error), ...(error.code === "ETIMEDOUT" ? { timedOut: true } : {}) }),
    );
    request.end(message.body);
  });
}

/** A transport error in words that say what happened without echoing anything the receiver sent. */
function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
    case "ETIMEDOUT":
      return "connection timed out";
    default:
      return error.code ? `request failed (${error.code})` : "request failed";
  }
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,10}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
