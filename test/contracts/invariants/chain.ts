// The chain side: sending a step's transaction and naming how it reverted, reading every total
// and position the checks compare with the model, and the few moves a step needs to be possible.
import {
  type Address,
  type Hex,
  type TransactionReceipt,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  encodeAbiParameters,
  keccak256,
} from "viem";
import { expect } from "vitest";
import { findInsertHint } from "@zsd/sdk";
import { ALL_ERRORS } from "../../helpers/fixtures.ts";
import { BPS, SETTLE_MARGIN_ZAT, ZAT_PRICE_TO_USD18, max, min } from "./constants.ts";
import type { Context } from "./context.ts";
import { count } from "./stats.ts";

interface PositionView {
  owner: Address;
  status: number;
  collateralZat: bigint;
  debt: bigint;
}
export interface Params {
  minCollateralRatioBps: bigint;
  liquidationRatioBps: bigint;
  liquidationBonusBps: bigint;
  systemFloorRatioBps: bigint;
  redistributionRewardBps: bigint;
  keeperRewardFloorZat: bigint;
  redemptionFeeBps: bigint;
}
export interface Chain {
  held: bigint;
  unminted: bigint;
  backing: bigint;
  free: bigint;
  pending: bigint;
  supply: bigint;
  debt: bigint;
  payoutCount: bigint;
  /** The price feed's price now (the last good one while frozen). */
  price: bigint;
  /** Neither feed trusted: mints, withdrawals against debt, liquidations, redistributions and redemptions refused. */
  frozen: boolean;
  /** What a lone feed is held to, as the next fetch would leave it (PriceFeed.referencePrice). */
  reference: { price: bigint; pending: bigint; since: bigint };
  /** The pauser stopped the minter: note spends, withdrawals, liquidations and redistributions refused. */
  paused: boolean;
  /** The guardian stopped new mints alone (a reserves shortfall). */
  mintsPaused: boolean;
  epoch: bigint;
  params: Params;
  positions: PositionView[];
  /** The registry's queue of leaves waiting for the tree (its counters and chain), and the tree. */
  queuedCount: bigint;
  insertedCount: bigint;
  pendingCount: bigint;
  chainTip: Hex;
  root: bigint;
  treeSize: bigint;
}

const LOW_192 = (1n << 192n) - 1n;
/** The registry's chain over every leaf ever queued: from the empty queue's word (1), each link keccak's low 192 bits. */
export const queueChain = (leaves: readonly bigint[]): Hex =>
  leaves.reduce<Hex>(
    (h, leaf) => {
      const link = BigInt(keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [h, leaf])));
      return `0x${(link & LOW_192).toString(16).padStart(64, "0")}`;
    },
    `0x${"0".repeat(63)}1`,
  );

export type Outcome = { ok: true; receipt: TransactionReceipt } | { ok: false; error: string };

/** The custom error's name a call reverted with, decoded with every contract's errors. */
function revertName(error: unknown): string {
  if (!(error instanceof BaseError)) throw error;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
  const decoded =
    reverted.data ?? (reverted.raw ? decodeErrorResult({ abi: ALL_ERRORS, data: reverted.raw }) : undefined);
  if (!decoded?.errorName) throw error;
  return decoded.errorName;
}

export const minterDomain = ({ s }: Context) => ({ chainId: s.chainId, verifyingContract: s.read.minter.address });
export const deadline = async ({ s }: Context) => (await s.publicClient.getBlock()).timestamp + 3600n;

export async function send({ s }: Context, write: () => Promise<Hex>): Promise<Outcome> {
  let hash: Hex;
  try {
    hash = await write();
  } catch (error) {
    return { ok: false, error: revertName(error) };
  }
  const receipt = await s.receipt(hash);
  if (receipt.status !== "success") return { ok: false, error: "reverted" };
  return { ok: true, receipt };
}

export async function simulate(call: () => Promise<unknown>): Promise<string | null> {
  try {
    await call();
    return null;
  } catch (error) {
    return revertName(error);
  }
}

/**
 * What a paused minter answers before anything else (its modifier runs first): the pauser's pause for
 * every call it stops, then, for a mint, the guardian's.
 */
export function pauseError(c: Chain, call: "mint" | "pausable"): string | null {
  if (c.paused) return "EnforcedPause";
  return call === "mint" && c.mintsPaused ? "MintsArePaused" : null;
}

/** Asserts the outcome is the predicted error (or success when null). */
export function expectOutcome(
  label: string,
  outcome: Outcome,
  expected: string | null,
): outcome is Outcome & { ok: true } {
  count(`${label.split("(")[0]}: ${outcome.ok ? "ok" : outcome.error}`);
  expect(outcome.ok ? null : outcome.error, `${label}: outcome`).toBe(expected);
  return outcome.ok;
}

export async function read({ s }: Context): Promise<Chain> {
  const r = s.read;
  const [held, unminted, backing, free, pending, supply, debt, n, payoutCount, round, epoch, paused, mintsPaused] =
    await Promise.all([
      r.registry.read.totalCollateralZat(),
      r.registry.read.unmintedZat(),
      r.positions.read.backingCollateralZat(),
      r.positions.read.freeCollateralZat(),
      r.redemptions.read.pendingZatDue(),
      r.token.read.totalSupply(),
      r.positions.read.totalDebt(),
      r.positions.read.positionCount(),
      r.redemptions.read.payoutCount(),
      r.priceFeed.read.peekPrice(),
      r.positions.read.epoch(),
      r.minter.read.paused(),
      r.minter.read.mintsPaused(),
    ]);
  const [queuedCount, insertedCount, pendingCount, root, treeSize, reference] = await Promise.all([
    r.registry.read.queuedCount(),
    r.registry.read.insertedCount(),
    r.registry.read.pendingCount(),
    r.registry.read.root(),
    r.registry.read.size(),
    r.priceFeed.read.referencePrice(),
  ]);
  const [params, positions] = await Promise.all([
    Promise.all([
      r.positions.read.minCollateralRatioBps(),
      r.positions.read.liquidationRatioBps(),
      r.positions.read.liquidationBonusBps(),
      r.positions.read.systemFloorRatioBps(),
      r.positions.read.redistributionRewardBps(),
      r.positions.read.keeperRewardFloorZat(),
      r.redemptions.read.redemptionFeeBps(),
    ]),
    Promise.all(Array.from({ length: Number(n) }, (_, i) => r.positions.read.getPosition([BigInt(i + 1)]))),
  ]);
  const [
    minCollateralRatioBps,
    liquidationRatioBps,
    liquidationBonusBps,
    systemFloorRatioBps,
    rewardBps,
    keeperRewardFloorZat,
    feeBps,
  ] = params;
  return {
    held,
    unminted,
    backing,
    free,
    pending,
    supply,
    debt,
    payoutCount,
    price: round[0],
    frozen: round[2] === 2,
    reference: { price: reference[0], pending: reference[1], since: reference[2] },
    paused,
    mintsPaused,
    epoch: BigInt(epoch),
    params: {
      minCollateralRatioBps,
      liquidationRatioBps,
      liquidationBonusBps,
      systemFloorRatioBps,
      redistributionRewardBps: rewardBps,
      keeperRewardFloorZat,
      redemptionFeeBps: feeBps,
    },
    positions: positions.map((p) => ({ ...p, status: Number(p.status) })),
    queuedCount,
    insertedCount,
    pendingCount,
    chainTip: await r.registry.read.chainAt([queuedCount]),
    root,
    treeSize,
  };
}

/** Moves ZSD from the other holders to `to` until it holds `amount` (a market, in short). */
export async function gather({ s, owners }: Context, to: Address, amount: bigint) {
  const balance = (a: Address) => s.read.token.read.balanceOf([a]);
  let have = await balance(to);
  if (have >= amount) return;
  const holders = [...owners.values()].filter((a) => a.address !== to);
  const balances = await Promise.all(holders.map((a) => balance(a.address)));
  for (const [i, holder] of holders.entries()) {
    if (have >= amount) break;
    const give = min(balances[i]!, amount - have);
    if (give === 0n) continue;
    await s.receipt(await s.as(holder).token.write.transfer([to, give]));
    have += give;
  }
  expect(have >= amount, `gather ${amount} for ${to}`).toBe(true);
}

/**
 * How a position write picks its hint of where it lands in the ratio order: none (the bucket's head),
 * the one findInsertHint gives, or another position's id (maybe in another bucket, closed, or the
 * position itself). The outcome must be the same whichever: a hint changes only the gas.
 */
export type HintKind = "none" | "found" | "other";

export async function hintOf(
  { s }: Context,
  c: Chain,
  kind: HintKind,
  position: { positionId?: bigint; collateralZat: bigint; debt: bigint },
): Promise<bigint> {
  if (kind === "none" || position.debt === 0n) return 0n;
  if (kind === "other") return BigInt(((Number(position.positionId ?? 0n) * 7 + 3) % (c.positions.length + 2)) + 1);
  return findInsertHint(s.publicClient, s.read.positions.address, position);
}

export const value = (c: Chain, zat: bigint) => zat * c.price * ZAT_PRICE_TO_USD18;

/** What a liquidation of `p` seizes at `c`: the bonus, at least the keeper's floor over the debt's worth, as far as the collateral goes. */
export function seizedAt(c: Chain, p: { collateralZat: bigint; debt: bigint }) {
  const unit = c.price * ZAT_PRICE_TO_USD18;
  const bonus = (p.debt * (BPS + c.params.liquidationBonusBps)) / BPS / unit;
  return min(p.collateralZat, max(bonus, p.debt / unit + c.params.keeperRewardFloorZat));
}

/** A par redemption settles the position first, and redistribute takes it: under 100%, or within 4 zatoshi and 1 ppm of it. */
export const settles = (c: Chain, zat: bigint, debt: bigint) =>
  debt !== 0n && (zat < SETTLE_MARGIN_ZAT || value(c, zat - SETTLE_MARGIN_ZAT) < debt + debt / 1_000_000n);

/**
 * An exit that lowers the system's ratio must leave it at `floorBps` or more, as the position manager
 * computes it: the system floor for a withdrawal (recovery mode), 100% for a close or a whole repayment.
 */
export function exitError(c: Chain, collateralOut: bigint, debtOut: bigint, floorBps: bigint): string | null {
  const backingAfter = c.backing - min(collateralOut, c.backing);
  const debtAfter = c.debt - debtOut;
  if (debtAfter === 0n || backingAfter * c.debt >= c.backing * debtAfter) return null;
  if (value(c, backingAfter) * BPS < debtAfter * floorBps) return "SystemRatioTooLow";
  return null;
}
