// The keeper's own position actions: a liquidation it pays with the relayer's
// ZSD, or a redistribution of a position under 100%, each paying the ZEC it
// earns to the keeper's Zcash address sealed afresh for the relayer. Queued
// like anyone's, unscreened, and skipped when the minter would refuse them.
import { type Address, encodeFunctionData } from "viem";
import { type LiquidationBounds, stableMinterAbi, stableTokenAbi } from "@zsd/sdk";
import { sealAddress } from "@zsd/sdk/seal";
import type { Chain } from "../../adapters/chain.ts";
import { DomainError } from "../errors.ts";
import { type PositionContext, queueAction } from "./queue.ts";

/**
 * The keeper's liquidation: the relayer repays with its own ZSD and takes
 * the collateral to `zcashAddress`, which it seals for itself like anyone.
 * Queued, it may be sent after the price or the position moved: `bounds`
 * (from what the keeper read) make the minter refuse it then.
 */
export function queueKeeperLiquidation(
  ctx: PositionContext,
  chain: Chain,
  relayer: Address,
  positionId: bigint,
  zcashAddress: string,
  bounds: LiquidationBounds,
) {
  return queueKeeper(ctx, chain, relayer, positionId, zcashAddress, bounds);
}

/**
 * The keeper's redistribution of a position under 100%: its debt and
 * collateral are spread over the other positions, and the reward is paid to
 * `zcashAddress`. Costs the relayer no ZSD.
 */
export function queueKeeperRedistribution(
  ctx: PositionContext,
  chain: Chain,
  relayer: Address,
  positionId: bigint,
  zcashAddress: string,
) {
  return queueKeeper(ctx, chain, relayer, positionId, zcashAddress, "redistribute");
}

async function queueKeeper(
  ctx: PositionContext,
  chain: Chain,
  relayer: Address,
  positionId: bigint,
  zcashAddress: string,
  how: LiquidationBounds | "redistribute",
) {
  const action = how === "redistribute" ? "redistribute" : "liquidate";
  // Sealed afresh each time with the current key, for the relayer as the payout's owner: custody pays an envelope once.
  const key = await chain.currentSealKey();
  const context = { chainId: chain.deployment.chainId, redemptions: chain.redemptions, owner: relayer };
  const network = ctx.options.environment === "production" ? "mainnet" : "testnet";
  const sealedAddress = sealAddress(key, context, zcashAddress, network);
  const to = { sealedAddress, noteCommitment: 0n };
  const calldata =
    how === "redistribute"
      ? encodeFunctionData({ abi: stableMinterAbi, functionName: "redistribute", args: [positionId, to] })
      : encodeFunctionData({ abi: stableMinterAbi, functionName: "liquidate", args: [positionId, how, to] });
  try {
    await chain.client.call({ account: relayer, to: chain.minter, data: calldata });
  } catch {
    return undefined;
  }
  return queueAction(ctx, null, {
    action,
    position_id: positionId.toString(),
    signer: relayer,
    zcash_address: zcashAddress,
    calldata,
  }).catch((error: unknown) => {
    if (error instanceof DomainError && error.kind === "conflict") return undefined;
    throw error;
  });
}

/** The token balance of `holder`, for the keeper. */
export function tokenBalanceOf(chain: Chain, token: Address, holder: Address) {
  return chain.read(() =>
    chain.client.readContract({ address: token, abi: stableTokenAbi, functionName: "balanceOf", args: [holder] }),
  );
}
