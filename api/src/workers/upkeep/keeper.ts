// The liquidation keeper: finds open positions under the liquidation ratio at
// the oracle's price and queues their liquidation, relayed like every other
// call (./position-relay.ts). The relayer repays each debt with its own ZSD
// (a relay earns ZSD in mint fees) and the seized ZEC, worth the debt plus the
// bonus, is paid to the keeper's Zcash address. A position the relayer cannot
// afford is left to other liquidators.
//
// A position under 100% (its collateral worth less than its debt) is not
// liquidated (at a loss): while other positions hold debt it is redistributed
// over them (StableMinter.redistribute), which costs no ZSD, and the reward is
// paid to the keeper's address. So is a position the position manager calls
// redistributable though not liquidatable (dust within a redemption's margin of
// 100%). Redistributing first also keeps par redemptions from meeting
// UnderwaterPositionsPending. The choice is made on each position as the
// position manager reads it now (getPosition) at the oracle price.
//
// The redistributions a pass finds are queued together after its
// liquidations, a row each (so each position is queued once, as a
// liquidation is): the relay sends them in one StableMinter.redistributeMany
// (./redistribute-batch.ts), one transaction and one payout, where alone each
// would cost its own. Every liquidation and redistribution pays at least the
// position manager's keeperRewardFloorZat, so even dust is worth clearing.
import type { Address, Hex } from "viem";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk";
import { usdValueOfZat } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { tokenBalanceOf } from "../../domain/positions/keeper.ts";
import type { PositionService } from "../../domain/positions/positions.ts";

export interface KeeperOptions {
  positions: PositionService;
  /** Where the seized ZEC and redistribution rewards are paid (KEEPER_PAYOUT_ADDRESS). */
  payoutAddress: string;
  /** Positions read per pass at most, from where the last pass stopped. */
  batch: number;
}

/**
 * `redistributable` holds only within 4 zatoshi and 1 ppm of 100% (or under it): a position holding at least
 * NEAR_PAR_MIN_ZAT and worth NEAR_PAR_PERCENT % of its debt is never, so the view is asked only of the rest.
 * With 1,000 zatoshi or more, 4 zatoshi are at most 0.4 % of the value, well inside the 1 % margin.
 */
const NEAR_PAR_MIN_ZAT = 1_000n;
const NEAR_PAR_PERCENT = 101n;

export class Keeper {
  /** Positions known to be liquidated or closed: they never open again. */
  readonly #done = new Set<bigint>();
  #cursor = 1n;
  /**
   * The block at which a pass read every position and found nothing to clear: a pass at the same block
   * would read the same state and find the same, so it reads nothing (at rest, one call a pass instead of
   * one per position). A block hash, not a number: a reorganisation, or a test's revert, reuses the number.
   */
  #quietAt: Hex | undefined;

  constructor(
    private readonly chain: Chain,
    private readonly relayer: Address,
    private readonly options: KeeperOptions,
  ) {}

  /** One pass over up to `batch` positions; answers the ids it queued. */
  async pass(): Promise<bigint[]> {
    const { chain } = this;
    const minter = { address: chain.minter, abi: stableMinterAbi } as const;
    // Every read of a pass at one block: a pass that straddles a price move or a pause would otherwise
    // judge some positions before it and some after, and split what one batch should clear.
    const { number: blockNumber, hash: blockHash } = await chain.client.getBlock({ blockTag: "latest" });
    if (blockHash === this.#quietAt) return [];
    const positions = { address: chain.positions, abi: positionManagerAbi, blockNumber } as const;
    const [count, liquidationBps, bonusBps, token, paused, { price, frozen, ageSeconds, maxAgeSeconds }] =
      await Promise.all([
        chain.client.readContract({ ...positions, functionName: "positionCount" }),
        chain.client.readContract({ ...positions, functionName: "liquidationRatioBps" }),
        chain.client.readContract({ ...positions, functionName: "liquidationBonusBps" }),
        chain.client.readContract({ ...minter, functionName: "token" }),
        chain.client.readContract({ ...minter, functionName: "paused", blockNumber }),
        chain.priceState(),
      ]);
    // A stale or frozen price liquidates nothing: the position manager would refuse it. Nor does a paused
    // minter, which stops liquidations and redistributions while owners cannot top up.
    if (count === 0n || paused || frozen || ageSeconds > maxAgeSeconds) return [];
    let balance = await tokenBalanceOf(chain, token, this.relayer);
    const queued: bigint[] = [];
    const spreads: bigint[] = [];
    let candidates = 0;
    let seen = 0;
    for (; seen < this.options.batch && seen < Number(count); seen++) {
      const id = this.#cursor;
      this.#cursor = id >= count ? 1n : id + 1n;
      if (this.#done.has(id)) continue;
      const p = await chain.client.readContract({ ...positions, functionName: "getPosition", args: [id] });
      if (p.status !== 1) {
        if (p.status > 1) this.#done.add(id);
        continue;
      }
      if (p.debt === 0n) continue;
      const value = usdValueOfZat(p.collateralZat, price);
      const liquidatable = value * 10_000n < p.debt * liquidationBps;
      // Under 100%: never liquidated at a loss. Not liquidatable, yet within the few zatoshi and 1 ppm of 100% that a par
      // redemption settles first (dust at any ratio; the position manager says which): 25 such would hold up every par redemption.
      // Either is spread over the others while any hold debt.
      const underwater = value < p.debt;
      // The position manager's view says exactly when `redistribute` goes through (nobody to spread over,
      // a paused minter or a frozen price: no).
      const nearPar = p.collateralZat < NEAR_PAR_MIN_ZAT || value * 100n < p.debt * NEAR_PAR_PERCENT;
      const spread =
        (underwater || !liquidatable) &&
        nearPar &&
        (await chain.client.readContract({ ...positions, functionName: "redistributable", args: [id] }));
      if (underwater && !spread) continue;
      if (spread) {
        candidates++;
        spreads.push(id);
        continue;
      }
      if (!liquidatable) continue;
      candidates++;
      if (p.debt > balance) continue;
      // The bounds of what was read: the debt seen, the ZEC it buys at this price, and never at a loss. The call
      // waits in the relay's queue: a redistribution onto the position, a redemption or a price fall meanwhile
      // makes the minter refuse it rather than cost the relayer.
      const byDebt = (p.debt * (10_000n + bonusBps)) / 10_000n / usdValueOfZat(1n, price);
      const bounds = {
        maxDebt: p.debt,
        minSeizedZat: byDebt < p.collateralZat ? byDebt : p.collateralZat,
        minSeizedValue: p.debt,
      };
      const action = await this.options.positions.queueKeeperLiquidation(
        chain,
        this.relayer,
        id,
        this.options.payoutAddress,
        bounds,
      );
      if (action) {
        balance -= p.debt;
        queued.push(id);
      }
    }
    // Every position read at this block and none to clear (none the relayer could not afford either: its
    // balance is on the chain too, but a candidate's queued action may fail and want queueing again).
    this.#quietAt = seen >= Number(count) && candidates === 0 ? blockHash : undefined;
    // After the liquidations, which the relay sends first: a redistribution onto a position queued for
    // liquidation would raise its debt past the bound the keeper signed.
    for (const id of spreads) {
      const action = await this.options.positions.queueKeeperRedistribution(
        chain,
        this.relayer,
        id,
        this.options.payoutAddress,
      );
      if (action) queued.push(id);
    }
    return queued;
  }
}
