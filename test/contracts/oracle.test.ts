import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type System, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

describe("ZecUsdOracle", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));

  it("answers like a Chainlink aggregator with 8 decimals and keeps every round", async () => {
    const oracle = s.read.oracle;
    expect(await oracle.read.decimals()).toBe(8);
    const r = await s.receipt(await s.as(accounts.oracleUpdater).oracle.write.setPrice([42_12345678n]));
    const block = await s.publicClient.getBlock({ blockNumber: r.blockNumber });
    expect(await oracle.read.latestRoundData()).toEqual([2n, 42_12345678n, block.timestamp, block.timestamp, 2n]);
    const first = await oracle.read.getRoundData([1n]);
    expect(first[1]).toBe(50_00000000n);
    await expectRevert(oracle.read.getRoundData([3n]), "RoundNotFound", [3n]);
  });

  it("refuses non-positive prices and prices beyond 128 bits", async () => {
    const write = s.as(accounts.oracleUpdater).oracle.write;
    await expectRevert(write.setPrice([0n]), "PriceOutOfRange", [0n]);
    await expectRevert(write.setPrice([-1n]), "PriceOutOfRange", [-1n]);
    await expectRevert(write.setPrice([2n ** 127n]), "PriceOutOfRange", [2n ** 127n]);
  });
});
