// Our contracts' refusals, decoded from their ABIs and said in words a holder
// can act on: a failed mint or redemption carries the custom error's code
// (snake case, as ContractRevertError names it) and one of these sentences.
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  decodeErrorResult,
  formatUnits,
  isHex,
  toFunctionSelector,
} from "viem";
import {
  collateralRegistryAbi,
  governanceTokenAbi,
  positionManagerAbi,
  redemptionsAbi,
  stableGovernorAbi,
  stableMinterAbi,
  stableTokenAbi,
} from "@zsd/sdk";
import { formatZec, formatZsd } from "@zsd/sdk/units";
import type { Chain } from "../adapters/chain.ts";
import { type ContractError, ContractRevertError } from "./errors.ts";

/**
 * Every custom error a relayed call can end in: a mint reaches the registry,
 * the verifier and the position manager, a redemption burns through the token, a relayed vote or
 * delegation meets the governor or its token. One entry per
 * selector (the same error is declared by several contracts).
 */
const ERRORS_ABI = [
  ...new Map(
    [
      stableMinterAbi,
      positionManagerAbi,
      redemptionsAbi,
      collateralRegistryAbi,
      stableTokenAbi,
      stableGovernorAbi,
      governanceTokenAbi,
    ]
      .flatMap((abi) => abi.filter((item) => item.type === "error"))
      .map((item) => [toFunctionSelector(item as never), item] as const),
  ).values(),
];

/** The revert data somewhere in a viem error's chain (RPC nodes put it in `data` or `data.data`). */
function revertData(error: BaseError): Hex | undefined {
  let found: Hex | undefined;
  error.walk((e) => {
    const data = (e as { data?: unknown }).data;
    const candidate = typeof data === "object" && data !== null ? (data as { data?: unknown }).data : data;
    if (typeof candidate === "string" && isHex(candidate) && candidate.length >= 10) found = candidate;
    return found !== undefined;
  });
  return found;
}

/** The contract's refusal in `error` (a viem call, estimate or send), if it reverted with one of our errors. */
export function decodeRevert(error: unknown): ContractRevertError | undefined {
  if (error instanceof ContractRevertError) return error;
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) {
    return new ContractRevertError(reverted.data.errorName as ContractError, reverted.data.args ?? []);
  }
  const data = revertData(error);
  if (!data) return undefined;
  try {
    const decoded = decodeErrorResult({ abi: ERRORS_ABI, data });
    return new ContractRevertError(decoded.errorName as ContractError, decoded.args ?? []);
  } catch {
    return undefined; // Not one of ours (a panic, a plain string, another contract).
  }
}

const usd = (usd18: bigint) =>
  `$${Number(formatUnits(usd18, 18)).toLocaleString("en-US", { maximumFractionDigits: 2 })}`;
const seconds = (s: bigint) => `${Number(s).toLocaleString("en-US")} s`;
const when = (unix: bigint) => new Date(Number(unix) * 1000).toISOString();
const PAYOUT_STATUS = ["none", "requested", "completed", "failed (its ZEC held for the owner)", "redirected"];
const POSITION_STATUS = ["none", "open", "liquidated", "closed"];
const PROPOSAL_STATES = ["pending", "active", "canceled", "defeated", "succeeded", "queued", "expired", "executed"];

type Args = readonly unknown[];
type Explain = (args: Args, now: bigint) => string;
const n = (args: Args, i: number) => BigInt(args[i] as bigint);

/**
 * A sentence per refusal. Only errors a relayed mint or redemption can meet
 * are here; any other is named with its arguments.
 */
const REASONS: Partial<Record<ContractError, Explain>> = {
  PriceFrozen: (a) =>
    `Neither ZEC/USD feed can be trusted now (stale, broken, or disagreeing after a jump): the contracts hold the last good price (${formatUnits(n(a, 0), 8)} USD) and refuse mints, redemptions and liquidations until a feed recovers.`,
  EnforcedPause: () =>
    "The contract is paused by the operator; nothing can be minted, spent, liquidated or redeemed until it resumes (repayments and closes go on).",
  InvalidProof: () => "The proof does not verify with these public inputs against the minter's verification key.",
  NullifierAlreadySpent: () => "This deposit was already minted (its nullifier is spent).",
  UnknownRoot: () => "The proof's deposit-tree root was never a root of the collateral registry.",
  RootExpired: (a, now) =>
    `The proof's deposit-tree root was superseded ${seconds(now - n(a, 1))} ago; the minter accepts a root for ${seconds(n(a, 2))} after that. Make a new proof against the current root.`,
  InsufficientCollateralValue: (a) =>
    `At the current ZEC/USD price the proven collateral floor is worth ${usd(n(a, 0))}; this mint needs ${usd(n(a, 1))} at the minimum collateral ratio.`,
  InvalidMintAmount: (a) => `A mint of ${formatZsd(n(a, 0))} ZSD is out of the allowed range.`,
  InvalidRecipient: (a) => `The recipient ${String(a[0])} cannot receive ZSD.`,
  FeeExceedsAmount: (a) => `The relayer fee (${formatZsd(n(a, 0))} ZSD) exceeds the mint (${formatZsd(n(a, 1))} ZSD).`,
  MissingRelayer: (a) => `The proof pays a fee of ${formatZsd(n(a, 0))} ZSD but names no relayer.`,
  SignatureExpired: (a) =>
    `The signature expired at ${when(n(a, 0))} (its deadline): sign it again with a later deadline.`,
  InvalidSignature: (a) =>
    `The signature is not ${String(a[0])}'s EIP-712 signature of this call at the signer's current nonce (wrong signer, parameters, deadline or nonce).`,
  InvalidAmount: (a) => `A redemption of ${formatZsd(n(a, 0))} ZSD is not allowed.`,
  InvalidSealedAddress: (a) =>
    `A sealed address of ${String(a[0])} bytes is not allowed (66 to 577): seal the address to the key of GET /v1/relay.`,
  UnsupportedSealVersion: (a) => `Sealed address version ${String(a[0])} is not supported (only 1).`,
  UnknownSealKey: (a) =>
    `The address is sealed to key ${String(a[0])}, which Redemptions does not know: seal it to the key of GET /v1/relay.`,
  SealKeyRetired: (a) =>
    `The address is sealed to key ${String(a[0])}, retired at ${when(n(a, 1))}: seal it to the key of GET /v1/relay.`,
  RedemptionTooSmall: (a) => `${formatZsd(n(a, 0))} ZSD is worth less than one zatoshi at the current price.`,
  RedemptionExceedsDebt: (a) =>
    `A redemption of ${formatZsd(n(a, 0))} ZSD is more than all positions owe (${formatZsd(n(a, 1))} ZSD).`,
  SystemRatioTooLow: (a) =>
    `Recovery mode: the positions would be worth $${formatZsd(n(a, 0))}, under the $${formatZsd(n(a, 1))} the system floor ratio needs.`,
  PositionNotOpen: (a) => `Position ${String(a[0])} is ${POSITION_STATUS[Number(a[1])] ?? "unknown"}, not open.`,
  NotPositionOwner: (a) => `${String(a[1])} does not own position ${String(a[0])}.`,
  InvalidRepayAmount: (a) =>
    `A repayment of ${formatZsd(n(a, 0))} ZSD is not allowed: the position owes ${formatZsd(n(a, 1))} ZSD.`,
  DebtBelowMinimum: (a) =>
    `A position owes nothing or at least ${formatZsd(n(a, 1))} ZSD, not ${formatZsd(n(a, 0))} ZSD: mint at least that much, and repay all of a position's debt or leave at least that much.`,
  InvalidWithdrawAmount: (a) =>
    `A withdrawal of ${formatZec(n(a, 0))} ZEC is not allowed: the position holds ${formatZec(n(a, 1))} ZEC.`,
  PositionUndercollateralized: (a) =>
    `Position ${String(a[0])} would be worth $${formatZsd(n(a, 1))}, under the $${formatZsd(n(a, 2))} the minimum ratio needs.`,
  PositionNotLiquidatable: (a) =>
    `Position ${String(a[0])} is worth $${formatZsd(n(a, 1))}, not under its liquidation threshold of $${formatZsd(n(a, 2))}.`,
  InvalidDestination: () => "Give either a Zcash address or a note commitment for the released ZEC, not both.",
  InvalidSpendAmount: (a) => `A note spend of ${formatZec(n(a, 0))} ZEC is not allowed.`,
  NotPayoutOwner: (a) =>
    `${String(a[1])} does not own payout ${String(a[0])}: only its owner (who redeemed, or owned the position or note) may redirect it.`,
  PayoutNotFailed: (a) =>
    `Payout ${String(a[0])} is ${PAYOUT_STATUS[Number(a[1])] ?? "unknown"}: only a failed payout, its ZEC held for the owner, can be redirected.`,
  InvalidRedirectDestination: () =>
    "A redirect names exactly one destination: a Zcash address or a note commitment, not both and not neither.",
  PositionNotUnderwater: (a) =>
    `Position ${String(a[0])} is worth $${formatZsd(n(a, 1))}, not under its debt of ${formatZsd(n(a, 2))} ZSD (nor within a redemption's margin of 4 zatoshi and 1 ppm): liquidate it instead.`,
  NoDebtToRedistributeTo: (a) =>
    `Position ${String(a[0])} holds all the debt: there is no other position to redistribute it over.`,
  UnderwaterPositionsPending: (a) =>
    `Positions under 100% (or within a redemption's margin of it) are waiting that this redemption will not settle itself (more than it settles, or ${String(a[0])} whose settling would leave one nobody can take the debt of): call redistribute (or redistributeMany) on them first, then redeem.`,
  ZatOutBelowMinimum: (a) =>
    `The call would release ${formatZec(n(a, 0))} ZEC, under the ${formatZec(n(a, 1))} ZEC its signer's bound accepts (a close's minZec, a liquidation's minSeizedZec, a redeem permit's minZec): nothing moved. Read the position or quote again and sign new bounds.`,
  DebtAboveMaximum: (a) =>
    `The call would burn ${formatZsd(n(a, 0))} ZSD, above the ${formatZsd(n(a, 1))} ZSD its signer's maxDebt accepts (a redistribution onto the position raised its debt): nothing moved. Read the position again and sign new bounds.`,
  SeizedValueBelowMinimum: (a) =>
    `The ZEC the liquidation would take is worth ${formatZsd(n(a, 0))} ZSD at its price, under the ${formatZsd(n(a, 1))} ZSD its liquidator's minSeizedValue accepts: nothing moved.`,
  NothingToRedistribute: () =>
    "None of the positions named can be redistributed now: each is cleared already, not under 100%, or the only one left with debt.",
  PayoutNotPending: (a) => `Payout ${String(a[0])} is ${PAYOUT_STATUS[Number(a[1])] ?? "settled"}, not requested.`,
  ERC20InsufficientBalance: (a) =>
    `${String(a[0])} holds ${formatZsd(n(a, 1))} ZSD; this needs ${formatZsd(n(a, 2))} ZSD.`,
  GovernorInvalidSignature: (a) =>
    `The ballot is not ${String(a[0])}'s signature of this proposal and support at a nonce the governor takes now.`,
  GovernorAlreadyCastVote: (a) => `${String(a[0])} has already voted on this proposal.`,
  GovernorUnexpectedProposalState: (a) =>
    `Proposal ${String(a[0])} is ${PROPOSAL_STATES[Number(a[1])] ?? "not active"}; votes are taken while it is active.`,
  GovernorNonexistentProposal: (a) => `No proposal ${String(a[0])} exists on the governor.`,
  VotesExpiredSignature: (a) => `The delegation's signature expired at ${when(n(a, 0))}.`,
  InvalidAccountNonce: (a) => `${String(a[0])}'s nonce is ${String(a[1])}; the signature was made for another.`,
  AccessControlUnauthorizedAccount: (a) =>
    `The relay's account ${String(a[0])} lacks a role the contract requires (an operator must grant it).`,
};

/** The failure a relayed call's refusal becomes: its code and a reason that names the cause. */
export function explainRevert(revert: ContractRevertError, nowSeconds: bigint): { code: string; reason: string } {
  const explain = REASONS[revert.errorName];
  let reason: string | undefined;
  try {
    reason = explain?.(revert.args, nowSeconds);
  } catch {
    // Arguments of an unexpected shape: fall back to naming the error.
  }
  return {
    code: revert.code,
    reason: reason ?? `The contract refused with ${revert.errorName}(${revert.args.map((a) => String(a)).join(", ")}).`,
  };
}

/** Why a relayed call failed: a stable code and a sentence, stored on the mint or redemption. */
export interface Failure {
  code: string;
  reason: string;
}

/** The refusal in `error` in words, timed by the chain's clock (a stale price's age is the contract's view). */
export async function refusalOf(chain: Chain, error: unknown): Promise<Failure | undefined> {
  const revert = decodeRevert(error);
  if (!revert) return undefined;
  const now = await chain.client.getBlock({ blockTag: "latest" }).then(
    (block) => block.timestamp,
    () => BigInt(Math.floor(Date.now() / 1000)),
  );
  return explainRevert(revert, now);
}

/**
 * Why a mined transaction reverted: its call replayed on the state it was
 * mined on (the block before; exact when it was alone in its block, as on a
 * node that mines each transaction, and the nearest view otherwise).
 */
export async function refusalOfMined(
  chain: Chain,
  call: { from: Address; to: Address; data: Hex; blockNumber: bigint },
): Promise<Failure> {
  try {
    await chain.client.call({
      account: call.from,
      to: call.to,
      data: call.data,
      blockNumber: call.blockNumber - 1n,
    });
  } catch (error) {
    const refusal = await refusalOf(chain, error);
    if (refusal) return refusal;
  }
  return { code: "transaction_reverted", reason: "The transaction reverted on-chain without a refusal we could read." };
}
