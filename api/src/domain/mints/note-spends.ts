// Note spends the relay sends on a proof instead of a signature: a note's ZEC
// withdrawn to a sealed Zcash address (a payout), or added to an open
// position (a top-up). Each proof is checked against the binding it must
// carry, the call simulated, and the spend queued.
import { type Address, type Hex, encodeFunctionData } from "viem";
import {
  type Groth16Proof,
  bindingHash,
  noteSpend,
  publicSignalsFromArray,
  stableMinterAbi,
  toSolidityProof,
} from "@zsd/sdk";
import { formatZec } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { domainErrors } from "../errors.ts";
import {
  type PositionContext,
  queueAction,
  insertHintFor,
  readPositions,
  simulate,
  unprocessable,
  valueOf,
} from "../positions/queue.ts";
import { refuseRetiredKey, refuseReusedEnvelope } from "../redemptions/sealed-addresses.ts";

export interface SpendInput {
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: "groth16"; curve: "bn128" };
  publicSignals: string[];
}

/**
 * A note's ZEC out to a shielded Zcash address, proven with a proof bound to
 * that address and the payout's owner (who may redirect it if custody cannot pay).
 */
export async function withdrawNote(
  ctx: PositionContext,
  chain: Chain,
  accountId: string,
  input: SpendInput & { sealedAddress: Hex; owner: Address },
) {
  const { sealedAddress } = input;
  const zcashAddress = ctx.options.sealed!.open(sealedAddress, input.owner, "body.sealedAddress");
  await refuseRetiredKey(chain, sealedAddress, "body.sealedAddress");
  const signals = publicSignalsFromArray(input.publicSignals);
  if (signals.collateralFloorZat < ctx.options.minimumZat) {
    throw unprocessable(
      "payout_too_small",
      "Payout too small",
      `A payout to a Zcash address carries at least ${formatZec(ctx.options.minimumZat)} ZEC.`,
      { minimumZec: formatZec(ctx.options.minimumZat) },
    );
  }
  const { owner } = input;
  const binding = bindingHash({
    chainId: BigInt(chain.deployment.chainId),
    minter: chain.minter,
    sealedAddress,
    owner,
  });
  // The address stays out of the answer's words: they may reach a log.
  await ctx.proofs.checkSpend(chain, input, binding, `a withdrawal to this sealed address owned by ${owner}`);
  await refuseReusedEnvelope(ctx.db, sealedAddress, input.owner, "body.sealedAddress");
  const calldata = encodeFunctionData({
    abi: stableMinterAbi,
    functionName: "withdrawNote",
    args: [toSolidityProof(input.proof as Groth16Proof), noteSpend(signals), sealedAddress, owner],
  });
  await simulate(ctx, chain, calldata, "withdrawal_would_revert");
  return queueAction(ctx, accountId, {
    action: "withdraw_note",
    position_id: null,
    amount: signals.collateralFloorZat.toString(),
    zcash_address: zcashAddress,
    // The payout's owner (no nonce: the proof, not a signature, authorises the spend).
    signer: owner,
    nullifier_hash: signals.nullifierHash.toString(),
    calldata,
  });
}

/** A note's ZEC added to an open position, proven with a proof bound to that position. */
export async function topUp(
  ctx: PositionContext,
  chain: Chain,
  accountId: string,
  positionId: string,
  input: SpendInput,
) {
  const id = BigInt(positionId);
  const position = await readPositions<{ owner: Address; status: number; collateralZat: bigint; debt: bigint }>(
    chain,
    "getPosition",
    [id],
  );
  if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
  const signals = publicSignalsFromArray(input.publicSignals);
  const binding = bindingHash({ chainId: BigInt(chain.deployment.chainId), minter: chain.minter, positionId: id });
  await ctx.proofs.checkSpend(chain, input, binding, `a top-up of position ${positionId}`);
  const calldata = encodeFunctionData({
    abi: stableMinterAbi,
    functionName: "topUp",
    args: [
      toSolidityProof(input.proof as Groth16Proof),
      noteSpend(signals),
      id,
      await insertHintFor(chain, {
        positionId: id,
        collateralZat: position.collateralZat + signals.collateralFloorZat,
        debt: position.debt,
      }),
    ],
  });
  await simulate(ctx, chain, calldata, "position_action_would_revert");
  return queueAction(
    ctx,
    accountId,
    {
      action: "top_up",
      position_id: positionId,
      amount: signals.collateralFloorZat.toString(),
      nullifier_hash: signals.nullifierHash.toString(),
      calldata,
    },
    // Signed by nobody (the proof authorises it): the rules look at the position's owner.
    {
      amount: await valueOf(ctx, chain, signals.collateralFloorZat),
      address: position.owner,
      named: { action: "top-up", amount: formatZec(signals.collateralFloorZat), unit: "ZEC" },
    },
  );
}
