// One request with the SDK's manners: the key, a timeout, an automatic
// Idempotency-Key per POST reused across its retries, and retries with
// exponential back-off and jitter on connection errors, 409 in flight, 429
// and 5xx (503 overloaded among them), waiting at least Retry-After.
import { APIConnectionError, type Problem, RateLimitError, type ZsdError, errorFromProblem } from "./errors.ts";

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  /** Per attempt, in milliseconds. */
  timeout: number;
  /** Retries after the first attempt. */
  maxNetworkRetries: number;
  /** First back-off step, in milliseconds (doubles each retry, at most maxRetryDelay). */
  initialRetryDelay?: number;
  maxRetryDelay?: number;
  /** A Retry-After longer than this (milliseconds, default 60 s) is not waited for: the error is thrown. */
  maxRetryAfter?: number;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Sent as Idempotency-Key; one is made for every POST without one. */
  idempotencyKey?: string;
}

/** Answers never worth repeating: a shape-B mint that is still pending has its own answer (mintId). */
const NOT_RETRIED = new Set(["mint_pending"]);

export class HttpClient {
  // A # field, not a TypeScript private one: console.log and JSON.stringify of a client never show the key.
  readonly #options: HttpOptions;

  constructor(options: HttpOptions) {
    this.#options = options;
  }

  async request<T>(method: "GET" | "POST" | "DELETE", path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(path.replace(/^\//, ""), this.#options.baseUrl.replace(/\/?$/, "/"));
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#options.apiKey}`,
      accept: "application/json",
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (method === "POST") headers["idempotency-key"] = options.idempotencyKey ?? crypto.randomUUID();
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);

    return this.#withRetries(url, { method, headers, body }, async (response) => {
      const text = await response.text();
      return (text ? JSON.parse(text) : undefined) as T;
    });
  }

  /**
   * A file the API serves (the circuit's wasm and proving key), as bytes: retried as `request` is, so a
   * prover meets an API that sheds load with patience, not a failure.
   */
  async bytes(path: string): Promise<Uint8Array> {
    return this.#withRetries(
      new URL(path, this.#options.baseUrl),
      { method: "GET" },
      async (response) => new Uint8Array(await response.arrayBuffer()),
    );
  }

  async #withRetries<T>(url: URL, init: RequestInit, read: (response: Response) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let error: ZsdError;
      let retryAfter: number | undefined;
      try {
        const response = await (this.#options.fetch ?? fetch)(url, {
          ...init,
          signal: AbortSignal.timeout(this.#options.timeout),
        });
        if (response.ok) return await read(response);
        const text = await response.text();
        retryAfter = parseRetryAfter(response.headers.get("retry-after"));
        error = errorFromProblem(response.status, parseProblem(response.status, text, response), retryAfter);
      } catch (cause) {
        error = new APIConnectionError(`Could not reach ${url.origin}: ${(cause as Error).message}`, {
          code: "connection_error",
        });
      }
      if (attempt >= this.#options.maxNetworkRetries || !retryable(error)) throw error;
      // The caller decides whether to wait that long; a silent hour-long sleep looks like a hang.
      if (retryAfter !== undefined && retryAfter * 1000 > (this.#options.maxRetryAfter ?? 60_000)) throw error;
      await sleep(this.#delay(attempt, retryAfter));
    }
  }

  /**
   * Jitter over an exponential step; a server's Retry-After is a floor, with the jitter above it: a
   * server that sheds load tells every caller it turned away the same Retry-After, and callers that
   * all came back at that instant would be turned away again.
   */
  #delay(attempt: number, retryAfter: number | undefined): number {
    const initial = this.#options.initialRetryDelay ?? 500;
    const max = this.#options.maxRetryDelay ?? 8_000;
    const step = Math.min(max, initial * 2 ** attempt);
    return Math.max(step / 2, (retryAfter ?? 0) * 1000) + Math.random() * (step / 2);
  }
}

function retryable(error: ZsdError): boolean {
  if (error instanceof APIConnectionError || error instanceof RateLimitError) return true;
  if (error.code === "idempotency_request_in_progress") return true;
  return error.status !== undefined && error.status >= 500 && !NOT_RETRIED.has(error.code);
}

function parseProblem(status: number, text: string, response: Response): Problem {
  try {
    const parsed = JSON.parse(text) as Problem;
    if (typeof parsed.code === "string") return parsed;
  } catch {
    // Not a problem body (a proxy's page): described below.
  }
  return {
    status,
    code: status >= 500 ? "api_error" : "invalid_request",
    detail: text.slice(0, 200) || response.statusText,
    requestId: response.headers.get("x-request-id") ?? undefined,
  };
}

function parseRetryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
