// The dev indexer's preload (indexer/coarse-event-loop-delay.mjs): Ponder's
// event-loop delay histogram, asked for at a 1 ms resolution, samples every
// 20 ms instead (a thousand wake-ups a second were most of the idle
// indexer's CPU). Checked in a child process, as the dev stack loads it.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/paths.ts";

const SCRIPT = `
const { monitorEventLoopDelay } = require("node:perf_hooks");
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
setTimeout(() => { h.disable(); console.log(h.count); }, 1000);
`;
const samples = (args: string[]) =>
  Number(execFileSync(process.execPath, [...args, "-e", SCRIPT], { encoding: "utf8" }));

describe("the indexer's coarse event-loop delay", () => {
  it("samples every 20 ms what asks to be sampled every millisecond", () => {
    const preload = pathToFileURL(join(ROOT, "indexer", "coarse-event-loop-delay.mjs")).href;
    // About 1,000 samples a second unpatched (fewer on a loaded machine); about 50 patched.
    expect(samples([])).toBeGreaterThan(200);
    expect(samples([`--import=${preload}`])).toBeLessThanOrEqual(60);
  });
});
