import type { Address, Client, Hex } from "viem";
import { readContract } from "viem/actions";
import { positionManagerAbi } from "./generated/abis.ts";

/** The minter's EIP-712 domain: `StableMinter` signs as "ZSD Minter", version 1. */
export interface MinterDomain {
  chainId: number;
  verifyingContract: Address;
}

/**
 * Where released collateral goes: a shielded Zcash address paid by custody,
 * sealed to custody's key for the payout's owner (the position's owner; the
 * liquidator for a liquidation), or a new note leaf `Poseidon(amount,
 * noteCommitment)` (then `sealedAddress` is "0x").
 */
export interface Destination {
  sealedAddress: Hex;
  noteCommitment: bigint;
}

const domainOf = (domain: MinterDomain) => ({ name: "ZSD Minter", version: "1", ...domain }) as const;

/**
 * What a payer signs so that a relay can burn its ZSD against a position's debt (`repayWithSig`):
 * `min(maxAmount, debt)` is burned when it lands, so a debt a redemption shrank meanwhile is repaid
 * whole and the payer never burns more than `maxAmount`.
 */
export function repayTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; maxAmount: bigint; payer: Address; nonce: bigint; deadline: bigint },
) {
  return {
    domain: domainOf(domain),
    types: {
      Repay: [
        { name: "positionId", type: "uint256" },
        { name: "maxAmount", type: "uint256" },
        { name: "payer", type: "address" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Repay",
    message,
  } as const;
}

/** What the owner signs to take collateral out of a position (`withdrawCollateralWithSig`). */
export function withdrawCollateralTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; amountZat: bigint; nonce: bigint; deadline: bigint } & Destination,
) {
  return {
    domain: domainOf(domain),
    types: {
      WithdrawCollateral: [
        { name: "positionId", type: "uint256" },
        { name: "amountZat", type: "uint256" },
        { name: "sealedAddress", type: "bytes" },
        { name: "noteCommitment", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "WithdrawCollateral",
    message,
  } as const;
}

/**
 * The bounds a close or a liquidation carries: the most ZSD its signer burns (a redistribution onto the
 * position raises the debt) and the least ZEC it takes (a redemption or a price fall lowers it). A breach
 * reverts `DebtAboveMaximum` or `ZatOutBelowMinimum` and moves nothing.
 */
export interface ExitBounds {
  maxDebt: bigint;
  minZatOut: bigint;
}

const closeTypes = [
  { name: "positionId", type: "uint256" },
  { name: "maxDebt", type: "uint256" },
  { name: "minZatOut", type: "uint256" },
  { name: "sealedAddress", type: "bytes" },
  { name: "noteCommitment", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "deadline", type: "uint256" },
] as const;

/**
 * What a liquidator accepts (`liquidate` and `liquidateWithSig`): at most `maxDebt` burned, at least
 * `minSeizedZat` taken, and the ZEC taken worth at least `minSeizedValue` ZSD at the liquidation's price
 * (0 for no floor; the debt seen is break-even). A price fall takes all the collateral once it covers
 * less than the bonus: more ZEC, worth less than the debt, which only the value bound refuses.
 */
export interface LiquidationBounds {
  maxDebt: bigint;
  minSeizedZat: bigint;
  minSeizedValue: bigint;
}

const liquidateTypes = [
  { name: "positionId", type: "uint256" },
  { name: "maxDebt", type: "uint256" },
  { name: "minSeizedZat", type: "uint256" },
  { name: "minSeizedValue", type: "uint256" },
  { name: "sealedAddress", type: "bytes" },
  { name: "noteCommitment", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "deadline", type: "uint256" },
] as const;

/** What the owner signs to close a position (`closeWithSig`): the debt is burned from the owner, within the bounds. */
export function closeTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & ExitBounds & Destination,
) {
  return { domain: domainOf(domain), types: { Close: closeTypes }, primaryType: "Close", message } as const;
}

/** What a liquidator signs so that a relay can liquidate with its ZSD (`liquidateWithSig`), within its bounds. */
export function liquidateTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & LiquidationBounds & Destination,
) {
  return {
    domain: domainOf(domain),
    types: { Liquidate: liquidateTypes },
    primaryType: "Liquidate",
    message,
  } as const;
}

/**
 * Positions one `findInsertHint` call walks at most: about 4,500 gas each, so a call stays far under
 * the gas cap RPC nodes put on `eth_call` however crowded the bucket.
 */
export const HINT_STEPS_PER_CALL = 2_000n;

/**
 * The hint for a write that leaves a position holding `collateralZat` against `debt` (its riskier
 * neighbour in the ratio order, or 0): what `StableMinter`'s position writes take as their last
 * argument, and a mint request its `hint`. Pass `positionId` when the write is to an existing
 * position (0 for a new one), so that the walk passes over it. A hint only saves gas: one gone
 * stale before the write lands still files the position in its place.
 */
export async function findInsertHint(
  client: Client,
  positionManager: Address,
  position: { positionId?: bigint; collateralZat: bigint; debt: bigint },
): Promise<bigint> {
  let from = 0n;
  // A bucket holds at most every position there is; the bound only guards against a node that answers nonsense.
  for (let call = 0; call < 1_000; call++) {
    const [hint, found] = await readContract(client, {
      address: positionManager,
      abi: positionManagerAbi,
      functionName: "findInsertHint",
      args: [position.positionId ?? 0n, position.collateralZat, position.debt, from, HINT_STEPS_PER_CALL],
    });
    if (found || hint === from) return hint;
    from = hint;
  }
  return from;
}
