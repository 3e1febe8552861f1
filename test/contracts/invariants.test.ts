// Model-based random sequences over the money invariants of the contracts,
// with real calls and real proofs on the local Hardhat node.
//
// Every proof a run may use is made once, before the first run, against notes
// deposited then (mints, top-ups bound to positions 1..3, note withdrawals);
// the chain is snapshotted there and each run reverts to that snapshot, so each
// proof is valid again in every run (nullifier unspent, root known: maxRootAge
// is a day and the file lasts minutes). fast-check then draws a sequence of
// steps (deposits, mints, top-ups, repays, withdrawals, closes, liquidations,
// redistributions, redemptions of every size, payouts paid, failed and
// redirected, note withdrawals, change and released notes inserted from the queue by anyone
// (stretches read before an earlier insertion included; refused for leaves that
// are not the queued ones or a stretch off the head), price moves and crashes,
// feeds broken, disagreeing or walked by one updater,
// governance through the impersonated timelock); each step predicts its own outcome from the chain
// state before it (which error, or what changes), and after it the chain is
// checked against the model kept here and against the invariants below.
//
// Custody is modelled as the payouts relay runs it: each new payout's envelope
// is read from its PayoutRequested event and opened with the development
// seal key for the payout's owner; one that does not open, holds no payable
// address, or repeats an envelope an earlier payout opened is failed
// (unreadable_address). What the test sealed, and for whom, is kept apart as
// the model's intent, and the two must agree on every payout: envelopes copied
// onto another owner's redemption (before or after their owner's own) and
// replayed by their owner are among the steps.
//
//   FUZZ_RUNS (14), FUZZ_STEPS (40 at most per sequence), FUZZ_SEED (fixed),
//   FUZZ_PATH and FUZZ_REPLAY (replay a counterexample: its path and replayPath):
//   `npm run fuzz:contracts -- --runs 200 --steps 40 --seed 7`.
//
// The steps are in invariants/steps/, the model (and initialModel, each run's start) in invariants/model.ts,
// the checks in invariants/checks.ts; invariants/README.md says how a run goes and how to add a step.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseProver } from "@zsd/sdk";
import { BASE_PRICE } from "./invariants/constants.ts";
import { WINDOW, post } from "./invariants/feeds.ts";
import { type Context, setUp } from "./invariants/context.ts";
import { read } from "./invariants/chain.ts";
import { initialModel } from "./invariants/model.ts";
import { summary } from "./invariants/stats.ts";
import { World } from "./invariants/world.ts";
import { steps } from "./invariants/arbitraries.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 14);
const STEPS = Number(process.env.FUZZ_STEPS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const PATH = process.env.FUZZ_PATH || undefined;
/** The commands' own replay hint: the replayPath="..." printed after a counterexample. */
const REPLAY = process.env.FUZZ_REPLAY || undefined;

describe("money invariants under random sequences", () => {
  let ctx: Context;

  beforeAll(async () => {
    ctx = await setUp();
  }, 300_000);

  afterAll(async () => {
    await releaseProver();
    console.log(summary());
  });

  it(
    `keeps the books over ${RUNS} random sequences of up to ${STEPS} steps (seed ${SEED})`,
    async () => {
      const { s } = ctx;
      const world = new World(ctx);
      const initial = await read(ctx);
      await fc.assert(
        fc.asyncProperty(
          fc.commands(steps, { maxCommands: STEPS, size: "max", replayPath: REPLAY }),
          async (commands) => {
            await s.revert(ctx.base);
            ctx.base = await s.snapshot();
            await s.testClient.impersonateAccount({ address: ctx.timelock });
            // A fresh price on both feeds (the snapshot's may be older than maxPriceAge by now).
            const fresh = { answer: BASE_PRICE, dating: "fresh" as const };
            await post(ctx, "p", fresh, fresh);
            await post(ctx, "q", fresh, fresh);
            // The reference as the snapshot left it; its window runs on well past a run, except where
            // a walk moves the clock (the model then predicts each move of it).
            const [price, pending, since] = await s.read.priceFeed.read.referencePrice();
            const now = (await s.publicClient.getBlock()).timestamp;
            expect(now < since + WINDOW, "the reference's window outlasts the run's start").toBe(true);
            world.chain = undefined;
            const model = initialModel(ctx, initial, { feed: fresh, reference: { price, pending, since } });
            await fc.asyncModelRun(() => ({ model, real: world }), commands);
          },
        ),
        { numRuns: RUNS, seed: SEED, path: PATH, verbose: 1 },
      );
    },
    Math.max(120_000, RUNS * STEPS * 3_000),
  );
});
