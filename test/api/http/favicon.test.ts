// The API serves an icon at /favicon.ico (browsers ask for it on every page of
// the docs and the dashboard), a real one that decodes, not a 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

describe("favicon", () => {
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

  it("answers /favicon.ico with an ICO image, without a key", async () => {
    const response = await fetch(`${api.url}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)/);
    expect(response.headers.get("cache-control")).toContain("max-age");
    const icon = Buffer.from(await response.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), one image of 32×32 whose PNG data lies where the entry says.
    expect([icon.readUInt16LE(0), icon.readUInt16LE(2), icon.readUInt16LE(4)]).toEqual([0, 1, 1]);
    expect([icon[6], icon[7]]).toEqual([32, 32]);
    const size = icon.readUInt32LE(14);
    const offset = icon.readUInt32LE(18);
    expect(offset + size).toBe(icon.length);
    expect(icon.subarray(offset, offset + 8)).toEqual(Buffer.from("\x89PNG\r\n\x1a\n", "latin1"));
  });
});
