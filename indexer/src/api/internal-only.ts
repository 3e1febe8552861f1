// The indexer is internal: the relay API and the dev scripts read it over
// loopback, and no browser page may. Ponder's server (ponder/src/server)
// answers every request, its own /status, /ready and /metrics included, with
// hono/cors `Access-Control-Allow-Origin: *`, registered before this app's
// routes and with no setting to turn it off. Ponder builds that server with
// `http.createServer` after loading the API module, so the server it gets here
// makes responses that drop every CORS header.
import http from "node:http";

const isCors = (name: string) => name.toLowerCase().startsWith("access-control-");

class InternalResponse<
  Request extends http.IncomingMessage = http.IncomingMessage,
> extends http.ServerResponse<Request> {
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    for (const name of this.getHeaderNames()) if (isCors(name)) this.removeHeader(name);
    const headers = rest.at(-1);
    if (headers && typeof headers === "object" && !Array.isArray(headers)) {
      for (const name of Object.keys(headers)) if (isCors(name)) delete (headers as Record<string, unknown>)[name];
    }
    return super.writeHead(statusCode, ...(rest as [http.OutgoingHttpHeaders?]));
  }
}

const PATCHED = Symbol.for("zsd.indexer.internalOnly");
const patched = http as typeof http & { [PATCHED]?: true };
// `ponder dev` reloads this module on every change: wrap once.
if (!patched[PATCHED]) {
  const createServer = http.createServer;
  const internal = (...args: unknown[]) => {
    const [options, listener] = typeof args[0] === "function" || args[0] === undefined ? [{}, args[0]] : args;
    return createServer(
      { ...(options as http.ServerOptions), ServerResponse: InternalResponse },
      listener as http.RequestListener,
    );
  };
  Object.assign(http, { createServer: internal, [PATCHED]: true });
}
