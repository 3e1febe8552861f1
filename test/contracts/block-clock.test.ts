// The dev chain's block clock (scripts/lib/block-clock.ts): at rest it mines
// only a heartbeat, where interval mining made a block a second that the
// indexer fetched and stored for nothing; a transaction's block makes it mine
// a block per busyBlockMs for busyForMs, so that governance's block-counted
// voting still passes on `npm start`'s chain.
import { afterAll, describe, expect, it } from "vitest";
import { BlockClock } from "../../scripts/lib/block-clock.ts";
import { type RunningNode, startHardhatNode } from "../../scripts/lib/hardhat-node.ts";

async function rpc<T>(node: RunningNode, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(node.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
}
const head = async (node: RunningNode) => Number(BigInt(await rpc<string>(node, "eth_blockNumber")));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; !what() && Date.now() < end;) await sleep(50);
  return what();
};

describe("the dev chain's block clock", () => {
  let node: RunningNode;
  let clock: BlockClock | undefined;
  afterAll(async () => {
    clock?.stop();
    await node?.stop();
  });

  it("mines only a heartbeat at rest, and a block per busyBlockMs for busyForMs after a transaction", async () => {
    node = await startHardhatNode(undefined, { wallClock: true });
    const errors: unknown[] = [];
    clock = new BlockClock({
      rpcUrl: node.rpcUrl,
      busyBlockMs: 200,
      busyForMs: 2_000,
      heartbeatMs: 4_000,
      checkMs: 100,
      onError: (error) => errors.push(error),
    });
    const start = await head(node);
    clock.start();
    // At rest: no block before the heartbeat is due.
    await sleep(2_500);
    expect(await head(node)).toBe(start);
    expect(clock.busy).toBe(false);
    // The heartbeat comes.
    expect(await until(() => clock!.mined >= 1, 4_000)).toBe(true);

    // A transaction's block (automine) makes the chain busy: blocks follow at busyBlockMs.
    const [from, to] = await rpc<string[]>(node, "eth_accounts");
    await rpc(node, "eth_sendTransaction", [{ from, to, value: "0x1" }]);
    expect(await until(() => clock!.busy, 2_000)).toBe(true);
    const busyFrom = clock.mined;
    await sleep(1_500);
    // Seven at 200 ms in 1.5 s; at least three on a loaded machine.
    expect(clock.mined - busyFrom).toBeGreaterThanOrEqual(3);

    // Its own blocks do not keep it busy: busyForMs after the transaction it is at rest again.
    expect(await until(() => !clock!.busy, 4_000)).toBe(true);
    await sleep(300);
    const restFrom = clock.mined;
    await sleep(2_000);
    expect(clock.mined - restFrom).toBeLessThanOrEqual(1);
    expect(errors).toEqual([]);
  });

  it("says nothing when the node closed an idle socket under a busy event loop, and tells a node that is down", async () => {
    const own = await startHardhatNode(undefined, { wallClock: true });
    const errors: Error[] = [];
    let stopped = false;
    const quiet = new BlockClock({
      rpcUrl: own.rpcUrl,
      busyBlockMs: 200,
      busyForMs: 2_000,
      heartbeatMs: 60_000,
      checkMs: 2_000,
      onError: (error) => errors.push(error as Error),
    });
    try {
      quiet.start();
      // Between the first read and the second, which comes due while the loop is blocked.
      await sleep(1_000);
      // Longer than the node's keep-alive timeout (5 s) without a turn of the event loop, as
      // `npm start` does while it starts the indexer: the next read goes out on the socket the node closed.
      for (const end = Date.now() + 5_500; Date.now() < end;);
      await sleep(1_000);
      expect(errors.map((error) => error.message)).toEqual([]);

      await own.stop();
      stopped = true;
      expect(await until(() => errors.length > 0, 5_000)).toBe(true);
      expect(errors[0]!.message).toMatch(/ECONNREFUSED|socket hang up|ECONNRESET/);
    } finally {
      quiet.stop();
      // A node killed by a signal has no exit code, and a second stop() would wait for an exit that came.
      if (!stopped) await own.stop();
    }
  });
});
