// The dev stack's chain keeps wall time: `npm start` mines a block a second
// and one per transaction, and Hardhat by default gives every block at least
// its parent's timestamp + 1 s, so a busy chain ran ahead for good (67 s
// after 30 minutes; asOfBlockTime sat in the future). The mechanism is checked
// here with a burst of blocks rather than half an hour of use.
import { afterAll, describe, expect, it } from "vitest";
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

/** Mines `count` blocks as fast as the node takes them; how far the last one's time is ahead of the wall clock (s). */
async function burst(node: RunningNode, count: number): Promise<number> {
  for (let i = 0; i < count; i++) await rpc(node, "evm_mine");
  const block = await rpc<{ timestamp: string }>(node, "eth_getBlockByNumber", ["latest", false]);
  return Number(BigInt(block.timestamp)) - Date.now() / 1000;
}

describe("the dev chain's clock", () => {
  const nodes: RunningNode[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });

  it("follows wall time however fast blocks come (the dev stack's node), where Hardhat's default runs ahead", async () => {
    const [wall, plain] = await Promise.all([startHardhatNode(undefined, { wallClock: true }), startHardhatNode()]);
    nodes.push(wall, plain);
    // 60 blocks in a second or two: a minute of drift by Hardhat's default rule.
    expect(await burst(wall, 60)).toBeLessThan(2);
    expect(await burst(plain, 60)).toBeGreaterThan(30);
  });
});
