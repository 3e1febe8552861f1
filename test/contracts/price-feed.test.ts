// The price every valuation reads: two feeds, a last good price, and what the position manager
// refuses while neither feed can be trusted. Every state of the primary against every state of the
// second feed (healthy, suspect jump, stale, non-positive, not answering, dated in the future), each
// with the two feeds agreeing and disagreeing, on breakable mock feeds; then the deployed system
// frozen and thawed with its own two feeds.
import { type Address, getAddress, parseEventLogs, maxUint256 } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { positionManagerAbi, priceFeedAbi } from "@zsd/sdk/abis";
import { type Destination, type Note, createNote, positionOwnerKey, releaseProver } from "@zsd/sdk";
import { privateKeyToAccount } from "viem/accounts";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { MODE, type MockAggregator, deployMockAggregator } from "../helpers/mock-aggregator.ts";
import { readArtifact } from "../../scripts/lib/artifacts.ts";

const { alice, bob, carol, oracleUpdater, secondaryOracleUpdater } = accounts;
const usd = (n: number) => BigInt(Math.round(n * 100)) * 1_000_000n;
const LAST = usd(50);
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const MAX_AGE = 3_600n;
const MAX_JUMP_BPS = 5_000n;
const MAX_DEVIATION_BPS = 500n;
/** IPriceFeed.FeedCondition and PriceSource. */
const COND = { Healthy: 0, Suspect: 1, Unanswered: 2, InvalidAnswer: 3, FutureTimestamp: 4, Stale: 5, Unread: 6 };
const SOURCE = { Primary: 0, Secondary: 1, LastGood: 2 };

const STATES = ["healthy", "suspect", "stale", "non-positive", "not answering", "future"] as const;
type State = (typeof STATES)[number];
const CONDITION_OF: Record<State, number> = {
  healthy: COND.Healthy,
  suspect: COND.Suspect,
  stale: COND.Stale,
  "non-positive": COND.InvalidAnswer,
  "not answering": COND.Unanswered,
  future: COND.FutureTimestamp,
};
const answers = (s: State) => s === "healthy" || s === "suspect";

/**
 * The rule, stated independently of the contract: a healthy primary is the price; a suspect one
 * gives way to a second that answers (healthy or suspect) and agrees with it; a broken one to a
 * healthy second within a jump of the last good price; otherwise the last good price, frozen.
 */
function expected(p: State, q: State, agree: boolean, pv: bigint, qv: bigint) {
  if (p === "healthy") return { price: pv, source: SOURCE.Primary };
  if (p === "suspect") return answers(q) && agree ? { price: qv, source: SOURCE.Secondary } : frozen;
  return q === "healthy" && agree ? { price: qv, source: SOURCE.Secondary } : frozen;
}
const frozen = { price: LAST, source: SOURCE.LastGood };

/** The primary's answer: a suspect one jumped to $80. */
const primaryValue = (p: State) => (p === "suspect" ? usd(80) : usd(51));
/**
 * The second's answer: against a suspect primary ($80) it agrees at $81 (1.25%) and disagrees at $50;
 * against a broken one it is judged by the last good price ($50): $52 agrees, $100 is a 100% jump.
 */
const secondaryValue = (p: State, agree: boolean) =>
  p === "suspect" ? (agree ? usd(81) : usd(50)) : agree ? usd(52) : usd(100);

describe("PriceFeed", () => {
  let s: System;
  let primary: MockAggregator;
  let secondary: MockAggregator;
  let feedAddress: Address;
  const at = (address: Address) => ({ address, abi: priceFeedAbi }) as const;

  const now = async () => (await s.publicClient.getBlock()).timestamp;

  /** Two rounds on `mock` that leave it in `state` with `value` as its latest answer. */
  async function put(mock: MockAggregator, state: State, value: bigint) {
    const t = await now();
    const push = async (answer: bigint, updatedAt: bigint) =>
      s.receipt(await mock.write.pushRound([answer, updatedAt]));
    switch (state) {
      case "healthy":
        await push(value, t);
        return push(value, t);
      case "suspect":
        // 60% over the round before: beyond the 50% bound.
        await push((value * 10n) / 16n, t);
        return push(value, t);
      case "stale":
        await push(value, t - 2n * MAX_AGE);
        return push(value, t - 2n * MAX_AGE);
      case "non-positive":
        await push(value, t);
        return push(0n, t);
      case "not answering":
        await push(value, t);
        return s.receipt(await mock.write.setMode([MODE.Reverting]));
      case "future":
        await push(value, t);
        return push(value, t + MAX_AGE);
    }
  }

  async function deployFeed(p: Address, q: Address, admin: Address = carol.address) {
    const artifact = readArtifact("PriceFeed");
    const wallet = s.read.wallet;
    const hash = await wallet.deployContract({
      account: wallet.account!,
      chain: wallet.chain,
      abi: priceFeedAbi,
      bytecode: artifact.bytecode,
      args: [admin, p, q, MAX_AGE, MAX_JUMP_BPS, MAX_DEVIATION_BPS],
    });
    return getAddress((await s.receipt(hash)).contractAddress!);
  }

  beforeAll(async () => {
    s = await deploySystem();
    primary = await deployMockAggregator(s);
    secondary = await deployMockAggregator(s);
    const t = await now();
    for (const mock of [primary, secondary]) await s.receipt(await mock.write.pushRound([LAST, t]));
    feedAddress = await deployFeed(primary.address, secondary.address);
  });
  beforeEach(snapshots(() => s));

  const read = {
    peek: () => s.publicClient.readContract({ ...at(feedAddress), functionName: "peekPrice" }),
    last: () => s.publicClient.readContract({ ...at(feedAddress), functionName: "lastGoodPrice" }),
    condition: (mock: Address) =>
      s.publicClient.readContract({ ...at(feedAddress), functionName: "feedCondition", args: [mock] }),
  };
  const fetch = async () =>
    s.receipt(
      await s.as(bob).wallet.writeContract({
        ...at(feedAddress),
        account: bob,
        chain: s.as(bob).wallet.chain,
        functionName: "fetchPrice",
      }),
    );
  const governed = (functionName: "setFeeds" | "setMaxPriceAge" | "setMaxJump" | "setMaxDeviation", args: unknown[]) =>
    s.as(carol).wallet.writeContract({
      ...at(feedAddress),
      account: carol,
      chain: s.as(carol).wallet.chain,
      functionName,
      args,
    } as never);

  it("starts on the primary, with its answer as the last good price", async () => {
    expect(await read.peek()).toEqual([LAST, expect.any(BigInt), SOURCE.Primary]);
    expect((await read.last())[0]).toBe(LAST);
  });

  const cases = STATES.flatMap((p) => STATES.flatMap((q) => [true, false].map((agree) => ({ p, q, agree }))));
  it.each(cases)("primary $p, second $q, agreeing: $agree", async ({ p, q, agree }) => {
    const pv = primaryValue(p);
    const qv = secondaryValue(p, agree);
    await put(primary, p, pv);
    await put(secondary, q, qv);
    expect((await read.condition(primary.address))[0], "the primary's condition").toBe(CONDITION_OF[p]);
    expect((await read.condition(secondary.address))[0], "the second's condition").toBe(CONDITION_OF[q]);

    const want = expected(p, q, agree, pv, qv);
    const [price, updatedAt, source] = await read.peek();
    expect({ price, source }).toEqual(want);

    // A fetch records what the view said: the price as the last good one unless frozen, and the
    // move off the primary (recorded at deployment) with both feeds' conditions.
    const receipt = await fetch();
    const [last, lastAt, recorded] = await read.last();
    expect({ last, lastAt, recorded }).toEqual({ last: want.price, lastAt: updatedAt, recorded: want.source });
    const events = parseEventLogs({ abi: priceFeedAbi, logs: receipt.logs, eventName: "PriceSourceChanged" });
    if (want.source === SOURCE.Primary) expect(events).toEqual([]);
    else {
      expect(events.map((e) => e.args)).toEqual([
        {
          previous: SOURCE.Primary,
          current: want.source,
          primary: CONDITION_OF[p],
          secondary: CONDITION_OF[q],
        },
      ]);
    }
  });

  it("counts a short answer, a negative one, one beyond 128 bits and an empty feed as broken", async () => {
    const t = await now();
    await s.receipt(await primary.write.pushRound([LAST, t]));
    await s.receipt(await primary.write.setMode([MODE.Short]));
    expect(await read.condition(primary.address)).toEqual([COND.Unanswered, 0n]);
    await s.receipt(await primary.write.setMode([MODE.Normal]));
    await s.receipt(await primary.write.pushRound([-1n, t]));
    expect(await read.condition(primary.address)).toEqual([COND.InvalidAnswer, 0n]);
    await s.receipt(await primary.write.pushRound([2n ** 128n, t]));
    expect(await read.condition(primary.address)).toEqual([COND.InvalidAnswer, 0n]);
    await s.receipt(await primary.write.pushRound([LAST, 0n]));
    expect(await read.condition(primary.address)).toEqual([COND.Unanswered, 0n]);
    const empty = await deployMockAggregator(s);
    expect(await read.condition(empty.address)).toEqual([COND.Unanswered, 0n]);
  });

  it("draws the jump and agreement bounds inclusively", async () => {
    // 50% up from the round before is within the bound; one unit more is suspect.
    const t = await now();
    await s.receipt(await primary.write.pushRound([usd(75), t]));
    expect(await read.condition(primary.address)).toEqual([COND.Healthy, usd(75)]);
    await s.receipt(await primary.write.setLatest([usd(75) + 1n, t]));
    expect((await read.condition(primary.address))[0]).toBe(COND.Suspect);
    // Suspect at 75.00000001: a second 5% away (of the smaller) agrees; a unit further does not.
    const agreeing = ((usd(75) + 1n) * 10_500n) / 10_000n;
    await s.receipt(await secondary.write.pushRound([agreeing, t]));
    await s.receipt(await secondary.write.pushRound([agreeing, t]));
    expect(await read.peek()).toEqual([agreeing, t, SOURCE.Secondary]);
    await s.receipt(await secondary.write.pushRound([agreeing + 1n, t]));
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
  });

  it("measures a round without a readable predecessor from the last good price", async () => {
    const t = await now();
    const fresh = await deployMockAggregator(s);
    const other = await deployMockAggregator(s);
    await s.receipt(await fresh.write.pushRound([usd(80), t]));
    await s.receipt(await other.write.pushRound([usd(60), t]));
    // Round 1 has no round 0: $80 is 60% from the last good $50, $60 is 20%.
    expect((await read.condition(fresh.address))[0]).toBe(COND.Suspect);
    expect((await read.condition(other.address))[0]).toBe(COND.Healthy);
    // So a primary that comes back from a broken round ($0) with a jump still needs the second.
    await s.receipt(await primary.write.pushRound([0n, t]));
    await s.receipt(await primary.write.pushRound([usd(80), t]));
    expect((await read.condition(primary.address))[0]).toBe(COND.Suspect);
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
  });

  it("thaws when a feed recovers, and a recovering primary must not jump from its last round", async () => {
    await put(primary, "stale", usd(50));
    await put(secondary, "not answering", usd(50));
    await fetch();
    expect((await read.last())[2]).toBe(SOURCE.LastGood);
    // The primary comes back 60% up from where it stopped: suspect, and the second is down.
    await s.receipt(await primary.write.pushRound([usd(80), await now()]));
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
    // The second answers again, agreeing: the price moves with it.
    await s.receipt(await secondary.write.setMode([MODE.Normal]));
    await s.receipt(await secondary.write.pushRound([usd(79), await now()]));
    await s.receipt(await secondary.write.pushRound([usd(79), await now()]));
    const receipt = await fetch();
    expect((await read.last()).slice(0, 1)).toEqual([usd(79)]);
    const [event] = parseEventLogs({ abi: priceFeedAbi, logs: receipt.logs, eventName: "PriceSourceChanged" });
    expect(event!.args).toEqual({
      previous: SOURCE.LastGood,
      current: SOURCE.Secondary,
      primary: COND.Suspect,
      secondary: COND.Healthy,
    });
    // The primary's next round, close to its last: healthy, the primary again.
    await s.receipt(await primary.write.pushRound([usd(79.5), await now()]));
    await fetch();
    expect((await read.last())[0]).toBe(usd(79.5));
    expect((await read.last())[2]).toBe(SOURCE.Primary);
  });

  it("is governed by its admin only, within bounds, and refuses feeds that are not distinct 8-decimal contracts", async () => {
    await expectRevert(
      s.as(bob).wallet.writeContract({
        ...at(feedAddress),
        account: bob,
        chain: s.as(bob).wallet.chain,
        functionName: "setMaxJump",
        args: [1_000n],
      }),
      "AccessControlUnauthorizedAccount",
    );
    await expectRevert(governed("setFeeds", [alice.address, secondary.address]), "InvalidFeed", [alice.address]);
    await expectRevert(governed("setFeeds", [primary.address, primary.address]), "InvalidFeed", [primary.address]);
    const sixDecimals = await deployMockAggregator(s);
    await s.receipt(await sixDecimals.write.setDecimals([6]));
    await expectRevert(governed("setFeeds", [sixDecimals.address, secondary.address]), "InvalidFeed", [
      sixDecimals.address,
    ]);
    // A contract without decimals() (the price feed itself has none).
    await expectRevert(governed("setFeeds", [primary.address, feedAddress]), "InvalidFeed", [feedAddress]);
    await expectRevert(governed("setMaxPriceAge", [59n]), "InvalidParameter");
    await expectRevert(governed("setMaxPriceAge", [7n * 86_400n + 1n]), "InvalidParameter");
    await expectRevert(governed("setMaxJump", [99n]), "InvalidParameter");
    await expectRevert(governed("setMaxJump", [100_001n]), "InvalidParameter");
    await expectRevert(governed("setMaxDeviation", [9n]), "InvalidParameter");
    await expectRevert(governed("setMaxDeviation", [2_001n]), "InvalidParameter");

    const swapped = await s.receipt(await governed("setFeeds", [secondary.address, primary.address]));
    const [changed] = parseEventLogs({ abi: priceFeedAbi, logs: swapped.logs, eventName: "FeedsChanged" });
    expect(changed!.args).toEqual({
      previousPrimary: primary.address,
      previousSecondary: secondary.address,
      primary: secondary.address,
      secondary: primary.address,
    });
    await s.receipt(await governed("setMaxJump", [1_000n]));
    await s.receipt(await governed("setMaxDeviation", [100n]));
    await s.receipt(await governed("setMaxPriceAge", [600n]));
    const r = (functionName: "maxJumpBps" | "maxDeviationBps" | "maxPriceAge" | "primaryFeed") =>
      s.publicClient.readContract({ ...at(feedAddress), functionName });
    expect([await r("maxJumpBps"), await r("maxDeviationBps"), await r("maxPriceAge"), await r("primaryFeed")]).toEqual(
      [1_000n, 100n, 600n, secondary.address],
    );
  });

  it("refuses to deploy without a price it can trust", async () => {
    const a = await deployMockAggregator(s);
    const b = await deployMockAggregator(s);
    await s.receipt(await a.write.pushRound([0n, await now()]));
    await s.receipt(await b.write.setMode([MODE.Reverting]));
    // A revert in a constructor reaches viem as a failed estimate: Hardhat names the error in its message.
    await expect(deployFeed(a.address, b.address)).rejects.toThrow(
      `NoTrustedPrice(${COND.InvalidAnswer}, ${COND.Unanswered})`,
    );
  });
});

describe("the position manager on a frozen price", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  const toNote: Destination = { sealedAddress: "0x", noteCommitment: 1n };
  const primaryPrice = async (answer: bigint) => s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([answer]));
  const secondaryPrice = async (answer: bigint) =>
    s.receipt(await s.as(secondaryOracleUpdater).secondaryOracle.write.setPrice([answer]));

  it("refuses mints, withdrawals, liquidations, redistributions and redemptions; repays and closes go on", async () => {
    // 5 ZEC for 150 ZSD (166% at $50) and 10 ZEC for 100 ZSD, both alice's ZSD.
    const risky = await s.depositAndMint({ amountZat: 5n * ZEC, mintAmount: 150n * ZSD, recipient: alice.address });
    const safe = await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const note = createNote();
    await s.deposit(note, 4n * ZEC);
    const proved = await s.prove({ note, amountZat: 4n * ZEC, mintAmount: 100n * ZSD, recipient: alice.address });
    const owner = (n: Note) => privateKeyToAccount(positionOwnerKey(n));
    for (const n of [risky.note, safe.note]) {
      await s.testClient.setBalance({ address: owner(n).address, value: 10n ** 18n });
    }

    // Both feeds go stale: the price freezes at $50.
    await s.increaseTime(Number(MAX_AGE) + 1);
    const frozenAt = [usd(50)];
    await expectRevert(s.as(alice).minter.write.mint([proved.proof, proved.request]), "PriceFrozen", frozenAt);
    await expectRevert(s.read.positions.read.quoteRedemption([10n * ZSD, 50n]), "PriceFrozen", frozenAt);
    await expectRevert(
      s.as(alice).redemptions.write.redeem([10n * ZSD, s.sealed(SAPLING, alice.address)]),
      "PriceFrozen",
      frozenAt,
    );
    await expectRevert(
      s.as(alice).minter.write.liquidate([1n, { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n }, toNote]),
      "PriceFrozen",
      frozenAt,
    );
    await expectRevert(s.as(alice).minter.write.redistribute([1n, toNote]), "PriceFrozen", frozenAt);
    await expectRevert(
      s.as(owner(risky.note)).minter.write.withdrawCollateral([1n, ZEC / 10n, toNote, 0n]),
      "PriceFrozen",
      frozenAt,
    );
    expect(await s.read.positions.read.redistributable([1n])).toBe(false);
    expect((await s.read.priceFeed.read.peekPrice())[2]).toBe(SOURCE.LastGood);
    // What only gives back goes on: a repayment, and a close that repays everything.
    await s.receipt(await s.as(alice).minter.write.repay([1n, 10n * ZSD, 0n]));
    expect((await s.read.positions.read.getPosition([1n])).debt).toBe(140n * ZSD);
    await s.receipt(await s.as(alice).token.write.transfer([owner(safe.note).address, 100n * ZSD]));
    await s.receipt(await s.as(owner(safe.note)).minter.write.close([2n, toNote]));
    expect((await s.read.positions.read.getPosition([2n])).debt).toBe(0n);

    // The second feed alone comes back, near the last good price: everything resumes at its price.
    await secondaryPrice(usd(49));
    expect(await s.read.priceFeed.read.peekPrice()).toEqual([usd(49), expect.any(BigInt), SOURCE.Secondary]);
    await s.receipt(await s.as(alice).minter.write.mint([proved.proof, proved.request]));
  });

  it("does not liquidate on a primary's lone crash, and does once the second confirms it", async () => {
    await s.depositAndMint({ amountZat: 5n * ZEC, mintAmount: 150n * ZSD, recipient: alice.address });
    await s.depositAndMint({ amountZat: 20n * ZEC, mintAmount: 100n * ZSD, recipient: bob.address });
    // The primary alone says $20 (60% down): suspect, and the second ($50) disagrees.
    await primaryPrice(usd(20));
    await expectRevert(
      s.as(alice).minter.write.liquidate([1n, { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n }, toNote]),
      "PriceFrozen",
      [usd(50)],
    );
    // The second confirms within 5%: the position (5 ZEC at $20.5 for 150 ZSD) is liquidated at its price.
    await secondaryPrice(usd(20.5));
    const receipt = await s.receipt(
      await s
        .as(alice)
        .minter.write.liquidate([1n, { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n }, toNote]),
    );
    const [event] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionLiquidated" });
    expect(event!.args.price).toBe(usd(20.5));
    const [last, , source] = await s.read.priceFeed.read.lastGoodPrice();
    expect([last, source]).toEqual([usd(20.5), SOURCE.Secondary]);
  });
});
