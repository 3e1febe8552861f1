// Writes the JS SDK's types generated from the API's OpenAPI document
// (openapi-typescript) into sdk/js/src/generated/openapi.ts: the SDK's types
// are the API's schemas, never a second hand-written copy. test/sdk/openapi-types.test.ts
// fails when a route changed and this was not run again.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib/paths.ts";
import { generatedOpenApi } from "./lib/openapi.ts";

const { types } = await generatedOpenApi();
const out = join(ROOT, "sdk", "js", "src", "generated", "openapi.ts");
writeFileSync(out, types);
console.log(`wrote ${out}`);
process.exit(0);
