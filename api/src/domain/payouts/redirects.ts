// Redirects of failed payouts. Custody could not pay a payout (a redemption,
// collateral released from a position, a withdrawn note): the attestor failed
// it on-chain and its ZEC is held for its owner (workers/payouts/payouts.ts, "held").
// The owner signs an EIP-712 Redirect on the Redemptions contract and the
// relay sends it with redirectWithSig: to another shielded address (a new
// payout, paid like any other) or into a new note. Everything the contract
// would refuse is refused here first, so that nothing is queued to fail.
import { type Address, type Hex, encodeFunctionData, recoverTypedDataAddress } from "viem";
import { redemptionsAbi, redirectTypedData } from "@zsd/sdk";
import { SNARK_SCALAR_FIELD } from "@zsd/sdk/notes";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { isRefusedByCompliance } from "../compliance/compliance.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { randomId } from "../../adapters/ids.ts";
import { type SealedAddresses, refuseRetiredKey, refuseReusedEnvelope } from "../redemptions/sealed-addresses.ts";
import { refusalOf } from "../reverts.ts";
import { burnedRedemptionOf } from "../redemptions/store.ts";
import { ON_CHAIN } from "./status.ts";
import { type RedirectRow, insertRedirect, latestRedirect, liveRedirectOf, redirectAtNonce } from "./store.ts";

export type { RedirectRow } from "./store.ts";

const FAILED = ON_CHAIN.failed;

/** How many of the owner's used nonces a signature is checked against before it is called invalid. */
const USED_NONCE_LOOKBACK = 8n;

export type RedirectInput = ({ sealedAddress: Hex } | { noteCommitment: string }) & {
  deadline: number;
  signature: Hex;
};

/**
 * A redirect as the service reads it, for the HTTP layer to present: the row,
 * the payout it made and the ZEC it moved when known, and whether the asking
 * account is the one that asked for it (only that account sees the address
 * custody opened for it).
 */
export interface RedirectState {
  row: RedirectRow & { payout_status?: string | null; payout_txid?: string | null; zat_held?: string | null };
  own: boolean;
}

const conflict = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("conflict", code, title, detail, facts);
const unprocessable = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("unprocessable", code, title, detail, facts);

export class RedirectService {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    private readonly options: {
      environment: "sandbox" | "production";
      /** Whether a relay worker sends what is queued here. */
      relaying: boolean;
      /** Custody's seal keys for this deployment: a redirect's address is opened for the payout's owner. */
      sealed?: SealedAddresses;
    },
  ) {}

  /**
   * The on-chain payout an id names: `red_…` (a redemption this account
   * requested, once burned) or the payout's on-chain id (any payout: a
   * position's or a note's too; the owner's signature is what counts).
   */
  async #payoutId(accountId: string, id: string): Promise<bigint> {
    if (/^\d+$/.test(id)) return BigInt(id);
    const request = await burnedRedemptionOf(this.db, accountId, id);
    if (!request) throw domainErrors.notFound(`Redemption ${id}`);
    if (request.redemption_id === null) {
      throw conflict(
        "payout_not_failed",
        "Payout not failed",
        `Redemption ${id} has not been burned on-chain: there is no payout to redirect.`,
      );
    }
    return BigInt(request.redemption_id);
  }

  /** Checks a signed redirect of a failed payout, simulates it and queues it for the relay. */
  async request(accountId: string, id: string, input: RedirectInput): Promise<RedirectState> {
    const chain = this.chain;
    const sealed = this.options.sealed;
    if (!chain || !sealed || !this.options.relaying) {
      throw domainErrors.unavailable("Redirects (no deployment or relayer key is configured)");
    }
    const payoutId = await this.#payoutId(accountId, id);
    const sealedAddress: Hex = "sealedAddress" in input ? input.sealedAddress : "0x";
    const noteCommitment = "noteCommitment" in input ? BigInt(input.noteCommitment) : 0n;
    if ("noteCommitment" in input && (noteCommitment === 0n || noteCommitment >= SNARK_SCALAR_FIELD)) {
      throw domainErrors.invalid([
        { field: "body.noteCommitment", message: "a field element above 0 and below the field modulus" },
      ]);
    }
    const read = <T>(functionName: string, args: readonly unknown[]) =>
      chain.read(
        () =>
          chain.client.readContract({
            address: chain.redemptions,
            abi: redemptionsAbi,
            functionName,
            args,
          } as never) as Promise<T>,
      );
    const payout = await read<{ owner: Address; status: number; zatDue: bigint }>("getPayout", [payoutId]);
    if (payout.status === 0) throw domainErrors.notFound(`Payout ${payoutId}`);
    // Sealed for the payout's owner, who signs: opened before anything else is checked.
    const withdrawAddress =
      sealedAddress === "0x" ? "" : sealed.open(sealedAddress, payout.owner, "body.sealedAddress");
    if (withdrawAddress) await refuseRetiredKey(chain, sealedAddress, "body.sealedAddress");
    if (payout.status !== FAILED) {
      const now =
        payout.status === 1 ? "is still being paid" : payout.status === 2 ? "was paid" : "was already redirected";
      throw conflict(
        "payout_not_failed",
        "Payout not failed",
        `Payout ${payoutId} ${now}: only a failed payout, its ZEC held for the owner, can be redirected.`,
      );
    }
    if (withdrawAddress && (await isRefusedByCompliance(this.db, payoutId))) {
      // Paying it elsewhere would undo the refusal; in a note its ZEC stays in the pool, where a later mint or
      // withdrawal is screened again.
      throw conflict(
        "payout_compliance_rejected",
        "Payout refused by compliance",
        `Compliance review refused payout ${payoutId}: its ZEC cannot be redirected to another address through ` +
          "this API (a redirect made on-chain is held for review before it is paid). The owner may redirect it " +
          "into a note (noteCommitment), where it stays in the pool, or ask the operator's compliance team to " +
          "review it.",
        { payoutId: payoutId.toString() },
      );
    }
    const live = await liveRedirectOf(this.db, payoutId);
    if (live) {
      throw conflict(
        "redirect_already_submitted",
        "Redirect already submitted",
        `Payout ${payoutId} is already being redirected (${live.status}).`,
        live.account_id === accountId ? { id: live.id } : {},
      );
    }
    const deadline = BigInt(input.deadline);
    const [chainNonce, now] = await Promise.all([read<bigint>("nonces", [payout.owner]), chain.now()]);
    if (deadline < now) {
      throw unprocessable(
        "expired_signature",
        "Expired signature",
        `The signature's deadline ${deadline} has passed (chain time ${now}): sign the redirect again with a later deadline.`,
      );
    }
    const domain = { chainId: chain.deployment.chainId, verifyingContract: chain.redemptions };
    const signerAt = (nonce: bigint) =>
      recoverTypedDataAddress({
        ...redirectTypedData(domain, { id: payoutId, sealedAddress, noteCommitment, nonce, deadline }),
        signature: input.signature,
      }).catch(() => undefined);
    const signer = await signerAt(chainNonce);
    if (signer?.toLowerCase() !== payout.owner.toLowerCase()) {
      for (let n = chainNonce - 1n; n >= 0n && n >= chainNonce - USED_NONCE_LOOKBACK; n--) {
        if ((await signerAt(n))?.toLowerCase() === payout.owner.toLowerCase()) {
          throw conflict(
            "redirect_already_submitted",
            "Redirect already submitted",
            `This signature's nonce (${n}) was already used on the Redemptions contract: sign again at ${chainNonce}.`,
          );
        }
      }
      // A signature recovers to some address whatever it signed: another key over these terms and the
      // owner's key over other terms look alike, so the answer names both causes.
      throw unprocessable(
        "redirect_signature_invalid",
        "Invalid signature",
        `The signature recovers to ${signer ?? "no address"}, not payout ${payoutId}'s owner ${payout.owner}: only the ` +
          "owner may redirect it, with an EIP-712 Redirect(id, sealedAddress, noteCommitment, nonce, deadline) of " +
          `exactly this destination and deadline at the owner's nonce ${chainNonce} (GET /v1/redemptions/terms).`,
      );
    }
    const taken = await redirectAtNonce(this.db, payout.owner, chainNonce);
    if (taken) {
      throw conflict(
        "redirect_already_submitted",
        "Redirect already submitted",
        `A redirect the owner signed at nonce ${chainNonce} is already being relayed.`,
        taken.account_id === accountId ? { id: taken.id } : {},
      );
    }
    if (withdrawAddress) await refuseReusedEnvelope(this.db, sealedAddress, payout.owner, "body.sealedAddress");
    const calldata = encodeFunctionData({
      abi: redemptionsAbi,
      functionName: "redirectWithSig",
      args: [payoutId, sealedAddress, noteCommitment, deadline, input.signature],
    });
    try {
      await chain.client.call({ to: chain.redemptions, data: calldata });
    } catch (error) {
      const refusal = await refusalOf(chain, error);
      if (!refusal) throw domainErrors.unavailable("The chain node");
      throw unprocessable("redirect_would_revert", "The Redemptions contract would refuse this", refusal.reason, {
        failureCode: refusal.code,
      });
    }
    const columns = {
      id: randomId("rdr"),
      account_id: accountId,
      environment: this.options.environment,
      payout_id: payoutId.toString(),
      owner: payout.owner,
      signed_nonce: chainNonce.toString(),
      zcash_address: withdrawAddress || null,
      note_commitment: withdrawAddress ? null : noteCommitment.toString(),
      deadline: deadline.toString(),
      calldata,
      status: "queued",
    };
    try {
      const row = await insertRedirect(this.db, columns);
      return { row: { ...row, zat_held: payout.zatDue.toString() }, own: true };
    } catch (error) {
      if (!/payout_redirects_live/.test(String((error as Error).message))) throw error;
      throw conflict(
        "redirect_already_submitted",
        "Redirect already submitted",
        `Payout ${payoutId} is already being redirected.`,
      );
    }
  }

  /** The latest redirect of a payout (by `red_…` for this account's redemptions, or by on-chain payout id). */
  async latest(accountId: string, id: string): Promise<RedirectState> {
    const payoutId = await this.#payoutId(accountId, id);
    const row = await latestRedirect(this.db, payoutId, this.options.environment);
    if (!row) throw domainErrors.notFound(`A redirect of payout ${payoutId}`);
    return { row, own: row.account_id === accountId };
  }
}
