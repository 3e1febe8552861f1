// Positions: what a mint opened, read live from the minter (redemptions move
// every position's debt and collateral at once, so only the chain knows them
// now), and the door to what the relay does with them: the signed actions
// (position-actions.ts), the note spends (note-spends.ts), the keeper's
// liquidations (position-keeper.ts), all queued as rows (position-queue.ts).
import { type Address, type Hex, formatUnits } from "viem";
import { collateralRegistryAbi, positionManagerAbi, redemptionsAbi } from "@zsd/sdk";
import { ZAT_PER_ZEC, formatZec, formatZsd, usdValueOfZat } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { domainErrors } from "../errors.ts";
import { type SpendInput, topUp, withdrawNote } from "../mints/note-spends.ts";
import { type ActionInput, actionTerms, requestAction } from "./actions.ts";
import type { LiquidationBounds } from "@zsd/sdk";
import { queueKeeperLiquidation, queueKeeperRedistribution } from "./keeper.ts";
import { type PositionContext, type PositionOptions, readPositions, withHold } from "./queue.ts";
import { actionOf } from "./store.ts";
import type { ProofService } from "../mints/proofs.ts";

export const POSITION_STATUS = ["none", "open", "liquidated", "closed"] as const;

/** A ratio in basis points as a decimal ("1.5" for 15000). */
const ratio = (bps: bigint) => formatUnits(bps, 4);

export class PositionService {
  readonly #context: PositionContext;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    proofs: ProofService,
    private readonly options: PositionOptions,
  ) {
    this.#context = { db, proofs, options };
  }

  #chain(what = "Positions"): Chain {
    if (!this.chain) throw domainErrors.unavailable(`${what} (no deployment is configured)`);
    return this.chain;
  }

  #relayingChain(what: string): Chain {
    const chain = this.#chain(what);
    if (!this.options.relaying || !this.options.sealed) {
      throw domainErrors.unavailable(`${what} (no relayer key is configured)`);
    }
    return chain;
  }

  /** The position now: collateral, debt, ratio and liquidation price at the oracle's price. */
  async get(positionId: string) {
    const chain = this.#chain();
    const id = BigInt(positionId);
    const [position, { price, frozen, ageSeconds, maxAgeSeconds }, liquidationBps, minimumBps] = await Promise.all([
      readPositions<{ owner: Address; status: number; collateralZat: bigint; debt: bigint }>(chain, "getPosition", [
        id,
      ]),
      chain.priceState(),
      readPositions<bigint>(chain, "liquidationRatioBps"),
      readPositions<bigint>(chain, "minCollateralRatioBps"),
    ]);
    if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
    const { collateralZat, debt } = position;
    const value = usdValueOfZat(collateralZat, price);
    const ratioBps = debt === 0n ? null : (value * 10_000n) / debt;
    // The price at which the collateral is worth the debt times the liquidation ratio (8 decimals, rounded up).
    const denominator = collateralZat * 10_000n * 10n ** 10n;
    const liquidationPrice =
      debt === 0n || collateralZat === 0n
        ? null
        : formatUnits((debt * liquidationBps * ZAT_PER_ZEC + denominator - 1n) / denominator, 8);
    const status = POSITION_STATUS[position.status] ?? "none";
    return {
      object: "position" as const,
      id: positionId,
      owner: position.owner,
      status,
      collateral: formatZec(collateralZat),
      debt: formatZsd(debt),
      collateralValueUsd: formatZsd(value),
      collateralRatio: ratioBps === null ? null : ratio(ratioBps),
      liquidationPrice,
      liquidatable: status === "open" && ratioBps !== null && ratioBps < liquidationBps,
      minCollateralRatio: ratio(minimumBps),
      liquidationRatio: ratio(liquidationBps),
      price: formatUnits(price, 8),
      priceStale: frozen || ageSeconds > maxAgeSeconds,
    };
  }

  /** Where the pool's ZEC is: in positions, in unminted notes, owed to payouts; and the system's ratio. */
  async collateral() {
    const chain = this.chain;
    if (!chain) return null;
    const read = <T>(address: Address, abi: unknown, functionName: string) =>
      chain.read(() => chain.client.readContract({ address, abi, functionName } as never) as Promise<T>);
    const [unminted, backing, free, debt, pending, floorBps, keeperFloorZat, { price }] = await Promise.all([
      read<bigint>(chain.registry, collateralRegistryAbi, "unmintedZat"),
      read<bigint>(chain.positions, positionManagerAbi, "backingCollateralZat"),
      read<bigint>(chain.positions, positionManagerAbi, "freeCollateralZat"),
      read<bigint>(chain.positions, positionManagerAbi, "totalDebt"),
      read<bigint>(chain.redemptions, redemptionsAbi, "pendingZatDue"),
      read<bigint>(chain.positions, positionManagerAbi, "systemFloorRatioBps"),
      read<bigint>(chain.positions, positionManagerAbi, "keeperRewardFloorZat"),
      chain.priceState(),
    ]);
    const value = usdValueOfZat(backing, price);
    const systemBps = debt === 0n ? null : (value * 10_000n) / debt;
    return {
      inPositionsZec: formatZec(backing),
      claimableZec: formatZec(free),
      unmintedZec: formatZec(unminted),
      pendingPayoutZec: formatZec(pending),
      positionsValueUsd: formatZsd(value),
      systemRatio: systemBps === null ? null : ratio(systemBps),
      systemFloorRatio: ratio(floorBps),
      recoveryMode: systemBps !== null && systemBps < floorBps,
      keeperRewardFloorZec: formatZec(keeperFloorZat),
    };
  }

  /** What a signer signs for a position action through the relay. */
  terms(signer: Address) {
    return actionTerms(this.#context, this.#chain(), signer);
  }

  /** Checks a signed action, simulates it and queues it for the relay. */
  request(accountId: string, positionId: string, input: ActionInput) {
    return requestAction(this.#context, this.#relayingChain("Position actions"), accountId, positionId, input);
  }

  /**
   * A note's ZEC out to a shielded Zcash address, proven with a proof bound to
   * that address and the payout's owner (who may redirect it if custody cannot pay).
   */
  withdrawNote(accountId: string, input: SpendInput & { sealedAddress: Hex; owner: Address }) {
    return withdrawNote(this.#context, this.#relayingChain("Withdrawals"), accountId, input);
  }

  /** A note's ZEC added to an open position, proven with a proof bound to that position. */
  topUp(accountId: string, positionId: string, input: SpendInput) {
    return topUp(this.#context, this.#relayingChain("Top-ups"), accountId, positionId, input);
  }

  /** An action or withdrawal this account asked for. */
  async action(accountId: string, id: string, kind: "position_action" | "withdrawal", positionId?: string) {
    const row = await actionOf(this.db, accountId, this.options.environment, id);
    const matches =
      row &&
      (kind === "withdrawal" ? row.action === "withdraw_note" : row.action !== "withdraw_note") &&
      (positionId === undefined || row.position_id === positionId);
    if (!matches) throw domainErrors.notFound(kind === "withdrawal" ? `Withdrawal ${id}` : `Action ${id}`);
    return withHold(this.db, row);
  }

  /** The keeper's liquidation of `positionId`, its collateral paid to `zcashAddress` (position-keeper.ts). */
  queueKeeperLiquidation(
    chain: Chain,
    relayer: Address,
    positionId: bigint,
    zcashAddress: string,
    bounds: LiquidationBounds,
  ) {
    return queueKeeperLiquidation(this.#context, chain, relayer, positionId, zcashAddress, bounds);
  }

  /** The keeper's redistribution of `positionId`, its reward paid to `zcashAddress` (position-keeper.ts). */
  queueKeeperRedistribution(chain: Chain, relayer: Address, positionId: bigint, zcashAddress: string) {
    return queueKeeperRedistribution(this.#context, chain, relayer, positionId, zcashAddress);
  }
}
