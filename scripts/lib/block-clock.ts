// The dev chain's blocks: one per transaction (Hardhat's automine), a block a
// second while the chain is in use, and a slow heartbeat at rest. Interval
// mining at a block a second kept the idle stack busy for nothing: every empty
// block was fetched, stored and checked by the indexer (0.03 of a core). What
// needs blocks without transactions is governance, whose voting delay and
// period count blocks: a proposal's transaction makes the chain busy, and
// its voting passes at a block a second as before. Block times follow wall
// time (hardhat.config.cts) whenever a block comes; the heartbeat keeps the
// newest block's time within `heartbeatMs` of it at rest.
import { Agent, request } from "node:http";

export interface BlockClockOptions {
  rpcUrl: string;
  /** A block this often while the chain is in use. */
  busyBlockMs: number;
  /** How long the chain counts as in use after a block the clock did not mine (a transaction's). */
  busyForMs: number;
  /** A block this often at rest. */
  heartbeatMs: number;
  /** How often the head is read at rest, to notice a transaction's block. */
  checkMs: number;
  onError?: (error: unknown) => void;
}

// node:http on one kept-alive socket: fetch costs milliseconds of CPU a call, this a fraction.
// The node closes a socket idle for its keep-alive timeout (5 s); when this process's event loop
// was busy that long (`npm start` starting the indexer and the API), the close is only seen after
// the next request went out on that socket, which fails with "socket hang up" though the node is
// fine. Such a request never reached the node, so it is sent again once on a new socket, as
// node:http's documentation advises for `reusedSocket`; a node that is down still fails.
async function rpc<T>(agent: Agent, url: string, method: string): Promise<T> {
  try {
    return await rpcOnce<T>(agent, url, method);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    return rpcOnce<T>(agent, url, method);
  }
}

class StaleSocketError extends Error {}

function rpcOnce<T>(agent: Agent, url: string, method: string): Promise<T> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        try {
          const parsed = JSON.parse(text) as { result?: T; error?: { message: string } };
          if (parsed.error) reject(new Error(`${method}: ${parsed.error.message}`));
          else resolve(parsed.result as T);
        } catch (error) {
          reject(error);
        }
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${method}: no answer in 10 s`)));
    req.on("error", (error: NodeJS.ErrnoException) =>
      reject(req.reusedSocket && error.code === "ECONNRESET" ? new StaleSocketError(error.message) : error),
    );
    req.end(body);
  });
}

export class BlockClock {
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** The newest block this clock has seen or mined. */
  #known = -1;
  #busyUntil = 0;
  #lastBlockAt = Date.now();
  /** Blocks mined by the clock itself, for tests and the log. */
  mined = 0;

  constructor(private readonly options: BlockClockOptions) {}

  /** True while the chain counts as in use (a block a second). */
  get busy(): boolean {
    return Date.now() < this.#busyUntil;
  }

  start(): void {
    this.#stopped = false;
    void this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#agent.destroy();
  }

  async #tick(): Promise<void> {
    try {
      const head = Number(BigInt(await rpc<string>(this.#agent, this.options.rpcUrl, "eth_blockNumber")));
      const now = Date.now();
      // A block the clock did not mine came from a transaction: the chain is in use.
      if (this.#known >= 0 && head > this.#known) {
        this.#busyUntil = now + this.options.busyForMs;
        this.#lastBlockAt = now;
      }
      this.#known = Math.max(this.#known, head);
      const every = now < this.#busyUntil ? this.options.busyBlockMs : this.options.heartbeatMs;
      if (now - this.#lastBlockAt >= every) {
        await rpc(this.#agent, this.options.rpcUrl, "evm_mine");
        this.#known++;
        this.mined++;
        this.#lastBlockAt = Date.now();
      }
    } catch (error) {
      this.options.onError?.(error);
    }
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), this.busy ? this.options.busyBlockMs : this.options.checkMs);
  }
}
