// Redirects of failed payouts. Custody could not pay a payout (a redemption,
// collateral released from a position, a withdrawn note): the attestor failed
// it on-chain and its ZEC is held for its owner (relay/payouts.ts, "held").
// The owner signs an EIP-712 Redirect on the Redemptions contract and the
// relay sends it with redirectWithSig: to another shielded address (a new
// payout, paid like any other) or into a new note. Everything the contract
// would refuse is refused here first, so that nothing is queued to fail.
import { type Address, type Hex, decodeFunctionData, encodeFunctionData, recoverTypedDataAddress } from "viem";
import { redemptionsAbi, redirectTypedData } from "@zsd/sdk";
import { SNARK_SCALAR_FIELD } from "@zsd/sdk/notes";
import { formatZec } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { displayTxId } from "../txids.ts";
import type { Database } from "../../adapters/db/index.ts";
import { REJECTED_ROW, isRefusedByCompliance } from "../compliance/compliance.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { randomId } from "../../adapters/ids.ts";
import { type SealedAddresses, refuseRetiredKey, refuseReusedEnvelope } from "../redemptions/sealed-addresses.ts";
import { refusalOf } from "../reverts.ts";

/** The reason written on-chain with a failure: a code, never the wallet's words (they may reveal balances). */
const FAILURE_REASON = {
  unreadable: "unreadable_address",
  failed: "payout_failed",
  rejected: "compliance_rejected",
} as const;
/**
 * How a failure for a sealed address custody cannot open, or whose address it
 * cannot pay, or that an earlier payout used, is noted on its row (and told
 * apart on a later pass).
 */
export const NOT_PAYABLE = "Not payable: ";
/** How a failure a screener asked for is noted on its row. */
export const REJECTED = REJECTED_ROW;

/** How an owner gets a held payout's ZEC: told with every held payout (webhook and reads). */
export const REDIRECT_HOW =
  "POST /v1/redemptions/{id}/redirect with a sealedAddress or a noteCommitment, a deadline and the owner's " +
  "EIP-712 Redirect signature (SDK: redemptions.redirect).";

/** The code written on-chain with a failure, from why the payout is being failed. */
export function failureReason(p: { last_error: string | null }): string {
  if (p.last_error?.startsWith(NOT_PAYABLE)) return FAILURE_REASON.unreadable;
  if (p.last_error?.startsWith(REJECTED)) return FAILURE_REASON.rejected;
  return FAILURE_REASON.failed;
}

/** A held payout's reason in words, for its owner. */
export function heldReason(code: string): string {
  const why =
    code === FAILURE_REASON.unreadable
      ? "Custody cannot open or pay this payout's sealed address (sealed to another key or owner, not a shielded " +
        "address of this network, or used by an earlier payout)"
      : code === FAILURE_REASON.rejected
        ? "Compliance review refused this payout"
        : "Custody could not pay this payout";
  return `${why}. Its ZEC is held on-chain for the owner (no ZSD is returned): the owner redirects it to another shielded address or into a note.`;
}

/** Contract status of a payout (IRedemptions.Status). */
export const PAYOUT_STATUS = ["none", "requested", "completed", "failed", "redirected"] as const;
const FAILED = 3;

/** How many of the owner's used nonces a signature is checked against before it is called invalid. */
const USED_NONCE_LOOKBACK = 8n;

export interface RedirectRow {
  id: string;
  account_id: string | null;
  environment: string;
  payout_id: string;
  owner: string;
  signed_nonce: string;
  zcash_address: string | null;
  note_commitment: string | null;
  deadline: string;
  calldata: Hex;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  attempts: number;
  block_number: string | number | null;
  new_payout_id: string | null;
  note_sequence: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export type RedirectInput = ({ sealedAddress: Hex } | { noteCommitment: string }) & {
  deadline: number;
  signature: Hex;
};

/** A payout's state for its owner, from the payout worker's row (relay/payouts.ts). */
export function payoutState(status: string | null | undefined) {
  switch (status) {
    case "completed":
      return "paid" as const;
    case "failing":
    case "held":
      return "held" as const;
    case "redirected":
      return "redirected" as const;
    case "review":
      return "in_review" as const;
    default:
      return "paying" as const;
  }
}

/**
 * A redirect as an account sees it: the plaintext address only to the account
 * that asked for it (custody opened it for them); anyone else who names the
 * payout by its id sees the sealed address the chain shows.
 */
export function presentRedirect(
  row: RedirectRow & { payout_status?: string | null; payout_txid?: string | null; zat_held?: string | null },
  own = true,
) {
  return {
    object: "payout_redirect" as const,
    redirectId: row.id,
    payoutId: row.payout_id.toString(),
    owner: row.owner,
    destination:
      row.zcash_address !== null
        ? own
          ? { withdrawAddress: row.zcash_address }
          : { sealedAddress: sealedOf(row.calldata) }
        : { noteCommitment: row.note_commitment ?? "0" },
    status: row.status,
    txHash: row.tx_hash,
    blockNumber: row.block_number === null ? null : Number(row.block_number),
    newPayoutId: row.new_payout_id,
    noteSequence: row.note_sequence,
    // The new payout, paid like any other (into a note there is none: the note is the ZEC).
    payoutStatus: row.new_payout_id ? payoutState(row.payout_status) : null,
    zcashTxId: row.payout_status === "completed" ? displayTxId(row.payout_txid) : null,
    zecHeld: row.zat_held ? formatZec(BigInt(row.zat_held)) : null,
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
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
    const [request] = await this.db.query<{ redemption_id: string | null }>(
      "SELECT redemption_id FROM redemption_requests WHERE id = $1 AND account_id = $2",
      [id, accountId],
    );
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
  async request(accountId: string, id: string, input: RedirectInput) {
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
    const [live] = await this.db.query<RedirectRow>(
      "SELECT * FROM payout_redirects WHERE payout_id = $1 AND status <> 'failed' LIMIT 1",
      [payoutId.toString()],
    );
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
    const [taken] = await this.db.query<RedirectRow>(
      `SELECT * FROM payout_redirects WHERE lower(owner) = lower($1) AND signed_nonce = $2 AND status <> 'failed'`,
      [payout.owner, chainNonce.toString()],
    );
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
    const keys = Object.keys(columns);
    try {
      const [row] = await this.db.query<RedirectRow>(
        `INSERT INTO payout_redirects (${keys.join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")})
         RETURNING *`,
        keys.map((k) => columns[k as keyof typeof columns]),
      );
      return presentRedirect({ ...row!, zat_held: payout.zatDue.toString() });
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
  async latest(accountId: string, id: string) {
    const payoutId = await this.#payoutId(accountId, id);
    const [row] = await this.db.query<
      RedirectRow & { payout_status: string | null; payout_txid: string | null; zat_held: string | null }
    >(
      `SELECT d.*, p.status AS payout_status, p.zcash_txid AS payout_txid, o.zat_due AS zat_held
       FROM payout_redirects d
       LEFT JOIN payouts p ON p.redemption_id = d.new_payout_id::numeric
       LEFT JOIN payouts o ON o.redemption_id = d.payout_id
       WHERE d.payout_id = $1 AND d.environment = $2
       ORDER BY d.status = 'failed', d.created_at DESC LIMIT 1`,
      [payoutId.toString(), this.options.environment],
    );
    if (!row) throw domainErrors.notFound(`A redirect of payout ${payoutId}`);
    return presentRedirect(row, row.account_id === accountId);
  }
}

/** The sealed address a queued redirectWithSig carries (what the chain shows of it). */
function sealedOf(calldata: Hex): Hex {
  const { args } = decodeFunctionData({ abi: redemptionsAbi, data: calldata });
  return (args as readonly unknown[])[1] as Hex;
}
