// Every operation of the API has a method in the JS client: a route added
// without one fails here. Read from the types generated from the OpenAPI
// document, and from the resources' source.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

/** Operations a client does not call: liveness probes, and the circuit's files (fetched by the mint flow). */
const NOT_IN_THE_CLIENT = new Set(["getHealth", "getReadiness", "getCircuitWasm", "getCircuitProvingKey"]);

describe("the JS client's coverage of the API", () => {
  it("has a method for every operation", () => {
    const generated = readFileSync(join(ROOT, "sdk", "js", "src", "generated", "openapi.ts"), "utf8");
    const operations = generated.split(/^export interface operations \{$/m)[1]!;
    const ids = [...operations.matchAll(/^ {4}([A-Za-z]+): \{$/gm)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(40);
    const resources = readFileSync(join(ROOT, "sdk", "js", "src", "client", "resources.ts"), "utf8");
    const used = new Set([...resources.matchAll(/(?:Answer|Body|Query)<"([A-Za-z]+)"/g)].map((m) => m[1]!));
    // Webhooks (operations named …Event) are the API's calls to agents, not the client's to the API.
    const calls = ids.filter((id) => !id.endsWith("Event"));
    expect(calls.filter((id) => !used.has(id) && !NOT_IN_THE_CLIENT.has(id))).toEqual([]);
  });
});
