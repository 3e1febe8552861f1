// The HTTP server around the app: bounded against slow clients, and Node's own
// refusals (a malformed request line, headers too large) answered as problems
// like everything else.
import { type Server, createServer } from "node:http";
import type { Socket } from "node:net";
import type { Express } from "express";
import { problemType } from "./problems.ts";

export interface ServerLimits {
  /** Time for the whole request head to arrive. */
  headersTimeoutMs: number;
  /** Time for the whole request, body included. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

const STATUS_TITLE: Record<number, [string, string]> = {
  400: ["bad_request", "Bad request"],
  408: ["request_timeout", "Request timeout"],
  413: ["body_too_large", "Payload too large"],
  414: ["uri_too_long", "URI too long"],
  431: ["headers_too_large", "Request header fields too large"],
};

function clientErrorStatus(error: NodeJS.ErrnoException): number {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return 431;
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "HPE_HEADERS_TIMEOUT":
      return 408;
    default:
      return 400;
  }
}

/** The problem Node would otherwise answer as a bare `400 Bad Request`. */
function onClientError(typeBase: string, error: NodeJS.ErrnoException, socket: Socket): void {
  if (socket.destroyed) return;
  if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
  const status = clientErrorStatus(error);
  const [code, title] = STATUS_TITLE[status]!;
  const body = JSON.stringify({
    type: problemType(typeBase, code),
    title,
    status,
    detail: "The server could not read this HTTP request.",
    code,
  });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function createHttpServer(app: Express, limits: ServerLimits): Server {
  const server = createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      // Node enforces both timeouts only when it checks its connections (every 30 s by default).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // createApp keeps PROBLEM_TYPE_BASE (or its default) there.
  const typeBase = String(app.locals.problemTypeBase ?? "");
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => onClientError(typeBase, error, socket));
  return server;
}
