// JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused
// with 415 before anything decodes it, so no other decoder (UTF-7's "+ADw-"
// is "<") can turn bytes that passed a filter into something else; and bytes
// that are not UTF-8 are refused with 400 rather than stored as U+FFFD.
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

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

  it("refuses bytes that are not UTF-8 with a 400 problem saying so, whatever the charset, and creates nothing", async () => {
    const before = await keyCount();
    const bytes = (...parts: (string | number[])[]) =>
      new Uint8Array(Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p)))));
    for (const [what, body, offset] of [
      ["Latin-1 é", bytes('{"name":"caf', [0xe9], '"}'), 12],
      ["overlong /", bytes('{"name":"a', [0xc0, 0xaf], '"}'), 10],
      ["encoded lone surrogate", bytes('{"name":"', [0xed, 0xa0, 0x80], '"}'), 9],
      ["a sequence cut short at the end", bytes('{"name":"x"}', [0xe2, 0x82]), 12],
      ["a key in Latin-1", bytes('{"n', [0xe4], 'me":"x"}'), 3],
      ["a stray continuation byte", bytes('{"name":"', [0x80], '"}'), 9],
    ] as const) {
      for (const contentType of ["application/json", "application/json; charset=utf-8"]) {
        for (const encoding of ["identity", "gzip"]) {
          const where = `${what}, ${contentType}, ${encoding}`;
          const response = await api.call("/v1/keys", {
            method: "POST",
            headers: { "content-type": contentType, "content-encoding": encoding },
            body: encoding === "gzip" ? new Uint8Array(gzipSync(body)) : body,
          });
          expect(response.status, where).toBe(400);
          expect(response.headers.get("content-type"), where).toMatch(/^application\/problem\+json/);
          const problem = (await response.json()) as { code: string; detail: string };
          expect(problem.code, where).toBe("malformed_body");
          expect(problem.detail, where).toMatch(/not valid UTF-8/);
          expect(problem.detail, where).toContain(`at offset ${offset}`);
        }
      }
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
