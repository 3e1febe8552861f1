// At rest the relay worker passes every RELAY_IDLE_POLL_MS, not every
// RELAY_POLL_MS: the idle stack cost 0.16 of a core in the API alone, most of
// it passes that found nothing. A request that changes state wakes it at once,
// and it polls fast for RELAY_BUSY_MS so that its transaction is seen mined.
import { describe, expect, it } from "vitest";
import { type System, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RunningApi, queueMint, settledMint, useRelayApi } from "../helpers.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("relay worker at rest", () => {
  let s: System;
  let api: RunningApi;

  useRelayApi(
    {
      env: {
        RELAY_POLL_MS: "20",
        RELAY_IDLE_POLL_MS: "60000",
        // Shorter than any transaction takes to be mined: the worker must keep polling for
        // the transaction it sent, not for a fixed time after the request (under load the
        // busy time once ended first, and the mint waited for the idle poll a minute away).
        RELAY_BUSY_MS: "1",
      },
    },
    (stack) => ({ s, api } = stack),
  );

  it("slows to the idle poll once busy time is over, and a request that queues work wakes it", async () => {
    const worker = api.worker!;
    worker.start();
    // Past RELAY_BUSY_MS (and a pass that may have started just before it
    // ended): then at most one pass in 5 s at a 60 s idle poll, where the busy
    // poll would have made dozens even on a loaded machine.
    await sleep(3_000);
    const idleFrom = worker.passes;
    await sleep(5_000);
    expect(worker.passes - idleFrom).toBeLessThanOrEqual(1);

    // A mint queued through the API is relayed now, not at the next idle pass a minute away.
    const { mintId } = await queueMint(api, s, { recipient: accounts.bob.address, mintAmount: ZSD });
    const queuedAt = Date.now();
    const mint = await settledMint(api, mintId);
    expect(mint.status).toBe("confirmed");
    expect(Date.now() - queuedAt).toBeLessThan(30_000);
  });
});
