// A payout custody could not make (an address it could not open or pay) holds
// its ZEC on-chain for the payout's owner, who redirects it: to another
// shielded address, sealed for that owner as any withdraw address, or into a
// fresh note. The owner signs; the relay pays the gas.
import { noteCommitment } from "../notes/index.ts";
import { redirectTypedData } from "../redeem.ts";
import { FlowError } from "./errors.ts";
import { type TypedDataSigner, follow } from "./flows.ts";
import type { ReleaseTo } from "./position-flows.ts";
import type { RedemptionsResource } from "./resources.ts";
import type { Sealer } from "./sealing.ts";
import type { Answer } from "./types.ts";

export type PayoutRedirect = Answer<"getPayoutRedirect">;

export interface RedirectParams {
  /** A redemption (red_…), or an on-chain payout id (a position's or a note withdrawal's payoutId). */
  id: string;
  to: ReleaseTo;
  /** The payout's owner: the redeemer, the position's owner key (positionOwnerKey), the liquidator. */
  signer: TypedDataSigner;
  /** How long to wait for `confirmed` (default 2 minutes). */
  timeoutMs?: number;
}

export async function redirectPayout(
  r: { redemptions: RedemptionsResource },
  sealer: Sealer,
  params: RedirectParams,
): Promise<PayoutRedirect> {
  const owner = params.signer.address ?? params.signer.account?.address;
  if (!owner) throw new FlowError("The signer has no address.", { code: "signer_without_address" });
  const payoutId = await onChainId(r, params.id);
  const send = async (fresh: boolean) => {
    const sealedAddress = "note" in params.to ? "0x" : await sealer.seal(params.to.zcashAddress, owner, fresh);
    const commitment = "note" in params.to ? noteCommitment(params.to.note) : 0n;
    const terms = await r.redemptions.terms(owner);
    const domain = (terms.typedData as unknown as { domain: Parameters<typeof redirectTypedData>[0] }).domain;
    const signature = await params.signer.signTypedData({
      ...redirectTypedData(domain, {
        id: payoutId,
        sealedAddress,
        noteCommitment: commitment,
        nonce: BigInt(terms.nonce),
        deadline: BigInt(terms.suggestedDeadline),
      }),
      ...(params.signer.account ? { account: params.signer.account } : {}),
    } as never);
    const signed = { deadline: terms.suggestedDeadline, signature };
    return r.redemptions.redirect(
      params.id,
      "note" in params.to ? { noteCommitment: commitment.toString(), ...signed } : { sealedAddress, ...signed },
    );
  };
  await ("note" in params.to ? send(false) : sealer.retryOnRotation(send));
  return follow({
    what: `The redirect of ${params.id}`,
    read: () => r.redemptions.getRedirect(params.id),
    until: "confirmed",
    failedCode: "redirect_failed",
    how: "redemptions.getRedirect()",
    timeoutMs: params.timeoutMs ?? 120_000,
  });
}

/** The payout's id on-chain: what the Redirect message signs. */
async function onChainId(r: { redemptions: RedemptionsResource }, id: string): Promise<bigint> {
  if (/^[0-9]+$/.test(id)) return BigInt(id);
  const redemption = await r.redemptions.get(id);
  if (redemption.redemptionId === null) {
    throw new FlowError(`Redemption ${id} has no payout on-chain yet: only a failed payout can be redirected.`, {
      code: "redirect_not_allowed",
    });
  }
  return BigInt(redemption.redemptionId);
}
