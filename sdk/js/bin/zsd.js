#!/usr/bin/env node
// The zsd command line. The SDK ships as TypeScript source: tsx runs it.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
