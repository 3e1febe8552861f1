// The Python SDK's TypedDicts are the API's schemas: sdk/python/zsd/_generated.py
// is what scripts/codegen-python.ts makes of the current OpenAPI document, so a
// changed route fails here until `npm run codegen:python` is run again.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";
import { pythonTypes, sandboxDocument } from "../../scripts/lib/python-types.ts";

describe("the Python SDK's generated types", () => {
  it("are what the current OpenAPI document generates", async () => {
    const committed = readFileSync(join(ROOT, "sdk", "python", "zsd", "_generated.py"), "utf8");
    const document = await sandboxDocument();
    expect(committed, "run `npm run codegen:python`").toBe(pythonTypes(document));
    // Every operation of the document is listed, so the SDK's coverage test sees a new one.
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    for (const op of operations) expect(committed).toContain(`"${op.operationId}": (`);
  });
});
