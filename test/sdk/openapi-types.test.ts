// The JS SDK's types are generated from the API's OpenAPI document: a route
// changed without `npm run codegen:openapi` fails here, not in a user's build.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generatedOpenApi } from "../../scripts/lib/openapi.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

describe("the SDK's generated API types", () => {
  it("are what the current OpenAPI document generates", async () => {
    const { types } = await generatedOpenApi();
    const committed = readFileSync(join(ROOT, "sdk", "js", "src", "generated", "openapi.ts"), "utf8");
    expect(committed === types, "sdk/js/src/generated/openapi.ts is stale: run `npm run codegen:openapi`").toBe(true);
  });
});
