// Writes sdk/python/zsd/_generated.py, the Python SDK's TypedDicts, from the
// API's OpenAPI document. test/sdk/python-types.test.ts fails when a route
// changed and this was not run again.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib/paths.ts";
import { pythonTypes, sandboxDocument } from "./lib/python-types.ts";

const out = join(ROOT, "sdk", "python", "zsd", "_generated.py");
writeFileSync(out, pythonTypes(await sandboxDocument()));
console.log(`wrote ${out}`);
process.exit(0);
