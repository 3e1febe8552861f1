// New heads at rest without the cost of polling. Ponder asks the node for the
// latest block every pollingInterval (100 ms), through fetch: at rest that was
// 0.045 of a core in the indexer and 0.015 in a local Hardhat node, for a
// chain where nothing happened. With this transport, once no new head has
// come for QUIET_MS, Ponder's polls are answered with the head it already
// has, and the node is asked only every `idlePollMs`; the first new head
// ends the rest, and polls go to the node again every pollingInterval. The
// price: the first block after a quiet spell is seen up to `idlePollMs` late.
// Requests go over node:http(s) on kept-alive sockets, a fraction of fetch's
// CPU per call.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { type Transport, custom } from "viem";

/**
 * How long without a new head before polls are answered from the last one:
 * longer than the gap between blocks of a chain in use (the dev chain mines
 * a block a second then), shorter than its heartbeat at rest (a minute), each of
 * which brings QUIET_MS of polls at the full rate.
 */
export const QUIET_MS = 3_000;

interface Head {
  hash: string;
  block: unknown;
}

export interface RestingOptions {
  url: string;
  /** At rest, the node is asked for its head this often. */
  idlePollMs: number;
  /** A clock, for tests. */
  now?: () => number;
}

export function restingTransport(options: RestingOptions): Transport {
  const { request, close } = jsonRpc(options.url);
  const now = options.now ?? Date.now;
  // Per form of the question (with or without transactions): Ponder asks both, and each wants its own answer.
  const heads = new Map<string, Head & { askedAt: number }>();
  let newHeadAt = now();
  const transport = custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      const latest = method === "eth_getBlockByNumber" && Array.isArray(params) && params[0] === "latest";
      if (!latest) return request(method, params);
      const t = now();
      const key = JSON.stringify(params);
      const head = heads.get(key);
      if (head && t - newHeadAt >= QUIET_MS && t - head.askedAt < options.idlePollMs) return head.block;
      const block = (await request(method, params)) as { hash?: string } | null;
      if (block?.hash) {
        if (block.hash !== head?.hash) newHeadAt = t;
        heads.set(key, { hash: block.hash, block, askedAt: t });
      }
      return block;
    },
  });
  return Object.assign(transport, { close });
}

/** JSON-RPC over one kept-alive connection pool; an answer's error becomes an error with its code, as viem expects. */
function jsonRpc(url: string) {
  const https = new URL(url).protocol === "https:";
  const agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = https ? httpsRequest : httpRequest;
  let id = 0;
  const request = (method: string, params: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: params ?? [] });
      const req = send(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let answer: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
          try {
            answer = JSON.parse(text);
          } catch {
            return reject(new Error(`${method}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)}`));
          }
          if (answer.error) reject(Object.assign(new Error(answer.error.message), answer.error));
          else resolve(answer.result ?? null);
        });
        res.on("error", reject);
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`${method}: no answer from ${url} in 10 s`)));
      req.on("error", reject);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}
