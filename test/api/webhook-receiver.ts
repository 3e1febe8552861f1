// A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records
// every request and answers as the test says (2xx, an error, 410, a
// Retry-After, or nothing at all while it is down).
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Webhook } from "standardwebhooks";

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** `delayMs`: the answer waits this long (a slow receiver). */
export type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered. */
  answer: (request: Received) => Answer;
  /** Stops listening (connections are refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(
  answer: (request: Received) => Answer = () => ({ status: 204 }),
): Promise<Receiver> {
  let server: Server | undefined;
  let port = 0;
  const receiver: Receiver = {
    url: "",
    received: [],
    answer,
    async down() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async up() {
      if (server) return;
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
          const request = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
          receiver.received.push(request);
          const { status, headers, delayMs } = receiver.answer(request);
          const reply = () => void (res.destroyed || res.writeHead(status, headers).end());
          if (delayMs) setTimeout(reply, delayMs);
          else reply();
        });
      });
      // The same port again after `down`, so that the registered URL stays right.
      await new Promise<void>((resolve) => s.listen(port, "127.0.0.1", resolve));
      port = (s.address() as AddressInfo).port;
      server = s;
    },
    close() {
      return receiver.down();
    },
  };
  await receiver.up();
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}

/** The delivery verified with the standardwebhooks library (throws if the signature is wrong), and its event. */
export function verify(secret: string, request: Received) {
  const event = new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
    id: string;
    type: string;
    createdAt: string;
    environment: string;
    data: Record<string, unknown>;
  };
  return event;
}

/** Each signature of the header checked alone against `secret`: which of them it made. */
export function signaturesBy(secret: string, request: Received): boolean[] {
  const header = String(request.headers["webhook-signature"]);
  return header.split(" ").map((signature) => {
    try {
      new Webhook(secret).verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": signature,
      });
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Checks events against the webhooks of an OpenAPI document (GET
 * /v1/openapi.json), with a JSON Schema validator of its own rather than the
 * zod that generated them: what receivers are told is what they get. Returns
 * what is wrong with an event, nothing when it matches.
 */
export function webhookSchemaCheck(document: { webhooks?: Record<string, unknown> }) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(document, "openapi.json");
  return (event: { type: string; data?: unknown }): string[] => {
    if (!document.webhooks?.[event.type]) return [`${event.type}: not in the document's webhooks`];
    const pointer = `openapi.json#/webhooks/${event.type}/post/requestBody/content/application~1json/schema`;
    const validate = ajv.getSchema(pointer)!;
    if (validate(event)) return [];
    return (validate.errors ?? []).map(
      (e) => `${event.type}: ${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`,
    );
  };
}
