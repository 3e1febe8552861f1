// Runs the contracts' random-sequence invariant suite (test/contracts/invariants.test.ts)
// for longer, or replays a counterexample:
//   npm run fuzz:contracts -- --runs 200 --steps 40 --seed 7
//   npm run fuzz:contracts -- --runs 200 --steps 40 --seed 7 --path "12:3:1" --replay "ZA/x:N"
// (a counterexample's seed, path and /*replayPath="..."*/, with the runs and steps it was found with).
// The flags become FUZZ_RUNS, FUZZ_STEPS, FUZZ_SEED, FUZZ_PATH and FUZZ_REPLAY for vitest.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string" },
    steps: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    replay: { type: "string" },
  },
});
const env: NodeJS.ProcessEnv = { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" };
if (values.runs) env.FUZZ_RUNS = values.runs;
if (values.steps) env.FUZZ_STEPS = values.steps;
// A random seed unless given: the suite prints it with any counterexample.
env.FUZZ_SEED = values.seed ?? env.FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
if (values.path) env.FUZZ_PATH = values.path;
if (values.replay) env.FUZZ_REPLAY = values.replay;
console.log(`fuzz:contracts runs=${env.FUZZ_RUNS ?? 14} steps=${env.FUZZ_STEPS ?? 40} seed=${env.FUZZ_SEED}`);

const child = spawn("npx", ["vitest", "run", "test/contracts/invariants.test.ts"], { stdio: "inherit", env });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
