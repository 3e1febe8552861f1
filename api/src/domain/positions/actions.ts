// Position actions a signer authorises with an EIP-712 signature and the relay
// sends for them: repay, withdraw collateral, close, liquidate. The terms to
// sign (domain, types, next nonce), and each request checked (amount,
// destination, deadline, signature and nonce), simulated and queued.
import { type Address, type Hex, encodeFunctionData, recoverTypedDataAddress } from "viem";
import {
  type Destination,
  closeTypedData,
  liquidateTypedData,
  repayTypedData,
  stableMinterAbi,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { SNARK_SCALAR_FIELD } from "@zsd/sdk/notes";
import { formatZec, formatZsd, parseZec, parseZsd } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { domainErrors } from "../errors.ts";
import {
  type PositionContext,
  conflict,
  inFlight,
  queueAction,
  readMinter,
  insertHintFor,
  readPositions,
  simulate,
  unprocessable,
  valueOf,
} from "./queue.ts";
import { actionAtNonce } from "./store.ts";
import { refuseRetiredKey, refuseReusedEnvelope } from "../redemptions/sealed-addresses.ts";

/** A deadline an hour on: long enough to sign and send, short enough that a lost signature expires. */
const SUGGESTED_DEADLINE_SECONDS = 3_600n;

/** How many of a signer's used nonces a signature is checked against before it is called invalid. */
const USED_NONCE_LOOKBACK = 8n;

/** Where released collateral goes, as a request names it: exactly one of the two. */
export type DestinationInput = { sealedAddress: Hex } | { noteCommitment: string };

interface Signed {
  deadline: number;
  signature: Hex;
}
export type ActionInput =
  | ({ action: "repay"; amount: string; payer: Address } & Signed)
  | ({ action: "withdraw"; amount: string; destination: DestinationInput } & Signed)
  | ({ action: "close"; maxDebt: string; minZec: string; destination: DestinationInput } & Signed)
  | ({
      action: "liquidate";
      liquidator: Address;
      maxDebt: string;
      minSeizedZec: string;
      minSeizedValue: string;
      destination: DestinationInput;
    } & Signed);

/**
 * The bounds each action's signature carries, by typed-data field, and the request field that names it:
 * a relay holding a signature can send it only within them (a breach reverts and moves nothing).
 */
const ACTION_BOUNDS = {
  repay: {
    maxAmount: "amount: the most ZSD burned; a debt a redemption shrank below it is repaid whole, and no more",
  },
  withdraw: {},
  close: {
    maxDebt: "maxDebt: the most ZSD burned (a redistribution onto the position raises the debt)",
    minZatOut: "minZec: the least ZEC released (a redemption lowers the collateral)",
  },
  liquidate: {
    maxDebt: "maxDebt: the most ZSD burned (a redistribution onto the position raises the debt)",
    minSeizedZat: "minSeizedZec: the least ZEC taken (a redemption lowers it)",
    minSeizedValue:
      "minSeizedValue: the least ZSD the ZEC taken is worth at the liquidation's price (a price fall takes more ZEC worth less)",
  },
} as const;

/** The request field whose bound a refusal breached, by the refusal's code: a problem names it as `bound`. */
const BREACHES = {
  repay: {},
  withdraw: {},
  close: { debt_above_maximum: "maxDebt", zat_out_below_minimum: "minZec" },
  liquidate: {
    debt_above_maximum: "maxDebt",
    zat_out_below_minimum: "minSeizedZec",
    seized_value_below_minimum: "minSeizedValue",
  },
} as const satisfies Record<ActionInput["action"], Record<string, string>>;

/** How the rules agent's reasons name the ZEC-moving actions. */
const ACTION_NOUN = { withdraw: "withdrawal", close: "close", liquidate: "liquidation" } as const;

/** What a signer signs for a position action through the relay. */
export async function actionTerms(ctx: PositionContext, chain: Chain, signer: Address) {
  const [nonce, now] = await Promise.all([readMinter<bigint>(chain, "nonces", [signer]), chain.now()]);
  const pending = await inFlight(ctx.db, signer);
  const domain = domainOf(chain);
  const zero = {
    positionId: 0n,
    nonce: 0n,
    deadline: 0n,
    sealedAddress: "0x" as Hex,
    noteCommitment: 0n,
    maxDebt: 0n,
    minZatOut: 0n,
    minSeizedZat: 0n,
    minSeizedValue: 0n,
  };
  return {
    object: "position_terms" as const,
    signer,
    nonce: (nonce + pending).toString(),
    chainTime: Number(now),
    suggestedDeadline: Number(now + SUGGESTED_DEADLINE_SECONDS),
    domain: { name: "ZSD Minter", version: "1", ...domain },
    types: {
      ...repayTypedData(domain, { ...zero, maxAmount: 0n, payer: signer }).types,
      ...withdrawCollateralTypedData(domain, { ...zero, amountZat: 0n }).types,
      ...closeTypedData(domain, zero).types,
      ...liquidateTypedData(domain, zero).types,
    },
    bounds: ACTION_BOUNDS,
  };
}

/** The bounds a close or a liquidation names, as the contract takes them (zero where the action has none). */
function boundsOf(input: ActionInput) {
  const parse = (field: string, value: string, unit: "ZSD" | "ZEC") => {
    try {
      return unit === "ZSD" ? parseZsd(value) : parseZec(value);
    } catch {
      throw domainErrors.invalid([{ field: `body.${field}`, message: `a ${unit} amount` }]);
    }
  };
  if (input.action === "close") {
    return {
      maxDebt: parse("maxDebt", input.maxDebt, "ZSD"),
      minZatOut: parse("minZec", input.minZec, "ZEC"),
      minSeizedZat: 0n,
      minSeizedValue: 0n,
    };
  }
  if (input.action === "liquidate") {
    return {
      maxDebt: parse("maxDebt", input.maxDebt, "ZSD"),
      minZatOut: 0n,
      minSeizedZat: parse("minSeizedZec", input.minSeizedZec, "ZEC"),
      minSeizedValue: parse("minSeizedValue", input.minSeizedValue, "ZSD"),
    };
  }
  return { maxDebt: 0n, minZatOut: 0n, minSeizedZat: 0n, minSeizedValue: 0n };
}

/** The minter's EIP-712 domain on this deployment. */
function domainOf(chain: Chain) {
  return { chainId: chain.deployment.chainId, verifyingContract: chain.minter };
}

/** The destination as the contract takes it, with the address custody opened (for the payout's `owner`). */
function destinationOf(
  ctx: PositionContext,
  input: DestinationInput,
  owner: Address,
): Destination & { address: string } {
  if ("sealedAddress" in input) {
    const field = "body.destination.sealedAddress";
    return {
      sealedAddress: input.sealedAddress,
      noteCommitment: 0n,
      address: ctx.options.sealed!.open(input.sealedAddress, owner, field),
    };
  }
  const commitment = BigInt(input.noteCommitment);
  if (commitment === 0n || commitment >= SNARK_SCALAR_FIELD) {
    throw domainErrors.invalid([
      { field: "body.destination.noteCommitment", message: "a field element above 0 and below the field modulus" },
    ]);
  }
  return { sealedAddress: "0x", noteCommitment: commitment, address: "" };
}

/** Checks a signed action, simulates it and queues it for the relay (on `chain`, one that relays). */
export async function requestAction(
  ctx: PositionContext,
  chain: Chain,
  accountId: string,
  positionId: string,
  input: ActionInput,
) {
  const id = BigInt(positionId);
  const position = await readPositions<{ owner: Address; status: number; collateralZat: bigint; debt: bigint }>(
    chain,
    "getPosition",
    [id],
  );
  if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
  const signer =
    input.action === "repay" ? input.payer : input.action === "liquidate" ? input.liquidator : position.owner;
  // The payout's owner is the signer (the position's owner, or the liquidator): the address is sealed for it.
  const to = "destination" in input ? destinationOf(ctx, input.destination, signer) : undefined;
  if (to?.address) await refuseRetiredKey(chain, to.sealedAddress, "body.destination.sealedAddress");
  let amount: bigint | undefined;
  if (input.action === "repay" || input.action === "withdraw") {
    try {
      amount = input.action === "repay" ? parseZsd(input.amount) : parseZec(input.amount);
    } catch {
      throw domainErrors.invalid([
        { field: "body.amount", message: `a ${input.action === "repay" ? "ZSD" : "ZEC"} amount` },
      ]);
    }
    if (amount === 0n) throw domainErrors.invalid([{ field: "body.amount", message: "must be above 0" }]);
  }
  if (to?.address && input.action === "withdraw" && amount! < ctx.options.minimumZat) {
    throw unprocessable(
      "payout_too_small",
      "Payout too small",
      `A payout to a Zcash address carries at least ${formatZec(ctx.options.minimumZat)} ZEC; ask for more or release into a note.`,
      { minimumZec: formatZec(ctx.options.minimumZat) },
    );
  }
  const [chainNonce, now] = await Promise.all([readMinter<bigint>(chain, "nonces", [signer]), chain.now()]);
  const deadline = BigInt(input.deadline);
  if (deadline < now) {
    throw unprocessable(
      "expired_signature",
      "Expired signature",
      `The signature's deadline ${deadline} has passed (chain time ${now}).`,
    );
  }
  const next = chainNonce + (await inFlight(ctx.db, signer));
  const bounds = boundsOf(input);
  const domain = domainOf(chain);
  const dest: Destination = { sealedAddress: to?.sealedAddress ?? "0x", noteCommitment: to?.noteCommitment ?? 0n };
  const typedAt = (nonce: bigint) =>
    input.action === "repay"
      ? repayTypedData(domain, { positionId: id, maxAmount: amount!, payer: signer, nonce, deadline })
      : input.action === "withdraw"
        ? withdrawCollateralTypedData(domain, { positionId: id, amountZat: amount!, ...dest, nonce, deadline })
        : input.action === "close"
          ? closeTypedData(domain, { positionId: id, ...bounds, ...dest, nonce, deadline })
          : liquidateTypedData(domain, { positionId: id, ...bounds, ...dest, nonce, deadline });
  const signedAt = async (nonce: bigint) =>
    (
      await recoverTypedDataAddress({ ...typedAt(nonce), signature: input.signature } as never).catch(() => undefined)
    )?.toLowerCase() === signer.toLowerCase();
  if (!(await signedAt(next))) {
    // The same signature again: at a nonce being relayed, or one the chain has taken.
    for (let n = next - 1n; n >= 0n && n >= chainNonce - USED_NONCE_LOOKBACK; n--) {
      if (!(await signedAt(n))) continue;
      const existing = await actionAtNonce(ctx.db, signer, n);
      throw conflict(
        "position_action_already_submitted",
        "Already submitted",
        n < chainNonce
          ? `This signature's nonce (${n}) was already used on the minter: sign again at ${next}.`
          : `This signature (nonce ${n}) is already being relayed.`,
        existing && existing.account_id === accountId ? { id: existing.id } : {},
      );
    }
    const who = input.action === "repay" ? "payer" : input.action === "liquidate" ? "liquidator" : "position's owner";
    throw unprocessable(
      "position_signature_invalid",
      "Invalid signature",
      `The signature is not the ${who}'s (${signer}) EIP-712 ${typedAt(next).primaryType} of these terms at nonce ${next} ` +
        "(GET /v1/positions/terms gives the domain, types and nonce).",
    );
  }
  const nonce = next;
  if (to?.address) await refuseReusedEnvelope(ctx.db, to.sealedAddress, signer, "body.destination.sealedAddress");
  // A repayment burns at most the debt; what is left is refiled by its new ratio.
  const hint =
    input.action === "repay"
      ? await insertHintFor(chain, {
          positionId: id,
          collateralZat: position.collateralZat,
          debt: position.debt - (amount! < position.debt ? amount! : position.debt),
        })
      : input.action === "withdraw" && amount! < position.collateralZat
        ? await insertHintFor(chain, {
            positionId: id,
            collateralZat: position.collateralZat - amount!,
            debt: position.debt,
          })
        : 0n;
  const calldata =
    input.action === "repay"
      ? encodeFunctionData({
          abi: stableMinterAbi,
          functionName: "repayWithSig",
          args: [id, amount!, signer, deadline, input.signature, hint],
        })
      : input.action === "withdraw"
        ? encodeFunctionData({
            abi: stableMinterAbi,
            functionName: "withdrawCollateralWithSig",
            args: [id, amount!, dest, deadline, input.signature, hint],
          })
        : input.action === "close"
          ? encodeFunctionData({
              abi: stableMinterAbi,
              functionName: "closeWithSig",
              args: [id, bounds.maxDebt, bounds.minZatOut, dest, deadline, input.signature],
            })
          : encodeFunctionData({
              abi: stableMinterAbi,
              functionName: "liquidateWithSig",
              args: [
                id,
                signer,
                { maxDebt: bounds.maxDebt, minSeizedZat: bounds.minSeizedZat, minSeizedValue: bounds.minSeizedValue },
                dest,
                deadline,
                input.signature,
              ],
            });
  // Only a call at the chain's nonce can be simulated: a later one waits for those before it.
  if (nonce === chainNonce) {
    await simulate(ctx, chain, calldata, "position_action_would_revert", BREACHES[input.action]);
  }
  // What the rules weigh: ZSD repaid, or the value of the ZEC the action takes out (all of it to close).
  const movedZat = input.action === "withdraw" ? amount! : position.collateralZat;
  const screened = {
    amount: input.action === "repay" ? amount! : await valueOf(ctx, chain, movedZat),
    address: signer,
    zcashAddress: to?.address || undefined,
    named:
      input.action === "repay"
        ? { action: "repayment", amount: formatZsd(amount!), unit: "ZSD" as const }
        : { action: ACTION_NOUN[input.action], amount: formatZec(movedZat), unit: "ZEC" as const },
  };
  return queueAction(
    ctx,
    accountId,
    {
      action: input.action,
      position_id: positionId,
      signer,
      signed_nonce: nonce.toString(),
      amount: amount?.toString() ?? null,
      zcash_address: to?.address || null,
      note_commitment: to && !to.address ? dest.noteCommitment.toString() : null,
      calldata,
    },
    screened,
  );
}
