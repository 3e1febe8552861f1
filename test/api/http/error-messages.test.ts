// Problems whose words misled a newcomer: each says which
// rule the request broke and what to do, not a rule it kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, json, openStorage, startApi } from "../helpers.ts";

type Problem = {
  code: string;
  detail: string;
  errors?: { field: string; message: string }[];
  [member: string]: unknown;
};

async function problem(response: Response, status: number): Promise<Problem> {
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Problem;
  expect(response.status, JSON.stringify(body)).toBe(status);
  return body;
}

const message = (p: Problem, field: string) => p.errors?.find((e) => e.field === field)?.message;

describe("problems that say what is wrong", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let sandbox: RunningApi;
  let production: RunningApi;
  let named: RunningApi;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    // Neither knows the other's base address, as in `npm start`.
    sandbox = await startApi(storage.db);
    production = await startApi(storage.db, { ENVIRONMENT: "production" });
    named = await startApi(storage.db, { PRODUCTION_BASE_URL: "https://api.zsd.test/v1" });
  });
  afterAll(async () => {
    await sandbox?.close();
    await production?.close();
    await named?.close();
    await storage?.close();
  });

  it("tells a key with the right prefix what is wrong with the rest, and a well-shaped one that it is unknown", async () => {
    const short = await problem(await sandbox.call("/v1/supply", { key: "sk_test_wrongwrongwrong" }), 401);
    expect(short.code).toBe("malformed_api_key");
    expect(short.detail).toContain("15 characters after sk_test_, where a key has 48");
    expect(short.detail).toContain("cut short or mistyped");
    expect(short.detail).not.toContain("wrongwrong");

    const odd = await problem(await sandbox.call("/v1/supply", { key: `sk_live_${"a".repeat(47)}!` }), 401);
    expect(odd.detail).toContain("characters other than letters and digits after sk_live_");
    const other = await problem(await sandbox.call("/v1/supply", { key: "pk_test_123" }), 401);
    expect(other.detail).toContain("starts with sk_test_ (sandbox) or sk_live_ (production)");

    const unknown = await problem(await sandbox.call("/v1/supply", { key: `sk_test_${"A1".repeat(24)}` }), 401);
    expect(unknown.code).toBe("invalid_api_key");
    expect(unknown.detail).toMatch(/^No API key has this secret, though it is shaped like one/);
  });

  it("tells an id of the wrong shape what follows its prefix", async () => {
    const p = await problem(await sandbox.call("/v1/mints/mint_nope"), 400);
    expect(message(p, "params.mintId")).toBe(
      "a mint id: mint_ followed by exactly 20 letters and digits (A-Z, a-z, 0-9), e.g. mint_4Hn8pQ2rT6vX1zB3cD5f",
    );
    const key = await problem(await sandbox.call("/v1/keys/key_x", { method: "DELETE" }), 400);
    expect(message(key, "params.keyId")).toContain("key_ followed by exactly 16 letters and digits");
  });

  it("tells a negative amount it must be positive, and each other mistake its own rule", async () => {
    const deposit = (amount: string) => sandbox.call("/v1/sandbox/deposits", json({ amount, noteCommitment: "12345" }));
    expect(message(await problem(await deposit("-1"), 400), "body.amount")).toBe(
      'a ZEC amount must be positive, e.g. "1.5"',
    );
    expect(message(await problem(await deposit("1.123456789"), 400), "body.amount")).toBe(
      'a ZEC amount has at most 8 decimals, e.g. "1.5"',
    );
    expect(message(await problem(await deposit("1e3"), 400), "body.amount")).toMatch(
      /^a ZEC amount must be plain decimal digits/,
    );
    expect(message(await problem(await deposit("123456789012"), 400), "body.amount")).toContain(
      "at most 11 digits before the point",
    );
    const redeem = await problem(await sandbox.call("/v1/redeem", json({ amount: "-1" })), 400);
    expect(message(redeem, "body.amount")).toBe('a ZSD amount must be positive, e.g. "100.00"');
  });

  it("names where the key's environment answers, or says this server is not told", async () => {
    const unnamed = await problem(await sandbox.call("/v1/supply", { key: production.secret }), 401);
    expect(unnamed).toMatchObject({ code: "wrong_environment", keyEnvironment: "production" });
    expect(unnamed).not.toHaveProperty("baseUrl");
    expect(unnamed.detail).toContain("This server is not told where the production API answers");
    expect(unnamed.detail).toContain("PRODUCTION_BASE_URL is unset");
    expect(unnamed.detail).toContain("or use a sk_test_… key with this server");

    const withAddress = await problem(await named.call("/v1/supply", { key: production.secret }), 401);
    expect(withAddress).toMatchObject({ baseUrl: "https://api.zsd.test/v1" });
    expect(withAddress.detail).toContain("Call https://api.zsd.test/v1 with it, or use a sk_test_… key");
    const sandboxKey = await problem(await production.call("/v1/supply", { key: sandbox.secret }), 401);
    expect(sandboxKey.detail).toContain("SANDBOX_BASE_URL is unset");
    expect(sandboxKey.detail).toContain("or use a sk_live_… key with this server");
  });

  it("takes environment on POST /v1/keys: its own, and refuses the other saying why and where", async () => {
    const own = await sandbox.call("/v1/keys", json({ name: "ci", environment: "sandbox" }));
    expect(own.status).toBe(201);
    expect(await own.json()).toMatchObject({ environment: "sandbox", prefix: "sk_test_" });

    const before = await sandbox.keys.list(sandbox.accountId);
    const refused = await problem(
      await sandbox.call("/v1/keys", json({ name: "prod", environment: "production" })),
      403,
    );
    expect(refused).toMatchObject({ code: "key_environment_not_allowed", keyEnvironment: "sandbox" });
    expect(refused.detail).toContain("may not make production keys");
    expect(refused.detail).toContain("dashboard's API Keys tab");
    expect(await sandbox.keys.list(sandbox.accountId)).toEqual(before);

    const live = await production.call("/v1/keys", json({ name: "prod", environment: "production" }));
    expect(live.status).toBe(201);
    expect(await live.json()).toMatchObject({ environment: "production", prefix: "sk_live_" });
  });

  it("checks a nullifier's shape before asking the chain", async () => {
    const word = await problem(await sandbox.call("/v1/nullifiers/abc"), 400);
    expect(message(word, "params.nullifierHash")).toContain("a decimal field element");
    const huge = await problem(await sandbox.call(`/v1/nullifiers/${2n ** 256n}`), 400);
    expect(message(huge, "params.nullifierHash")).toContain("below the BN254 field modulus");
    // No chain here: the well-shaped question is answered as unavailable, not guessed.
    expect((await problem(await sandbox.call("/v1/nullifiers/12345"), 503)).code).toBe("upstream_unavailable");
  });
});
