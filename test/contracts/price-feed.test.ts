// The price every valuation reads: two feeds, a last good price, a reference a lone feed is held to,
// and what the position manager refuses while neither feed can be trusted. Every state of the
// primary against every state of the second feed (healthy, suspect, stale, non-positive, not
// answering, dated in the future), each with the two agreeing and disagreeing, on breakable mock
// feeds; one updater key walking the price round after round, in one block and across windows; a
// steep market both feeds see; then the deployed system frozen and thawed with its own two feeds.
import { type Address, type Hex, getAddress, parseEventLogs, maxUint256 } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { positionManagerAbi, priceFeedAbi } from "@zsd/sdk/abis";
import { type Destination, type Note, createNote, positionOwnerKey, releaseProver } from "@zsd/sdk";
import { privateKeyToAccount } from "viem/accounts";
import { type System, ZEC, ZSD, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";
import { MODE, type MockAggregator, deployMockAggregator } from "../helpers/mock-aggregator.ts";
import { readArtifact } from "../../scripts/lib/artifacts.ts";
import { DEFAULT_PARAMETERS } from "../../scripts/deploy.ts";

const { alice, bob, carol, oracleUpdater, secondaryOracleUpdater } = accounts;
const usd = (n: number) => BigInt(Math.round(n * 100)) * 1_000_000n;
const LAST = usd(50);
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const MAX_AGE = 3_600n;
const MAX_JUMP_BPS = 5_000n;
const MAX_DEVIATION_BPS = 500n;
const WINDOW = 3_600n;
/** IPriceFeed.FeedCondition and PriceSource. */
const COND = { Healthy: 0, Suspect: 1, Unanswered: 2, InvalidAnswer: 3, FutureTimestamp: 4, Stale: 5 };
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
 * The rule, stated independently of the contract: two feeds that answer must agree, and then the
 * primary's answer is the price; a feed alone is the price only within the jump bound of the
 * reference (healthy, not suspect); otherwise the last good price, frozen.
 */
function expected(p: State, q: State, agree: boolean, pv: bigint, qv: bigint) {
  if (answers(p) && answers(q)) return agree ? { price: pv, source: SOURCE.Primary } : frozen;
  if (p === "healthy") return { price: pv, source: SOURCE.Primary };
  if (q === "healthy") return { price: qv, source: SOURCE.Secondary };
  return frozen;
}
const frozen = { price: LAST, source: SOURCE.LastGood };

/**
 * Both feeds' answers for a case, judged against the reference ($50, the jump bound 50%: healthy up
 * to $75, suspect beyond): two answering feeds agree within 5% or not; a broken feed's last answer
 * agrees with the other's or not, and must not count either way.
 */
function values(p: State, q: State, agree: boolean): [bigint, bigint] {
  if (answers(p) && answers(q)) {
    const pairs: Record<string, [number, number, number, number]> = {
      "healthy/healthy": [51, 52, 51, 60],
      "healthy/suspect": [74, 76, 51, 100],
      "suspect/healthy": [76, 74, 80, 50],
      "suspect/suspect": [80, 81, 80, 100],
    };
    const [pa, qa, pd, qd] = pairs[`${p}/${q}`]!;
    return agree ? [usd(pa), usd(qa)] : [usd(pd), usd(qd)];
  }
  const own = (s: State, healthy: number) => usd(s === "suspect" ? 80 : healthy);
  if (answers(p)) return [own(p, 51), agree ? own(p, 51) + usd(1) : usd(100)];
  if (answers(q)) return [agree ? own(q, 52) + usd(1) : usd(100), own(q, 52)];
  return [usd(51), agree ? usd(52) : usd(100)];
}

describe("PriceFeed", () => {
  let s: System;
  let primary: MockAggregator;
  let secondary: MockAggregator;
  let feedAddress: Address;
  const at = (address: Address) => ({ address, abi: priceFeedAbi }) as const;

  const now = async () => (await s.publicClient.getBlock()).timestamp;

  /** Two rounds on `mock` that leave it in `state` with `value` as its latest answer (or the one before). */
  async function put(mock: MockAggregator, state: State, value: bigint) {
    const t = await now();
    const push = async (answer: bigint, updatedAt: bigint) =>
      s.receipt(await mock.write.pushRound([answer, updatedAt]));
    switch (state) {
      case "healthy":
      case "suspect":
        await push(value, t);
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
      args: [admin, p, q, MAX_AGE, MAX_JUMP_BPS, MAX_DEVIATION_BPS, WINDOW],
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
    reference: () => s.publicClient.readContract({ ...at(feedAddress), functionName: "referencePrice" }),
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
  const governed = (
    functionName: "setFeeds" | "setMaxPriceAge" | "setMaxJump" | "setMaxDeviation" | "setReferenceWindow",
    args: unknown[],
  ) =>
    s.as(carol).wallet.writeContract({
      ...at(feedAddress),
      account: carol,
      chain: s.as(carol).wallet.chain,
      functionName,
      args,
    } as never);
  /** A fresh round on a mock at `answer`. */
  const round = async (mock: MockAggregator, answer: bigint) =>
    s.receipt(await mock.write.pushRound([answer, await now()]));

  it("starts on the primary, with its answer as the last good price and the reference", async () => {
    expect(await read.peek()).toEqual([LAST, expect.any(BigInt), SOURCE.Primary]);
    expect((await read.last())[0]).toBe(LAST);
    expect(await read.reference()).toEqual([LAST, LAST, expect.any(BigInt)]);
  });

  const cases = STATES.flatMap((p) => STATES.flatMap((q) => [true, false].map((agree) => ({ p, q, agree }))));
  it.each(cases)("primary $p, second $q, agreeing: $agree", async ({ p, q, agree }) => {
    const [pv, qv] = values(p, q, agree);
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
    // The second goes stale: the primary alone is held to 50% of the $50 reference (of the smaller),
    // up to $75 and down to $33.33333334.
    await put(secondary, "stale", LAST);
    const down = (LAST * 10_000n + 15_000n - 1n) / 15_000n;
    for (const [answer, condition, source] of [
      [usd(75), COND.Healthy, SOURCE.Primary],
      [usd(75) + 1n, COND.Suspect, SOURCE.LastGood],
      [down, COND.Healthy, SOURCE.Primary],
      [down - 1n, COND.Suspect, SOURCE.LastGood],
    ] as const) {
      await round(primary, answer);
      expect(await read.condition(primary.address)).toEqual([condition, answer]);
      expect((await read.peek())[2], `the primary alone at ${answer}`).toBe(source);
    }
    // Both answering at $60: a second 5% away (of the smaller) agrees; a unit further does not.
    await round(primary, usd(60));
    const agreeing = (usd(60) * 10_500n) / 10_000n;
    await round(secondary, agreeing);
    expect(await read.peek()).toEqual([usd(60), expect.any(BigInt), SOURCE.Primary]);
    await round(secondary, agreeing + 1n);
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
    const below = (usd(60) * 10_000n + 10_499n) / 10_500n;
    await round(secondary, below);
    expect((await read.peek())[2]).toBe(SOURCE.Primary);
    await round(secondary, below - 1n);
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
  });

  it("does not trust a primary that passes its own checks but disagrees with the second", async () => {
    // 10% up from its previous round and from the reference: nothing the primary says of itself is
    // wrong, but the second still says $50.
    await round(primary, usd(55));
    expect((await read.condition(primary.address))[0]).toBe(COND.Healthy);
    expect(await read.peek()).toEqual([LAST, expect.any(BigInt), SOURCE.LastGood]);
    const receipt = await fetch();
    const [event] = parseEventLogs({ abi: priceFeedAbi, logs: receipt.logs, eventName: "PriceSourceChanged" });
    expect(event!.args).toEqual({
      previous: SOURCE.Primary,
      current: SOURCE.LastGood,
      primary: COND.Healthy,
      secondary: COND.Healthy,
    });
    // The second moves with it: two feeds saw it, and it is the price.
    await round(secondary, usd(54));
    await fetch();
    expect((await read.last()).slice(0, 1)).toEqual([usd(55)]);
    expect((await read.last())[2]).toBe(SOURCE.Primary);
    expect((await read.reference()).slice(0, 2)).toEqual([usd(55), usd(55)]);
  });

  it("thaws when a feed recovers; a move both feeds agreed on is at once the reference a lone feed is held to", async () => {
    await put(primary, "stale", usd(50));
    await put(secondary, "not answering", usd(50));
    await fetch();
    expect((await read.last())[2]).toBe(SOURCE.LastGood);
    // The primary comes back 60% up: suspect against the $50 reference, and the second is down.
    await round(primary, usd(80));
    expect((await read.peek())[2]).toBe(SOURCE.LastGood);
    // The second answers again, agreeing: two feeds saw the move, and it is the price.
    await s.receipt(await secondary.write.setMode([MODE.Normal]));
    await round(secondary, usd(79));
    const receipt = await fetch();
    expect((await read.last()).slice(0, 1)).toEqual([usd(80)]);
    const [event] = parseEventLogs({ abi: priceFeedAbi, logs: receipt.logs, eventName: "PriceSourceChanged" });
    expect(event!.args).toEqual({
      previous: SOURCE.LastGood,
      current: SOURCE.Primary,
      primary: COND.Suspect,
      secondary: COND.Suspect,
    });
    expect((await read.reference()).slice(0, 2)).toEqual([usd(80), usd(80)]);
    // The second stops again: the primary alone is held to $80 now, not $50.
    await s.receipt(await secondary.write.setMode([MODE.Reverting]));
    await round(primary, usd(100));
    expect(await read.peek()).toEqual([usd(100), expect.any(BigInt), SOURCE.Primary]);
    await round(primary, usd(121));
    expect(await read.peek()).toEqual([usd(80), expect.any(BigInt), SOURCE.LastGood]);
  });

  it("moves the reference at most once a window, to a price recorded at least a window earlier", async () => {
    const start = (await read.reference())[2];
    await put(secondary, "stale", LAST);
    await round(primary, usd(60));
    await fetch();
    // Within the window nothing moves the reference, however often the price is fetched.
    for (let i = 0; i < 3; i++) await fetch();
    expect(await read.reference()).toEqual([LAST, LAST, start]);
    // The window passes: $50 (taken at its start) stays the reference, $60 is pending.
    await s.increaseTime(Number(WINDOW));
    await round(primary, usd(70));
    expect(await read.reference(), "as a fetch now would see it").toEqual([LAST, usd(60), await now()]);
    await fetch();
    const rolledAt = await now();
    expect(await read.reference()).toEqual([LAST, usd(60), rolledAt]);
    await round(primary, usd(74));
    await fetch();
    expect(await read.reference()).toEqual([LAST, usd(60), rolledAt]);
    // A window after that, $60 is the reference: $90 is within reach of it, and $74 is pending.
    await s.increaseTime(Number(WINDOW));
    await round(primary, usd(90));
    await fetch();
    expect((await read.reference()).slice(0, 2)).toEqual([usd(60), usd(74)]);
    expect(await read.peek()).toEqual([usd(90), expect.any(BigInt), SOURCE.Primary]);
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
    await expectRevert(
      s.as(bob).wallet.writeContract({
        ...at(feedAddress),
        account: bob,
        chain: s.as(bob).wallet.chain,
        functionName: "setReferenceWindow",
        args: [7_200n],
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
    const name = (n: string) => `0x${Buffer.from(n).toString("hex").padEnd(64, "0")}` as Hex;
    await expectRevert(governed("setMaxPriceAge", [59n]), "InvalidParameter", [name("maxPriceAge"), 59n]);
    await expectRevert(governed("setMaxPriceAge", [7n * 86_400n + 1n]), "InvalidParameter");
    await expectRevert(governed("setMaxJump", [99n]), "InvalidParameter", [name("maxJumpBps"), 99n]);
    await expectRevert(governed("setMaxJump", [100_001n]), "InvalidParameter");
    await expectRevert(governed("setMaxDeviation", [9n]), "InvalidParameter", [name("maxDeviationBps"), 9n]);
    await expectRevert(governed("setMaxDeviation", [2_001n]), "InvalidParameter");
    await expectRevert(governed("setReferenceWindow", [599n]), "InvalidParameter", [name("referenceWindow"), 599n]);
    await expectRevert(governed("setReferenceWindow", [7n * 86_400n + 1n]), "InvalidParameter");

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
    const windowSet = await s.receipt(await governed("setReferenceWindow", [7_200n]));
    const [updated] = parseEventLogs({ abi: priceFeedAbi, logs: windowSet.logs, eventName: "ParameterUpdated" });
    expect(updated!.args).toEqual({ name: name("referenceWindow"), previousValue: WINDOW, newValue: 7_200n });
    const r = (functionName: "maxJumpBps" | "maxDeviationBps" | "maxPriceAge" | "referenceWindow" | "primaryFeed") =>
      s.publicClient.readContract({ ...at(feedAddress), functionName });
    expect([
      await r("maxJumpBps"),
      await r("maxDeviationBps"),
      await r("maxPriceAge"),
      await r("referenceWindow"),
      await r("primaryFeed"),
    ]).toEqual([1_000n, 100n, 600n, 7_200n, secondary.address]);
  });

  it("refuses to deploy without a price it can trust: two feeds answering and agreeing", async () => {
    const a = await deployMockAggregator(s);
    const b = await deployMockAggregator(s);
    await s.receipt(await a.write.pushRound([0n, await now()]));
    await s.receipt(await b.write.setMode([MODE.Reverting]));
    // A revert in a constructor reaches viem as a failed estimate: Hardhat names the error in its message.
    await expect(deployFeed(a.address, b.address)).rejects.toThrow(
      `NoTrustedPrice(${COND.InvalidAnswer}, ${COND.Unanswered})`,
    );
    // One feed alone has no reference to be held to yet; two that disagree, no price.
    await s.receipt(await b.write.setMode([MODE.Normal]));
    await round(b, LAST);
    await expect(deployFeed(a.address, b.address)).rejects.toThrow(
      `NoTrustedPrice(${COND.InvalidAnswer}, ${COND.Suspect})`,
    );
    await round(a, usd(60));
    await expect(deployFeed(a.address, b.address)).rejects.toThrow(`NoTrustedPrice(${COND.Suspect}, ${COND.Suspect})`);
    await round(a, usd(51));
    expect(await deployFeed(a.address, b.address)).toMatch(/^0x/);
  });
});

describe("one updater key walking the price", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));

  const WINDOW_S = Number(DEFAULT_PARAMETERS.priceReferenceWindow);
  const up = (answer: bigint) => (answer * 149n) / 100n;
  const down = (answer: bigint) => (answer * 100n) / 149n;
  const updaterOf = { primary: oracleUpdater, second: secondaryOracleUpdater } as const;
  const feedOf = (which: "primary" | "second") => (which === "primary" ? "oracle" : "secondaryOracle");

  /**
   * `rounds` rounds on one feed, each `step` from the last good price, each followed by a fetch: all
   * sent by that feed's updater and mined in one block (its nonces keep them in order).
   */
  async function walkInOneBlock(which: "primary" | "second", step: (answer: bigint) => bigint, rounds = 6) {
    const updater = s.as(updaterOf[which]);
    const hashes: Hex[] = [];
    let answer = (await s.read.priceFeed.read.lastGoodPrice())[0];
    await s.testClient.setAutomine(false);
    try {
      for (let i = 0; i < rounds; i++) {
        answer = step(answer);
        hashes.push(await updater[feedOf(which)].write.setPrice([answer], { gas: 200_000n }));
        hashes.push(await updater.priceFeed.write.fetchPrice({ gas: 300_000n }));
      }
      await s.testClient.mine({ blocks: 1 });
    } finally {
      await s.testClient.setAutomine(true);
    }
    const receipts = await Promise.all(hashes.map((hash) => s.publicClient.getTransactionReceipt({ hash })));
    expect(new Set(receipts.map((r) => r.blockNumber)).size, "one block").toBe(1);
    expect(receipts.map((r) => r.status)).toEqual(hashes.map(() => "success"));
    return answer;
  }
  const last = async () => (await s.read.priceFeed.read.lastGoodPrice())[0];
  const ratio = (a: bigint, b: bigint) => Number(a) / Number(b);

  // Measured from the feed's previous round, as before, each of these walks took the last good price
  // to 1.49^6 of where it started (×10.9, or ÷10.9 down), in one block.
  for (const [name, step] of [
    ["up", up],
    ["down", down],
  ] as const) {
    for (const which of ["primary", "second"] as const) {
      it(`${which}'s updater, six rounds ${name} in one block, the other feed answering: the price does not move`, async () => {
        const walked = await walkInOneBlock(which, step);
        expect(ratio(walked, LAST) > 10 || ratio(LAST, walked) > 10, "the feed itself walked ×10.9").toBe(true);
        expect(await last()).toBe(LAST);
        expect(await s.read.priceFeed.read.peekPrice()).toEqual([LAST, expect.any(BigInt), SOURCE.LastGood]);
      });

      it(`${which}'s updater, six rounds ${name} in one block, the other feed broken: one jump at most`, async () => {
        // The other feed stops (its last round goes stale); this one keeps posting.
        await s.increaseTime(Number(MAX_AGE) + 1);
        const walked = await walkInOneBlock(which, step);
        expect(ratio(walked, LAST) > 10 || ratio(LAST, walked) > 10).toBe(true);
        // The first round is within 50% of the $50 reference and is the price; the next are not.
        expect(await last()).toBe(step(LAST));
        const moved = ratio(await last(), LAST);
        expect(Math.max(moved, 1 / moved)).toBeLessThanOrEqual(1.5);
        expect((await s.read.priceFeed.read.peekPrice())[2]).toBe(SOURCE.LastGood);
      });
    }
  }

  it("the primary's updater alone, the second broken, walks at most one jump a window", async () => {
    await s.increaseTime(Number(MAX_AGE) + 1);
    // Each window, three rounds of +49% from the last good price in one block.
    const path: bigint[] = [];
    for (let w = 0; w < 4; w++) {
      if (w > 0) await s.increaseTime(WINDOW_S);
      await walkInOneBlock("primary", up, 3);
      path.push(await last());
    }
    // The reference is a price the system had one to two windows before: a jump every other window.
    expect(path).toEqual([up(LAST), up(LAST), up(up(LAST)), up(up(LAST))]);
    let before = LAST;
    for (const price of path) {
      expect(ratio(price, before)).toBeLessThanOrEqual(1.5);
      before = price;
    }
  });

  it("follows a steep market both feeds see, and a lone feed's market moving a fifth a window", async () => {
    // Both feeds (the second a little behind): ×10 in nine moves of up to +40%, then a 60% crash and
    // a rebound, each the price at once.
    let market = LAST;
    for (const move of [1.3, 1.4, 1.25, 1.4, 1.3, 1.35, 1.2, 1.4, 1.3, 0.4, 1.5]) {
      market = (market * BigInt(Math.round(move * 1000))) / 1000n;
      await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([market]));
      await s.receipt(await s.as(secondaryOracleUpdater).secondaryOracle.write.setPrice([(market * 99n) / 100n]));
      await s.receipt(await s.read.priceFeed.write.fetchPrice());
      expect(await s.read.priceFeed.read.lastGoodPrice(), `the market at ${market}`).toEqual([
        market,
        expect.any(BigInt),
        SOURCE.Primary,
      ]);
    }
    // The second stops; the primary alone follows a market moving up to 20% a window.
    await s.increaseTime(Number(MAX_AGE) + 1);
    for (const move of [1.2, 1.2, 0.84, 1.2, 0.84, 0.84, 1.2]) {
      market = (market * BigInt(Math.round(move * 1000))) / 1000n;
      await s.receipt(await s.as(oracleUpdater).oracle.write.setPrice([market]));
      await s.receipt(await s.read.priceFeed.write.fetchPrice());
      expect(await s.read.priceFeed.read.lastGoodPrice(), `the market alone at ${market}`).toEqual([
        market,
        expect.any(BigInt),
        SOURCE.Primary,
      ]);
      await s.increaseTime(WINDOW_S);
    }
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
    // The second confirms within 5%: the position (5 ZEC at $20 for 150 ZSD) is liquidated at the
    // primary's price, which two feeds now vouch for.
    await secondaryPrice(usd(20.5));
    const receipt = await s.receipt(
      await s
        .as(alice)
        .minter.write.liquidate([1n, { maxDebt: maxUint256, minSeizedZat: 0n, minSeizedValue: 0n }, toNote]),
    );
    const [event] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionLiquidated" });
    expect(event!.args.price).toBe(usd(20));
    const [last, , source] = await s.read.priceFeed.read.lastGoodPrice();
    expect([last, source]).toEqual([usd(20), SOURCE.Primary]);
  });
});
