// The indexer at rest (indexer/resting-transport.ts): once no new head has
// come for QUIET_MS, Ponder's 100 ms polls are answered with the head it has
// and the node is asked once per RPC_IDLE_POLL_MS (it was asked ten times a
// second: 0.06 of a core between the indexer and the node on an idle dev
// stack); the first new head brings the polls back to the node.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { QUIET_MS, restingTransport } from "../../indexer/resting-transport.ts";
import { type RunningNode, startHardhatNode } from "../../scripts/lib/hardhat-node.ts";
import { type RunningIndexer, indexedBlock, startIndexer, waitForBlock } from "../../scripts/lib/indexer-process.ts";
import { deploySystem } from "../helpers/fixtures.ts";
import { type ChainProxy, startChainProxy } from "./chain-proxy.ts";

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: T }).result;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Block = { number: string; hash: string };

describe("the resting transport", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("answers polls from the last head once quiet, asks the node every idlePollMs, and follows every poll after a new head", async () => {
    const node: RunningNode = await startHardhatNode();
    cleanup.push(() => node.stop());
    let t = 1_000_000;
    const transport = restingTransport({ url: node.rpcUrl, idlePollMs: 1_000, now: () => t });
    cleanup.push(() => (transport as unknown as { close(): void }).close());
    const { request } = transport({ retryCount: 0 });
    const latest = () => request({ method: "eth_getBlockByNumber", params: ["latest", false] }) as Promise<Block>;

    const first = await latest();
    t += QUIET_MS;
    expect((await latest()).hash).toBe(first.hash);
    // Quiet: a new block is not asked for until idlePollMs has passed since the last question.
    await rpc(node.rpcUrl, "evm_mine");
    t += 100;
    expect((await latest()).hash).toBe(first.hash);
    t += 900;
    const second = await latest();
    expect(Number(second.number)).toBe(Number(first.number) + 1);
    // A new head ends the rest: the next block is seen at the next poll.
    await rpc(node.rpcUrl, "evm_mine");
    t += 100;
    expect(Number((await latest()).number)).toBe(Number(second.number) + 1);
    // Each form of the question has its own answer: with transactions, or their hashes only.
    const [from, to] = await rpc<string[]>(node.rpcUrl, "eth_accounts");
    await rpc(node.rpcUrl, "eth_sendTransaction", [{ from, to, value: "0x1" }]);
    type WithTransactions = { transactions: unknown[] };
    const withTransactions = async () =>
      (await request({ method: "eth_getBlockByNumber", params: ["latest", true] })) as WithTransactions;
    t += 100;
    await withTransactions();
    t += QUIET_MS;
    expect(typeof (await withTransactions()).transactions[0]).toBe("object");
    t += 100;
    const hashes = (await request({ method: "eth_getBlockByNumber", params: ["latest", false] })) as WithTransactions;
    expect(typeof hashes.transactions[0]).toBe("string");
    // Other methods always go to the node; its errors keep their JSON-RPC code (Hardhat: -32004, not supported).
    expect(await request({ method: "eth_chainId" })).toBe("0x7a69");
    await expect(request({ method: "eth_noSuchMethod" })).rejects.toMatchObject({ code: -32004 });
  });

  it("lets Ponder follow the chain, asking the node about once a second at rest", async () => {
    const s = await deploySystem();
    const dir = mkdtempSync(join(tmpdir(), "zsd-resting-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const deploymentFile = join(dir, "deployment.json");
    writeFileSync(deploymentFile, JSON.stringify(s.deployment));
    const proxy: ChainProxy = await startChainProxy(s.rpcUrl);
    cleanup.push(() => proxy.close());
    const indexer: RunningIndexer = await startIndexer({
      rpcUrl: proxy.url,
      deploymentFile,
      pgliteDirectory: join(dir, "pglite"),
      schema: "zsd_resting",
      env: { RPC_IDLE_POLL_MS: "1000" },
    });
    cleanup.push(() => indexer.stop());
    const head = async () => BigInt(await rpc<string>(s.rpcUrl, "eth_blockNumber"));
    await waitForBlock(indexer.url, await head());

    // Past QUIET_MS without a block: the node hears of the indexer about once a second, not ten times.
    await sleep(QUIET_MS + 1_000);
    const polls = () => proxy.requests.get("eth_getBlockByNumber") ?? 0;
    const from = polls();
    await sleep(5_000);
    expect(polls() - from).toBeLessThanOrEqual(8);

    // A new block is indexed within the idle poll (and Ponder's work), then every block at once.
    await rpc(s.rpcUrl, "evm_mine");
    const target = await head();
    expect(await waitForBlock(indexer.url, target, { timeoutMs: 10_000 })).toBeLessThan(5_000);
    await rpc(s.rpcUrl, "evm_mine");
    expect(await waitForBlock(indexer.url, target + 1n, { timeoutMs: 10_000 })).toBeLessThan(2_000);
    expect(await indexedBlock(indexer.url)).toBe(target + 1n);
  });
});
