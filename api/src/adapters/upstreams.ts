// The indexer and the chain, over HTTP only (the API never imports indexer
// code). Every call is bounded: a slow or dead upstream is `unavailable`.
import { unavailable } from "./errors.ts";

export interface IndexedBlock {
  number: number;
  timestamp: number;
}

export class Upstreams {
  // Ledger figures move once a block: answers are shared for `cacheMs`, and
  // concurrent identical reads wait for one upstream call instead of many.
  readonly #cache = new Map<string, { until: number; value: Promise<unknown> }>();

  constructor(
    private readonly indexerUrl: string,
    private readonly rpcUrl: string,
    private readonly timeoutMs: number,
    private readonly cacheMs = 0,
  ) {}

  async indexer<T>(path: string): Promise<T> {
    if (this.cacheMs <= 0) return this.#fetchIndexer<T>(path);
    const now = Date.now();
    const hit = this.#cache.get(path);
    if (hit && hit.until > now) return hit.value as Promise<T>;
    const value = this.#fetchIndexer<T>(path);
    this.#cache.set(path, { until: now + this.cacheMs, value });
    if (this.#cache.size > 10_000) this.#cache.clear();
    // A failure is not kept: the next read asks again.
    value.catch(() => this.#cache.delete(path));
    return value;
  }

  async #fetchIndexer<T>(path: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.indexerUrl}${path}`, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch {
      throw unavailable("The ledger indexer");
    }
    if (!response.ok) throw unavailable("The ledger indexer");
    return (await response.json()) as T;
  }

  /** An uncached indexer read whose 404 means "no such object": undefined then. */
  async indexerOrNotFound<T>(path: string): Promise<T | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.indexerUrl}${path}`, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch {
      throw unavailable("The ledger indexer");
    }
    if (response.status === 404) return undefined;
    if (!response.ok) throw unavailable("The ledger indexer");
    return (await response.json()) as T;
  }

  /** The newest block the indexer has processed, and that block's timestamp (Unix seconds). */
  async indexedBlock(): Promise<IndexedBlock> {
    const status = await this.indexer<Record<string, { block: IndexedBlock }>>("/status");
    const block = Object.values(status)[0]?.block;
    return { number: block?.number ?? 0, timestamp: block?.timestamp ?? 0 };
  }

  async indexerReady(): Promise<boolean> {
    try {
      return (await fetch(`${this.indexerUrl}/ready`, { signal: AbortSignal.timeout(this.timeoutMs) })).ok;
    } catch {
      return false;
    }
  }

  async chainHead(): Promise<number> {
    try {
      const response = await fetch(this.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const body = (await response.json()) as { result?: string };
      if (!body.result) throw new Error("no result");
      return Number(BigInt(body.result));
    } catch {
      throw unavailable("The chain node");
    }
  }
}
