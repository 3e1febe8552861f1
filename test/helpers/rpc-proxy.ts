// A JSON-RPC proxy in front of the test node: forwards every call, records
// what the node answered to each eth_sendRawTransaction, and lets a test act
// just before a raw transaction reaches the node (send a competing one, say),
// or answer an eth_call itself (a simulation that lies, as a node behind on
// state would).
import { type Server, createServer } from "node:http";
import type { Hex } from "viem";

interface RpcRequest {
  id: number | string;
  method: string;
  params?: unknown[];
}

export interface SentTransaction {
  raw: Hex;
  /** The node's error message, when it refused the transaction. */
  error?: string;
}

export interface RpcProxy {
  url: string;
  sent: SentTransaction[];
  /** Runs before a raw transaction is forwarded; cleared after it ran once. */
  beforeNextSend?: (raw: Hex) => Promise<void>;
  /** Sees each eth_call's transaction; the result it returns is the answer, the node is not asked. */
  answerCall?: (call: { to?: Hex; data?: Hex; input?: Hex; gas?: Hex }) => Hex | undefined;
  close(): Promise<void>;
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const state: RpcProxy = { url: "", sent: [], close: () => new Promise((r) => server.close(() => r())) };

  async function forward(request: RpcRequest): Promise<unknown> {
    if (request.method === "eth_call" && state.answerCall) {
      const result = state.answerCall(request.params![0] as { to?: Hex; data?: Hex; input?: Hex; gas?: Hex });
      if (result !== undefined) return { jsonrpc: "2.0", id: request.id, result };
    }
    if (request.method === "eth_sendRawTransaction" && state.beforeNextSend) {
      const hook = state.beforeNextSend;
      state.beforeNextSend = undefined;
      await hook(request.params![0] as Hex);
    }
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    const body = (await response.json()) as { error?: { message: string } };
    if (request.method === "eth_sendRawTransaction") {
      state.sent.push({ raw: request.params![0] as Hex, error: body.error?.message });
    }
    return body;
  }

  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", async () => {
      try {
        const parsed = JSON.parse(raw) as RpcRequest | RpcRequest[];
        const answer = Array.isArray(parsed) ? await Promise.all(parsed.map(forward)) : await forward(parsed);
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}
