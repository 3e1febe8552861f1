// What the liquidation keeper reads: a pass at a block it already read whole, and found nothing to clear
// at, reads no position again; and it asks the position manager's `redistributable` only of positions
// near 100 % or under (the keeper's liquidations and redistributions: resources/positions.test.ts).
import { type Hex, getAbiItem, toFunctionSelector } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { positionManagerAbi } from "@zsd/sdk";
import { type System, ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";
import { type RpcProxy, startRpcProxy } from "../../helpers/rpc-proxy.ts";
import { eventually, useRelayApi } from "../helpers.ts";

const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const GET_POSITION = toFunctionSelector(getAbiItem({ abi: positionManagerAbi, name: "getPosition" }));
const REDISTRIBUTABLE = toFunctionSelector(getAbiItem({ abi: positionManagerAbi, name: "redistributable" }));

describe("the keeper's reads", () => {
  let s: System;
  let proxy: RpcProxy;
  const calls = { getPosition: 0, redistributable: 0 };

  afterAll(async () => {
    await proxy?.close();
  });
  useRelayApi(
    {
      prepare: async (system) => {
        proxy = await startRpcProxy(system.rpcUrl);
        const manager = system.read.positions.address.toLowerCase();
        proxy.answerCall = (call) => {
          const data = (call.data ?? call.input ?? "0x") as Hex;
          if (call.to?.toLowerCase() !== manager) return undefined;
          if (data.startsWith(GET_POSITION)) calls.getPosition++;
          if (data.startsWith(REDISTRIBUTABLE)) calls.redistributable++;
          return undefined;
        };
      },
      env: () => ({ RPC_URL: proxy.url, KEEPER_PAYOUT_ADDRESS: SAPLING, KEEPER_POLL_MS: "100" }),
    },
    async (stack) => {
      s = stack.s;
      // Two positions at 240 % and 150 % at $40: neither liquidatable nor near 100 %.
      await s.setPrice(40n * 100_000_000n);
      await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 50n * ZSD, recipient: accounts.alice.address });
      await s.depositAndMint({ amountZat: 3n * ZEC, mintAmount: 80n * ZSD, recipient: accounts.bob.address });
      stack.api.worker!.start();
    },
  );

  it("reads each position once a block while none is to clear, and asks `redistributable` of none far from 100 %", async () => {
    await eventually(
      async () => calls.getPosition,
      (n) => n >= 2,
      "a keeper pass over both positions",
      30_000,
    );
    // Ten passes or more at 100 ms, at the same block: no position read again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const atRest = calls.getPosition;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(calls.getPosition).toBe(atRest);
    // A new block: read again, once.
    await s.mineBlocks(1);
    await eventually(
      async () => calls.getPosition,
      (n) => n >= atRest + 2,
      "a keeper pass at the new block",
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(calls.getPosition).toBe(atRest + 2);
    expect(calls.redistributable).toBe(0);
  });
});
