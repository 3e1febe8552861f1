// Keeps the dev stack's indexer following the chain, whatever stops it: a
// Ponder process can stay up, answer /ready with 200 and no longer advance
// (its head subscription went silent once), or keep data of a chain that is no
// longer there (a restarted node, a revert deeper than it can roll back).
// An indexer that stops advancing while the chain advances is restarted on its
// data; one whose data no longer matches the chain is wiped and re-synced.
import type { RunningIndexer } from "./indexer-process.ts";

export interface Observation {
  now: number;
  /** The process has exited. */
  exited: boolean;
  /** The indexer's newest block (its /status); undefined when it does not answer. */
  indexed?: { number: number; timestamp: number };
  /** The chain head; undefined when the node does not answer (then a stall is not the indexer's fault). */
  head?: number;
  /** The chain's timestamp of block `indexed.number`, when the chain has that block. */
  chainTimestamp?: number;
  /** A figure the indexer derived compared with the chain's at the same block; undefined when not compared. */
  figuresMatch?: boolean;
}

export interface WatchState {
  /** When the indexer last advanced or was caught up. */
  progressAt: number;
  lastIndexed?: number;
  /** Consecutive observations that found the data not matching the chain. */
  mismatches: number;
}

export type Verdict = { action: "ok" } | { action: "restart" | "resync"; reason: string };

export interface JudgeOptions {
  /** How long the indexer may stay behind a chain without advancing. */
  stallMs: number;
  /**
   * Observations in a row that must find a mismatch before a re-sync: for a
   * moment after a shallow reorganisation the indexer still shows the
   * abandoned branch, and Ponder rolls that back itself.
   */
  mismatchesToResync?: number;
}

export const newWatchState = (now: number): WatchState => ({ progressAt: now, mismatches: 0 });

/** What to do about the indexer, given one observation; updates `state`. */
export function judge(state: WatchState, o: Observation, options: JudgeOptions): Verdict {
  if (o.exited) return { action: "restart", reason: "the indexer exited" };
  if (o.head === undefined) {
    // The node is down: nothing can advance, and nothing can be compared.
    state.progressAt = o.now;
    return { action: "ok" };
  }
  const { indexed, head } = o;
  if (indexed) {
    const mismatch =
      indexed.number > head
        ? `the indexer is at block ${indexed.number}, ahead of the chain's head ${head}`
        : o.chainTimestamp !== undefined && o.chainTimestamp !== indexed.timestamp
          ? `the indexer's block ${indexed.number} is not the chain's (timestamp ${indexed.timestamp}, chain ${o.chainTimestamp})`
          : o.figuresMatch === false
            ? `the indexer's figures at block ${indexed.number} differ from the chain's`
            : undefined;
    if (mismatch) {
      state.mismatches++;
      if (state.mismatches >= (options.mismatchesToResync ?? 2)) return { action: "resync", reason: mismatch };
    } else {
      state.mismatches = 0;
    }
    if (indexed.number !== state.lastIndexed || indexed.number >= head) state.progressAt = o.now;
    state.lastIndexed = indexed.number;
  }
  if (o.now - state.progressAt > options.stallMs) {
    return {
      action: "restart",
      reason: indexed
        ? `the indexer has stayed at block ${indexed.number} for ${Math.round((o.now - state.progressAt) / 1000)} s while the chain is at ${head}`
        : `the indexer has not answered for ${Math.round((o.now - state.progressAt) / 1000)} s`,
    };
  }
  return { action: "ok" };
}

async function rpc<T>(rpcUrl: string, method: string, params: unknown[], timeoutMs: number): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.result === undefined) throw new Error(body.error?.message ?? `${method}: no result`);
  return body.result;
}

/** The indexer's newest block from Ponder's /status; undefined when it does not answer. */
export async function indexerStatus(
  url: string,
  timeoutMs = 2000,
): Promise<{ number: number; timestamp: number } | undefined> {
  try {
    const response = await fetch(`${url}/status`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return undefined;
    const status = (await response.json()) as Record<string, { block: { number: number; timestamp: number } }>;
    return Object.values(status)[0]?.block;
  } catch {
    return undefined;
  }
}

/**
 * Compares the indexer's circulating supply with the token's `totalSupply()`
 * at the indexer's block: undefined when the block moved during the reads.
 */
export async function supplyMatches(
  indexerUrl: string,
  rpcUrl: string,
  token: string,
  timeoutMs = 2000,
): Promise<boolean | undefined> {
  const before = await indexerStatus(indexerUrl, timeoutMs);
  if (!before) return undefined;
  const supply = (await (await fetch(`${indexerUrl}/supply`, { signal: AbortSignal.timeout(timeoutMs) })).json()) as {
    circulating: string;
  };
  const after = await indexerStatus(indexerUrl, timeoutMs);
  if (after?.number !== before.number) return undefined;
  // totalSupply()
  const total = await rpc<string>(
    rpcUrl,
    "eth_call",
    [{ to: token, data: "0x18160ddd" }, `0x${before.number.toString(16)}`],
    timeoutMs,
  );
  return BigInt(total) === BigInt(supply.circulating);
}

export interface WatchdogOptions {
  rpcUrl: string;
  /** Starts the indexer; `fresh` wipes its data first. */
  start(fresh: boolean): Promise<RunningIndexer>;
  /** Compares the indexer's figures with the chain (see supplyMatches). */
  verify?(indexer: RunningIndexer): Promise<boolean | undefined>;
  intervalMs?: number;
  stallMs?: number;
  timeoutMs?: number;
  log(message: string): void;
}

export interface Watchdog {
  /** The indexer running now (another object after each restart). */
  readonly indexer: RunningIndexer;
  readonly actions: { action: "restart" | "resync"; reason: string; at: number }[];
  stop(): Promise<void>;
}

/** Starts the indexer from scratch and watches it until `stop()`. */
export async function watchIndexer(options: WatchdogOptions): Promise<Watchdog> {
  const intervalMs = options.intervalMs ?? 5_000;
  const stallMs = options.stallMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 2_000;
  let indexer = await options.start(true);
  let state = newWatchState(Date.now());
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let tick: Promise<void> = Promise.resolve();
  const actions: Watchdog["actions"] = [];

  /** The last observation that compared the indexer with the chain and found them matching. */
  let matched: Observation | undefined;

  async function observe(): Promise<Observation> {
    const exited = indexer.process.exitCode !== null || indexer.process.signalCode !== null;
    const [indexed, head] = await Promise.all([
      indexerStatus(indexer.url, timeoutMs),
      rpc<string>(options.rpcUrl, "eth_blockNumber", [], timeoutMs).then(Number, () => undefined),
    ]);
    const o: Observation = { now: Date.now(), exited, indexed, head };
    // At rest nothing moved since the last comparison that matched: its results stand, and the
    // indexer and the node are spared a block, a supply and a call every interval.
    const same =
      matched !== undefined &&
      matched.head === head &&
      matched.indexed?.number === indexed?.number &&
      matched.indexed?.timestamp === indexed?.timestamp;
    if (same && indexed) {
      o.chainTimestamp = matched!.chainTimestamp;
      o.figuresMatch = matched!.figuresMatch;
      return o;
    }
    matched = undefined;
    if (indexed && head !== undefined && indexed.number <= head) {
      try {
        const block = await rpc<{ timestamp: string } | null>(
          options.rpcUrl,
          "eth_getBlockByNumber",
          [`0x${indexed.number.toString(16)}`, false],
          timeoutMs,
        );
        if (block) o.chainTimestamp = Number(block.timestamp);
        o.figuresMatch = await options.verify?.(indexer);
        if (o.chainTimestamp === indexed.timestamp && (options.verify ? o.figuresMatch === true : true)) matched = o;
      } catch {
        // Compared at the next observation.
      }
    }
    return o;
  }

  async function act(verdict: Exclude<Verdict, { action: "ok" }>) {
    actions.push({ ...verdict, at: Date.now() });
    options.log(`${verdict.action === "resync" ? "re-syncing" : "restarting"} the indexer: ${verdict.reason}`);
    await indexer.stop();
    let fresh = verdict.action === "resync";
    options.log(`indexer stopped; starting it ${fresh ? "from scratch" : "on its data"}`);
    for (;;) {
      if (stopped) return;
      try {
        indexer = await options.start(fresh);
        break;
      } catch (error) {
        // An indexer that cannot start on its data (an unrecoverable
        // reorganisation, say) starts again from scratch.
        options.log(
          `the indexer did not start${fresh ? "" : " on its data; re-syncing it"}: ${String(error).slice(0, 500)}`,
        );
        if (fresh) await new Promise((r) => setTimeout(r, intervalMs));
        fresh = true;
      }
    }
    options.log(`indexer back: ${indexer.url}`);
    state = newWatchState(Date.now());
    matched = undefined;
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      tick = (async () => {
        try {
          const verdict = judge(state, await observe(), { stallMs });
          if (verdict.action !== "ok" && !stopped) await act(verdict);
        } catch (error) {
          options.log(`indexer watchdog: ${String(error)}`);
        }
        schedule();
      })();
    }, intervalMs);
  };
  schedule();

  return {
    get indexer() {
      return indexer;
    },
    actions,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await tick;
      await indexer.stop();
    },
  };
}
