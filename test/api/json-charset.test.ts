// JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused
// with 415 before anything decodes it, so no other decoder (UTF-7's "+ADw-"
// is "<") can turn bytes that passed a filter into something else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, openStorage, startApi } from "./helpers.ts";

describe("request bodies are UTF-8 JSON only", () => {
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let api: RunningApi;

  beforeAll(async () => {
    storage = await openStorage("postgres");
    api = await startApi(storage.db);
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
  });

  const keyCount = async () => ((await (await api.call("/v1/keys")).json()) as { data: unknown[] }).data.length;

  const post = (contentType: string, body: string | Uint8Array<ArrayBuffer>) =>
    api.call("/v1/keys", { method: "POST", headers: { "content-type": contentType }, body });

  it("answers another charset with a 415 problem, and creates nothing", async () => {
    const before = await keyCount();
    for (const [contentType, body] of [
      // UTF-7 "+ACI-" is a quote: this decodes to {"name":"utf7"}.
      ["application/json; charset=utf-7", "{+ACI-name+ACI-:+ACI-utf7+ACI-}"],
      ["application/json; charset=UTF-7", '{"name":"utf7"}'],
      ["application/json; charset=utf-16le", new Uint8Array(Buffer.from('{"name":"utf16"}', "utf16le"))],
      ["application/json; charset=utf-16", new Uint8Array(Buffer.from('\ufeff{"name":"utf16"}', "utf16le"))],
      ["application/json; charset=utf-32", '{"name":"utf32"}'],
      ["application/json; charset=iso-8859-1", '{"name":"latin1"}'],
      ["application/json; charset=utf8", '{"name":"no hyphen"}'],
      ['application/json; charset="utf-7"', '{"name":"quoted"}'],
    ] as const) {
      const response = await post(contentType, body);
      expect(response.status, contentType).toBe(415);
      expect(response.headers.get("content-type"), contentType).toMatch(/^application\/problem\+json/);
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code, contentType).toBe("unsupported_media_type");
      expect(problem.detail, contentType).toMatch(/UTF-8/);
    }
    expect(await keyCount()).toBe(before);
  });

  it("takes UTF-8 however the charset is spelled, and a body with no charset", async () => {
    for (const contentType of [
      "application/json",
      "application/json; charset=utf-8",
      "application/json; charset=UTF-8",
      "application/json;charset=Utf-8",
      'application/json; charset="utf-8"',
    ]) {
      const response = await post(contentType, '{"name":"caf\u00e9"}');
      expect(response.status, contentType).toBe(201);
      expect(((await response.json()) as { name: string }).name).toBe("caf\u00e9");
    }
  });
});
