// The JS client's manners against a local fake server that answers as each
// test says: retries and back-off, Retry-After, one Idempotency-Key per POST
// across its retries, and errors mapped to classes by status and code.
import { readFileSync } from "node:fs";
import { type IncomingMessage, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  APIConnectionError,
  APIError,
  AuthenticationError,
  ConflictError,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  Zsd,
} from "@zsd/sdk/client";
import { DepositTree, createNote, depositLeaf, noteCommitment, releaseProver } from "@zsd/sdk/notes";
import { CIRCUIT } from "../../scripts/lib/paths.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

const problem = (status: number, code: string, extra: Record<string, unknown> = {}): Reply => ({
  status,
  body: {
    type: `about:blank#${code}`,
    title: code,
    status,
    detail: `detail of ${code}`,
    code,
    requestId: "req_1",
    ...extra,
  },
  headers: { "content-type": "application/problem+json" },
});

describe("the JS client over HTTP", () => {
  let server: Server;
  let baseUrl: string;
  let seen: Seen[];
  let replies: Reply[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: Date.now(),
        });
        const reply = replies.shift() ?? { status: 200, body: { ok: true } };
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen = [];
    replies = [];
  });

  const client = (options: { maxNetworkRetries?: number } = {}) =>
    new Zsd("sk_test_abc", { baseUrl, initialRetryDelay: 20, maxRetryDelay: 100, ...options });

  it("sends the key, and retries a POST on 503 and 409-in-flight with the same Idempotency-Key", async () => {
    replies = [
      problem(503, "upstream_unavailable"),
      problem(409, "idempotency_request_in_progress"),
      { status: 201, body: { proofId: "prf_1" } },
    ];
    const answer = await client().proofs.submit({
      proof: {} as never,
      publicSignals: [],
      mintAmount: "1",
      recipient: "0x0",
      owner: "0x0",
    });
    expect(answer).toEqual({ proofId: "prf_1" });
    expect(seen).toHaveLength(3);
    expect(seen[0]!.headers.authorization).toBe("Bearer sk_test_abc");
    const keys = new Set(seen.map((s) => s.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    // Each POST call has its own key; a caller's own key is sent as given.
    await client().mints.create({ amount: "1", collateralProof: "0x1" } as never, { idempotencyKey: "mine-1" });
    await client().mints.create({ amount: "1", collateralProof: "0x1" } as never);
    expect(seen[3]!.headers["idempotency-key"]).toBe("mine-1");
    expect(seen[4]!.headers["idempotency-key"]).not.toBe([...keys][0]);
    // A GET carries none.
    await client().relay.get();
    expect(seen[5]!.headers["idempotency-key"]).toBeUndefined();
  });

  it("waits at least Retry-After on 429, then gives up after maxNetworkRetries with a RateLimitError", async () => {
    replies = [problem(429, "rate_limited", {}), { status: 200, body: { object: "supply" } }];
    replies[0]!.headers = { ...replies[0]!.headers, "retry-after": "1" };
    await client().ledger.supply();
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);

    seen = [];
    replies = [problem(429, "rate_limited"), problem(429, "rate_limited"), problem(429, "rate_limited")];
    for (const r of replies) r.headers = { ...r.headers, "retry-after": "0" };
    const error = await client({ maxNetworkRetries: 2 })
      .ledger.supply()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(0);
    expect(seen).toHaveLength(3);
  });

  it("retries a shed 503 no sooner than Retry-After, with callers shed together spread above it", async () => {
    // A server shedding load tells every caller it turned away the same Retry-After: back at one instant, they
    // would be shed again. Two callers at the ends of the jitter's draw (Math.random 0 and 0.99).
    const shed = new Zsd("sk_test_abc", { baseUrl, initialRetryDelay: 400, maxRetryDelay: 400 });
    const waits: number[] = [];
    for (const draw of [0, 0.99]) {
      seen = [];
      const reply = problem(503, "overloaded");
      reply.headers = { ...reply.headers, "retry-after": "1" };
      replies = [reply];
      const random = vi.spyOn(Math, "random").mockReturnValue(draw);
      try {
        await shed.keys.create({ name: `drawn ${draw}` });
      } finally {
        random.mockRestore();
      }
      expect(seen).toHaveLength(2);
      expect(seen[1]!.headers["idempotency-key"]).toBe(seen[0]!.headers["idempotency-key"]);
      waits.push(seen[1]!.at - seen[0]!.at);
    }
    // Never sooner than Retry-After; up to half the 400 ms step above it (0.99: 198 ms). Lower bounds only: a
    // loaded machine fires timers late, never early, so a difference of the two waits would measure its load.
    expect(waits[0]).toBeGreaterThanOrEqual(950);
    expect(waits[1], JSON.stringify(waits)).toBeGreaterThanOrEqual(1_150);

    // Bounded: after maxNetworkRetries the 503 is thrown.
    seen = [];
    replies = [problem(503, "overloaded"), problem(503, "overloaded"), problem(503, "overloaded")];
    for (const r of replies) r.headers = { ...r.headers, "retry-after": "0" };
    const error = await client({ maxNetworkRetries: 2 })
      .ledger.supply()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).code).toBe("overloaded");
    expect(seen).toHaveLength(3);
  });

  it("does not sleep through a Retry-After longer than a minute: it throws the RateLimitError at once", async () => {
    // As the Python SDK's max_retry_after: an hour's Retry-After would otherwise hang the call for an hour.
    replies = [problem(429, "rate_limited"), { status: 200, body: { object: "supply" } }];
    replies[0]!.headers = { ...replies[0]!.headers, "retry-after": "3600" };
    const started = Date.now();
    const error = await client()
      .ledger.supply()
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(3600);
    expect(seen).toHaveLength(1);
  }, 10_000);

  it("backs off exponentially with jitter between retries", async () => {
    replies = [problem(500, "internal_error"), problem(502, "bad_gateway"), problem(503, "upstream_unavailable")];
    const zsd = new Zsd("sk_test_abc", { baseUrl, initialRetryDelay: 100, maxRetryDelay: 1_000, maxNetworkRetries: 3 });
    await zsd.ledger.supply();
    const gaps = seen.slice(1).map((s, i) => s.at - seen[i]!.at);
    // Full jitter over half of each step: 50–100 ms, then 100–200, then 200–400.
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
    expect(gaps[2]).toBeGreaterThanOrEqual(195);
  });

  it("maps problems to error classes with the problem and request id, and does not retry a 4xx", async () => {
    const cases: [Reply, unknown][] = [
      [problem(400, "validation_failed", { errors: [{ field: "body.amount", message: "bad" }] }), InvalidRequestError],
      [problem(401, "invalid_api_key"), AuthenticationError],
      [problem(404, "resource_not_found"), NotFoundError],
      [problem(409, "proof_already_used"), ConflictError],
      [problem(422, "idempotency_key_reused"), IdempotencyError],
      [problem(422, "proof_mismatch"), InvalidRequestError],
      [problem(504, "mint_pending", { mintId: "mint_1" }), APIError],
    ];
    for (const [reply, kind] of cases) {
      seen = [];
      replies = [reply];
      const error = await client()
        .mints.get("mint_x")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(kind);
      const body = reply.body as { code: string };
      expect(error).toMatchObject({ status: reply.status, code: body.code, requestId: "req_1", problem: body });
      expect(seen).toHaveLength(1);
    }
    seen = [];
    replies = [problem(400, "validation_failed", { errors: [{ field: "body.amount", message: "bad" }] })];
    const invalid = (await client()
      .mints.get("mint_x")
      .catch((e: unknown) => e)) as InvalidRequestError;
    expect(invalid.errors).toEqual([{ field: "body.amount", message: "bad" }]);
  });

  it("says a server that cannot be reached is a connection error, after retrying", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const started = Date.now();
    const error = await new Zsd("sk_test_abc", {
      baseUrl: `http://127.0.0.1:${port}`,
      initialRetryDelay: 20,
      maxNetworkRetries: 2,
    }).ledger
      .supply()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APIConnectionError).code).toBe("connection_error");
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
  });

  it("keeps the key out of a logged or serialised client", () => {
    const key = `sk_test_${"K".repeat(48)}`;
    const zsd = new Zsd(key, { baseUrl });
    expect(inspect(zsd, { depth: Infinity, showHidden: true })).not.toContain(key);
    expect(inspect(zsd.mints, { depth: Infinity })).not.toContain(key);
    expect(JSON.stringify(zsd)).not.toContain(key);
  });

  it("needs a key, and a base address for a production key", () => {
    expect(() => new Zsd(undefined)).toThrow(/API key is required/);
    expect(() => new Zsd("sk_live_abc")).toThrow(/baseUrl/);
    expect(() => new Zsd("sk_live_abc", { baseUrl })).not.toThrow();
  });
});

// A prover downloads the circuit from the API it mints through: an API shedding load answers that
// download 503 with Retry-After as it answers any request, and the prover waits and asks again.
describe("the JS client's circuit download", () => {
  it("retries a shed 503 for the circuit's wasm, then proves", async () => {
    const note = createNote();
    const amountZat = 300_000_000n;
    const leaf = depositLeaf(amountZat, noteCommitment(note));
    const address = "0x00000000000000000000000000000000000000aa";
    const asked: string[] = [];
    let wasmShed = false;
    const files = { wasm: readFileSync(CIRCUIT.wasm), zkey: readFileSync(CIRCUIT.zkey) };
    const answers: Record<string, unknown> = {
      "/v1/relay": {
        relayer: address,
        chainId: 31337,
        contracts: { StableMinter: { address } },
        minting: {},
        fee: { minimum: "0" },
        circuit: {
          wasm: { url: "/v1/relay/circuit/collateral.wasm" },
          zkey: { url: "/v1/relay/circuit/collateral.zkey" },
        },
      },
      "/v1/deposits/leaves": {
        data: [
          { index: 0, leaf: leaf.toString(), noteCommitment: noteCommitment(note).toString(), amountZat: "300000000" },
        ],
        root: new DepositTree([leaf]).root.toString(),
        next: null,
      },
      "/v1/relay/anonymity": { candidates: 100 },
    };
    const server = createServer((req, res) => {
      const path = new URL(req.url!, "http://x").pathname;
      asked.push(path);
      if (path.endsWith("collateral.wasm") && !wasmShed) {
        wasmShed = true;
        res.writeHead(503, { "content-type": "application/problem+json", "retry-after": "0" });
        return res.end(JSON.stringify(problem(503, "overloaded").body));
      }
      if (path.endsWith("collateral.wasm")) return res.end(files.wasm);
      if (path.endsWith("collateral.zkey")) return res.end(files.zkey);
      const body = path.startsWith("/v1/nullifiers/") ? { spent: false } : answers[path];
      res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? problem(404, "not_found").body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const zsd = new Zsd("sk_test_abc", {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        initialRetryDelay: 20,
      });
      const proved = await zsd.prove({ note, amount: "1", floor: "1", recipient: address });
      expect(proved.publicSignals).toHaveLength(5);
      expect(asked.filter((p) => p.endsWith("collateral.wasm"))).toHaveLength(2);
    } finally {
      await releaseProver();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
