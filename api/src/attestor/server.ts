// The attestor's HTTP face: one question (POST /v1/attestations: sign this batch?) and a health
// check. Whoever reaches it can only ask for signatures over deposits that are real, which is what
// the coordinator needs anyway; it binds to 127.0.0.1 unless told otherwise.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { z } from "zod";
import { ZcashdError, ZcashdUnreachable } from "../adapters/custody/zcashd.ts";
import { AttestationRefused, type DepositAttestor, MAX_DEPOSITS_PER_BATCH } from "./attest.ts";

/** A request body is a batch of at most 64 deposits: a few kilobytes. */
const MAX_BODY_BYTES = 64 * 1024;

const decimal = z.string().regex(/^(0|[1-9][0-9]{0,76})$/, "a decimal integer string");
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "0x and 64 hex digits");
export const attestationBody = z.strictObject({
  batch: decimal.describe("The registry's depositBatchCount() the batch is for"),
  deposits: z
    .array(
      z.strictObject({
        zcashTxId: hex32.describe("The Zcash txid, internal byte order"),
        amountZat: decimal,
        noteCommitment: hex32,
      }),
    )
    .min(1)
    .max(MAX_DEPOSITS_PER_BATCH),
});

interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  [extra: string]: unknown;
}

function send(res: ServerResponse, status: number, body: unknown, type = "application/json") {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" }).end(JSON.stringify(body));
}

function problem(res: ServerResponse, p: Problem) {
  send(res, p.status, { type: `about:blank#${p.code}`, ...p }, "application/problem+json");
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    // Past the limit the rest is read and dropped, so that the client gets its 413 rather than a reset;
    // past 16 times the limit, the connection is cut.
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > 16 * MAX_BODY_BYTES) req.destroy();
      else if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function handle(
  attestor: DepositAttestor,
  info: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const path = new URL(req.url ?? "/", "http://attestor").pathname;
  if (path === "/v1/health") {
    if (req.method !== "GET") return problem(res, methodNotAllowed("GET"));
    return send(res, 200, { status: "ok", signer: attestor.signer, ...info });
  }
  if (path !== "/v1/attestations") {
    return problem(res, {
      status: 404,
      code: "not_found",
      title: "Not found",
      detail: `no ${path} here: POST /v1/attestations`,
    });
  }
  if (req.method !== "POST") return problem(res, methodNotAllowed("POST"));
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
    return problem(res, {
      status: 415,
      code: "unsupported_media_type",
      title: "Unsupported media type",
      detail: "send the batch as application/json",
    });
  }
  const raw = await readBody(req);
  if (raw === undefined) {
    return problem(res, {
      status: 413,
      code: "body_too_large",
      title: "Body too large",
      detail: `a batch is at most ${MAX_BODY_BYTES} bytes (${MAX_DEPOSITS_PER_BATCH} deposits)`,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return problem(res, { status: 400, code: "invalid_json", title: "Invalid JSON", detail: "the body is not JSON" });
  }
  const parsed = attestationBody.safeParse(json);
  if (!parsed.success) {
    return problem(res, {
      status: 400,
      code: "invalid_request",
      title: "Invalid request",
      detail: parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
    });
  }
  try {
    const attestation = await attestor.attest({
      batch: BigInt(parsed.data.batch),
      deposits: parsed.data.deposits.map((d) => ({
        zcashTxId: d.zcashTxId.toLowerCase() as `0x${string}`,
        amountZat: BigInt(d.amountZat),
        noteCommitment: BigInt(d.noteCommitment),
      })),
    });
    return send(res, 200, { ...attestation, batch: attestation.batch.toString() });
  } catch (error) {
    if (error instanceof AttestationRefused) {
      return problem(res, {
        status: error.reason === "wrong_turn" ? 409 : 422,
        code: error.reason,
        title: error.reason === "wrong_turn" ? "Not this batch's turn" : "Deposits not attested",
        detail: error.message,
        deposits: error.deposits,
      });
    }
    if (error instanceof ZcashdUnreachable || error instanceof ZcashdError) {
      return problem(res, {
        status: 503,
        code: "node_unavailable",
        title: "Zcash node unavailable",
        detail: `this attestor cannot read its own Zcash node (${error.message}); try again later`,
      });
    }
    throw error;
  }
}

const methodNotAllowed = (allowed: string): Problem => ({
  status: 405,
  code: "method_not_allowed",
  title: "Method not allowed",
  detail: `use ${allowed}`,
});

/** Serves `attestor` on host:port (0 picks a free port); resolves once listening. */
export async function serveAttestor(
  attestor: DepositAttestor,
  options: { host?: string; port?: number; info?: Record<string, unknown>; onError?: (error: unknown) => void } = {},
): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    handle(attestor, options.info ?? {}, req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) {
        problem(res, {
          status: 503,
          code: "unavailable",
          title: "Unavailable",
          detail: "the attestor could not answer; try again later",
        });
      }
    });
  });
  server.requestTimeout = 30_000;
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
