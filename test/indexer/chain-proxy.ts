// A proxy in front of the test node that can make WebSocket subscriptions go
// silent the way Hardhat 2's do after five minutes (issue 2053: a newHeads
// subscription is a filter nobody polls, and Hardhat drops it): the
// connection stays open and nothing more arrives. JSON-RPC over HTTP passes.
import { type Server, createServer } from "node:http";
import { type Socket, connect } from "node:net";

export interface ChainProxy {
  url: string;
  wsUrl: string;
  /** WebSocket connections opened so far (a polling indexer opens none). */
  webSockets: number;
  /** JSON-RPC requests over HTTP passed on so far, by method. */
  requests: Map<string, number>;
  /** From now on, the WebSockets open now receive nothing; later ones work. */
  silence(): void;
  close(): Promise<void>;
}

export async function startChainProxy(target: string): Promise<ChainProxy> {
  const upstream = new URL(target);
  const open = new Set<{ silenced: boolean; sockets: Socket[] }>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      try {
        const method = (JSON.parse(Buffer.concat(chunks).toString()) as { method?: string }).method ?? "?";
        state.requests.set(method, (state.requests.get(method) ?? 0) + 1);
        const answer = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.concat(chunks),
        });
        res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });

  // The upgrade request goes to the node as it came; its bytes come back
  // until the connection is silenced.
  server.on("upgrade", (req, client: Socket, head: Buffer) => {
    const connection = { silenced: false, sockets: [client] };
    open.add(connection);
    state.webSockets++;
    const node = connect(Number(upstream.port), upstream.hostname, () => {
      const headers = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      node.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n`);
      node.write(head);
      client.pipe(node);
      node.on("data", (chunk: Buffer) => {
        if (!connection.silenced) client.write(chunk);
      });
    });
    connection.sockets.push(node);
    const end = () => {
      open.delete(connection);
      for (const socket of connection.sockets) socket.destroy();
    };
    node.on("error", end).on("close", end);
    client.on("error", end).on("close", end);
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const state: ChainProxy = {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    webSockets: 0,
    requests: new Map(),
    silence() {
      for (const connection of open) connection.silenced = true;
    },
    close() {
      for (const connection of open) for (const socket of connection.sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}
