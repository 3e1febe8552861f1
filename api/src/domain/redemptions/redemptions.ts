import { type Address, type Hex, verifyTypedData } from "viem";
import { formatZec, formatZsd, parseZec, parseZsd } from "@zsd/sdk/units";
import { redeemTypedData, redemptionsAbi, stableTokenAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { randomId } from "../../adapters/ids.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { freshPrice } from "../price/price.ts";
import type { ComplianceService } from "../compliance/compliance.ts";
import { holdOf } from "../compliance/hold-of.ts";
import { displayTxId } from "../txids.ts";
import { REDIRECT_HOW, failureReason, heldReason, payoutState } from "../payouts/status.ts";
import {
  type SealedAddresses,
  canonicalZcashAddress,
  refuseRetiredKey,
  refuseReusedEnvelope,
} from "./sealed-addresses.ts";
import type { SealKey } from "@zsd/sdk/seal";
import {
  type RequestRow as Row,
  insertRequest,
  latestRequestAt,
  liveRequestAt,
  noncesSignedWith,
  refusedSignature,
  requestWithPayout,
} from "./store.ts";

/** Where a held payout's ZEC was redirected, and how that is going. */
function redirectView(row: Row) {
  if (!row.redirect_id) return null;
  return {
    redirectId: row.redirect_id,
    status: row.redirect_status as "queued" | "submitted" | "confirmed" | "failed",
    destination:
      row.redirect_address != null
        ? { withdrawAddress: row.redirect_address }
        : { noteCommitment: row.redirect_commitment ?? "0" },
    txHash: row.redirect_tx_hash ?? null,
    newPayoutId: row.redirect_new_payout ?? null,
    noteSequence: row.redirect_note_sequence ?? null,
    // The new payout, paid like any other (into a note, there is none: the note is the ZEC).
    payoutStatus: row.redirect_new_payout ? payoutState(row.redirect_payout_status) : null,
    zcashTxId: row.redirect_payout_status === "completed" ? displayTxId(row.redirect_payout_txid) : null,
    failureCode: row.redirect_status === "failed" ? (row.redirect_failure_code ?? null) : null,
    failureReason: row.redirect_status === "failed" ? (row.redirect_failure_reason ?? null) : null,
  };
}

/**
 * The request's own status, carried on by its payout once the ZSD is burned.
 * The payout's internal notes (wallet errors, review reasons) stay with the
 * operator; the holder is told what happens to their money.
 */
function payoutView(row: Row) {
  const view = {
    status: row.status as Row["status"] | "redirected",
    zcashTxId: displayTxId(row.zcash_txid),
    zecHeld: null as string | null,
    redirect: redirectView(row),
    settlementTxHash: null as string | null,
    // A reason kept while the relay retries is a note for the relay, not the holder's answer yet.
    failureCode: row.status === "failed" ? row.failure_code : null,
    failureReason: row.status === "failed" ? row.failure_reason : null,
  };
  const rejected = row.hold_state === "rejected";
  const held = {
    zecHeld: row.zat_due === null ? null : formatZec(BigInt(row.zat_due)),
    settlementTxHash: row.settle_tx_hash ?? null,
    failureCode: rejected ? "compliance_rejected" : "payout_held",
    failureReason: `${heldReason(rejected ? "compliance_rejected" : failureReason({ last_error: row.payout_error ?? null }))} ${REDIRECT_HOW}`,
  };
  switch (row.payout_status) {
    case "completed":
      return {
        ...view,
        status: "paid" as const,
        zcashTxId: displayTxId(row.payout_txid),
        settlementTxHash: row.settle_tx_hash ?? null,
      };
    case "held":
      return { ...view, ...held, status: "failed" as const };
    case "redirected":
      // The held ZEC went where the owner said: `redirect` follows it.
      return { ...view, ...held, status: "redirected" as const, failureCode: null, failureReason: null };
    case "failing":
      return {
        ...view,
        failureCode: "payout_failing",
        failureReason:
          "Custody could not pay this redemption; it is being failed on-chain so that its ZEC is held for the owner to redirect (no ZSD is returned).",
      };
    case "review":
      return {
        ...view,
        failureCode: "payout_in_review",
        failureReason: "The payout is being checked by an operator before it goes any further.",
      };
    case "settling":
      return { ...view, zcashTxId: displayTxId(row.payout_txid) };
    default:
      return view;
  }
}

/** Where a burned redemption's payout stands: the stage it waits in, and the burn's confirmations. */
export interface PayoutProgress {
  stage: "confirming" | "paying" | "settling";
  confirmations: number | null;
  confirmationsRequired: number;
}

/**
 * What the payout of a redemption still "burned" waits for: the burn's blocks (payout discovery takes it once it
 * has `required`), custody's payment, then the on-chain settlement. `head` is the chain's newest block, when read.
 */
export function payoutProgress(row: Row, head: bigint | null, required: number): PayoutProgress | null {
  if (payoutView(row).status !== "burned") return null;
  switch (row.payout_status ?? null) {
    case null: {
      const block = row.block_number == null || head === null ? null : head - BigInt(row.block_number) + 1n;
      const confirmations =
        block === null ? null : Number(block < 0n ? 0n : block > BigInt(required) ? BigInt(required) : block);
      return { stage: "confirming", confirmations, confirmationsRequired: required };
    }
    case "pending":
    case "sending":
    case "sent":
      return { stage: "paying", confirmations: required, confirmationsRequired: required };
    case "settling":
      return { stage: "settling", confirmations: required, confirmationsRequired: required };
    default:
      // Failing or in review: failureCode and failureReason say so.
      return null;
  }
}

export function presentRedemption(row: Row) {
  return {
    object: "redemption" as const,
    id: row.id,
    ...payoutView(row),
    payout: null as PayoutProgress | null,
    owner: row.owner,
    amount: formatZsd(BigInt(row.amount)),
    withdrawAddress: row.withdraw_address,
    redemptionId: row.redemption_id,
    zecDue: row.zat_due === null ? null : formatZec(BigInt(row.zat_due)),
    txHash: row.tx_hash,
    createdAt: new Date(row.created_at).toISOString(),
    // The payout moves the redemption on after the request's own last change.
    updatedAt: new Date(
      Math.max(
        new Date(row.updated_at).getTime(),
        row.payout_updated_at ? new Date(row.payout_updated_at).getTime() : 0,
      ),
    ).toISOString(),
  };
}

/** The bound a redeem permit carries, as the terms name it. */
export const REDEEM_BOUND =
  "permit.minZec: the least ZEC paid after the fee (usually the quote less a slippage allowance); sent after the " +
  "price rose or once redemptions pay pro rata, the permit reverts ZatOutBelowMinimum and nothing is burned";

/** A deadline an hour on: long enough to sign and send, short enough that a lost signature expires. */
const SUGGESTED_DEADLINE_SECONDS = 3_600n;

/** How many of the owner's used nonces a signature is checked against before it is called invalid. */
const USED_NONCE_LOOKBACK = 64n;

export interface RedeemInput {
  amount: number | string;
  /** The withdraw address sealed to custody's key for `owner`: what the owner signs and the chain carries. */
  sealedAddress?: Hex;
  /**
   * Or the address in the clear: sealed here to the bytes the terms answered
   * for it (see SealedAddresses.sealFor). Exactly one of the two.
   */
  withdrawAddress?: string;
  owner: Address;
  permit: { deadline: number | string; minZec?: string; v: number; r: string; s: string };
}

export class RedemptionService {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    private readonly environment: "sandbox" | "production",
    private readonly relayEnabled: boolean,
    /** The least ZEC (zatoshi) a redemption may pay out: below a shielded transaction's fee it is not worth paying. */
    private readonly minimumZat: bigint,
    /** Events, the rules agent and screening, in the transaction that writes a request. */
    private readonly compliance?: ComplianceService,
    /** Custody's seal keys for this deployment: a request's address is opened before anything else. */
    private readonly sealed?: SealedAddresses,
    /** Blocks a burn needs before custody pays it (PAYOUT_CONFIRMATIONS): what a burned redemption waits for. */
    private readonly payoutConfirmations = 12,
  ) {}

  async request(accountId: string, input: RedeemInput) {
    const chain = this.chain;
    if (!chain || !this.sealed || !this.relayEnabled)
      throw domainErrors.unavailable("Redemptions (no deployment or relayer key is configured)");
    const sealed = this.sealed;
    // The envelope the signature covers, at the owner's nonce n: the caller's own, or the one the API
    // seals the clear address to for n (the terms' bytes when signed at the nonce they named).
    let sealedAt: (n: bigint) => Hex;
    let withdrawAddress: string;
    let field: string;
    if (input.sealedAddress !== undefined) {
      const envelope = input.sealedAddress;
      field = "body.sealedAddress";
      // Opened first: an envelope custody cannot open, or a bad address in it, is refused before anything is read.
      withdrawAddress = sealed.open(envelope, input.owner, field);
      await refuseRetiredKey(chain, envelope, field);
      sealedAt = () => envelope;
    } else {
      field = "body.withdrawAddress";
      // Checked first, as an envelope's address is: a bad address is refused before anything is read.
      withdrawAddress = canonicalZcashAddress(input.withdrawAddress ?? "", this.environment, field);
      const key = await chain.currentSealKey();
      sealedAt = (n) => this.#sealFor(key, input.owner, n, withdrawAddress, field);
    }
    let amount: bigint;
    try {
      amount = parseZsd(String(input.amount));
    } catch {
      throw domainErrors.invalid([{ field: "body.amount", message: "a ZSD amount with at most 18 decimals" }]);
    }
    if (amount === 0n) throw domainErrors.invalid([{ field: "body.amount", message: "must be above 0" }]);
    const deadline = BigInt(input.permit.deadline);
    let minZatOut: bigint;
    try {
      minZatOut = parseZec(input.permit.minZec ?? "0");
    } catch {
      throw domainErrors.invalid([{ field: "body.permit.minZec", message: "a ZEC amount with at most 8 decimals" }]);
    }
    const [nonce, balance, now, , [zatDue]] = await Promise.all([
      chain.read(() =>
        chain.client.readContract({
          address: chain.redemptions,
          abi: redemptionsAbi,
          functionName: "nonces",
          args: [input.owner],
        }),
      ),
      chain.read(async () => {
        const token = await chain.client.readContract({
          address: chain.redemptions,
          abi: redemptionsAbi,
          functionName: "token",
        });
        return chain.client.readContract({
          address: token,
          abi: stableTokenAbi,
          functionName: "balanceOf",
          args: [input.owner],
        });
      }),
      chain.now(),
      // Redemptions are paid at the oracle price: a stale one would revert the burn.
      freshPrice(chain, "redemptions"),
      chain.read(() =>
        chain.client.readContract({
          address: chain.redemptions,
          abi: redemptionsAbi,
          functionName: "quote",
          args: [amount],
        }),
      ),
    ]);
    if (zatDue < this.minimumZat) {
      throw new DomainError(
        "unprocessable",
        "redemption_too_small",
        "Redemption too small",
        `This redemption pays ${formatZec(zatDue)} ZEC; the least worth a shielded payment is ${formatZec(this.minimumZat)} ZEC.`,
        { zecDue: formatZec(zatDue), minimumZec: formatZec(this.minimumZat) },
      );
    }
    // Checked here so that a bad signature costs the relayer no gas.
    const signedAt = (n: bigint) =>
      verifyTypedData({
        address: input.owner,
        ...redeemTypedData(
          { chainId: chain.deployment.chainId, verifyingContract: chain.redemptions },
          { owner: input.owner, amount, minZatOut, sealedAddress: sealedAt(n), nonce: n, deadline },
        ),
        signature: { r: input.permit.r as Hex, s: input.permit.s as Hex, v: BigInt(input.permit.v) },
      }).catch(() => false);
    if (!(await signedAt(nonce))) {
      // Signed for a nonce the owner has used: this redemption went through
      // already (relayed here or sent by anyone), and can never go again.
      // A clear address is sealed anew at every nonce tried, an X25519 exchange each (about 4 ms): tried
      // at all 64, a refused signature would hold the event loop a quarter of a second. So only the
      // nonces this relay took that signature at are tried; sent on-chain by anyone else, it is refused
      // as not the owner's signature of this redemption now.
      const used =
        input.sealedAddress !== undefined
          ? Array.from(
              { length: Number(nonce < USED_NONCE_LOOKBACK ? nonce : USED_NONCE_LOOKBACK) },
              (_, i) => nonce - 1n - BigInt(i),
            )
          : await this.#noncesSignedWith(input.owner, input.permit, nonce);
      for (const n of used) {
        if (await signedAt(n)) throw await this.#alreadySubmitted(accountId, input.owner, n, true);
      }
      throw new DomainError(
        "unprocessable",
        "invalid_signature",
        "Invalid signature",
        input.sealedAddress !== undefined
          ? "The permit is not the owner's signature of this redemption (amount, minZatOut, address, nonce, deadline)."
          : `The permit is not the owner's signature of this redemption (amount, minZatOut, address, nonce ${nonce}, ` +
              "deadline). With withdrawAddress, the owner signs the sealedAddress that GET /v1/redemptions/terms " +
              "answers for this owner and address, at the nonce it names: ask the terms again and sign those bytes.",
      );
    }
    if (await this.#liveAt(input.owner, nonce))
      throw await this.#alreadySubmitted(accountId, input.owner, nonce, false);
    const sealedAddress = sealedAt(nonce);
    // A signature compliance refused stays refused: posting it again is not a way round the review
    // (a new signature at the same nonce is a new request, reviewed as such).
    const rejected = await refusedSignature(this.db, input.owner, nonce, input.permit);
    if (rejected) {
      throw new DomainError(
        "conflict",
        "redemption_rejected",
        "Redemption rejected",
        `A redemption the owner signed at nonce ${nonce} was refused by compliance review; this signature is not relayed again.`,
        { id: rejected.account_id === accountId ? rejected.id : undefined },
      );
    }
    if (deadline < now) {
      throw new DomainError(
        "unprocessable",
        "expired_signature",
        "Expired signature",
        "The signature's deadline has passed.",
      );
    }
    if (balance < amount) {
      throw new DomainError(
        "unprocessable",
        "insufficient_balance",
        "Insufficient balance",
        `The owner holds ${formatZsd(balance)} ZSD.`,
      );
    }
    // The quote now is what the permit would pay if sent at once: under its bound it would revert
    // ZatOutBelowMinimum on the chain, so it is refused here and nothing is queued or burned.
    if (zatDue < minZatOut) {
      throw new DomainError(
        "unprocessable",
        "redemption_below_minimum",
        "Below the signed minimum",
        `This redemption pays ${formatZec(zatDue)} ZEC now, under the ${formatZec(minZatOut)} ZEC the permit's ` +
          "minZec (minZatOut) accepts: the redemption would revert ZatOutBelowMinimum. Sign again with a lower minZec.",
        { bound: "permit.minZec", zecDue: formatZec(zatDue), minZec: formatZec(minZatOut) },
      );
    }
    // After the nonce checks, which answer a signature posted again with its own code.
    await refuseReusedEnvelope(this.db, sealedAddress, input.owner, field).catch(async (error) => {
      // The same signed redemption posted at the same moment, committed since the check above:
      // the envelope it carries is this one, and the answer is the conflict of a second post.
      if (await this.#liveAt(input.owner, nonce))
        throw await this.#alreadySubmitted(accountId, input.owner, nonce, false);
      throw error;
    });
    const id = randomId("red");
    try {
      const row = await this.db.transaction(async (tx) => {
        const inserted = await insertRequest(tx, [
          id,
          accountId,
          input.owner,
          amount.toString(),
          withdrawAddress,
          sealedAddress.toLowerCase(),
          deadline.toString(),
          JSON.stringify(input.permit),
          nonce.toString(),
        ]);
        const view = presentRedemption(inserted);
        await this.compliance?.admit(
          tx,
          accountId,
          // The Zcash address it pays is weighed as a position action's is (the deny list).
          { type: "redemption", id, amount, address: input.owner, zcashAddress: withdrawAddress },
          // The webhook leaves the address out: agents and their receivers are no place for it.
          { redemptionId: id, owner: view.owner, amount: view.amount },
        );
        return inserted!;
      });
      this.compliance?.queued();
      return { ...presentRedemption(row), hold: await holdOf(this.db, "redemption", id) };
    } catch (error) {
      // The same signed redemption posted at the same moment: the other one won.
      if (/redemption_requests_live_nonce/.test(String((error as Error).message))) {
        throw await this.#alreadySubmitted(accountId, input.owner, nonce, false);
      }
      throw error;
    }
  }

  /** The clear address sealed for the owner at `ownerNonce`, or unavailable when custody lacks the contract's key. */
  #sealFor(key: SealKey, owner: Address, ownerNonce: bigint, address: string, field: string): Hex {
    const sealed = this.sealed?.sealFor(key, owner, ownerNonce, address, field);
    if (!sealed) {
      throw domainErrors.unavailable(
        `Sealing a withdrawAddress (custody does not hold the Redemptions contract's current seal key ${key.keyId}); ` +
          "seal the address yourself and send sealedAddress",
      );
    }
    return sealed;
  }

  /** The owner's nonces below `nonce` at which a request here carried this very signature, newest first. */
  async #noncesSignedWith(owner: string, permit: RedeemInput["permit"], nonce: bigint): Promise<bigint[]> {
    return noncesSignedWith(this.db, owner, permit, nonce);
  }

  /** Whether a request here, not failed, holds the owner's nonce. */
  async #liveAt(owner: string, nonce: bigint): Promise<boolean> {
    return liveRequestAt(this.db, owner, nonce);
  }

  /**
   * The conflict for a redemption signed at a nonce that a request here or a
   * transaction on-chain already took; the request's id only to its account.
   */
  async #alreadySubmitted(accountId: string, owner: string, nonce: bigint, onChain: boolean) {
    const existing = await latestRequestAt(this.db, owner, nonce);
    const id = existing?.account_id === accountId ? existing.id : undefined;
    return new DomainError(
      "conflict",
      "redemption_already_submitted",
      "Redemption already submitted",
      onChain
        ? `This signed redemption already went through on-chain (the owner's nonce ${nonce} is used); sign a new one to redeem more.`
        : `A redemption the owner signed at nonce ${nonce} was already submitted and is being relayed; only one can go through.`,
      { id },
    );
  }

  /**
   * What an owner signs for a relayed redemption: the EIP-712 domain and type,
   * the owner's next nonce on the contract, and the chain's clock to set a
   * deadline from (the chain's, not the wallet's: a local chain can run ahead).
   */
  async signingTerms(owner: Address, withdrawAddress?: string) {
    const chain = this.chain;
    if (!chain) throw domainErrors.unavailable("Redemptions (no deployment is configured)");
    const field = "query.withdrawAddress";
    const canonical =
      withdrawAddress === undefined ? undefined : canonicalZcashAddress(withdrawAddress, this.environment, field);
    if (canonical !== undefined && !this.sealed) {
      throw domainErrors.unavailable("Sealing a withdrawAddress (custody's seal keys are not configured)");
    }
    const [nonce, now, key] = await Promise.all([
      chain.read(() =>
        chain.client.readContract({
          address: chain.redemptions,
          abi: redemptionsAbi,
          functionName: "nonces",
          args: [owner],
        }),
      ),
      chain.now(),
      canonical === undefined ? undefined : chain.currentSealKey(),
    ]);
    // Sealed at the nonce the terms name: POST /v1/redeem seals the clear address at the owner's nonce
    // again, to these same bytes, so a signature of them is checked without the API keeping them.
    const sealedAddress =
      canonical === undefined || key === undefined ? undefined : this.#sealFor(key, owner, nonce, canonical, field);
    const { domain, types, primaryType } = redeemTypedData(
      { chainId: chain.deployment.chainId, verifyingContract: chain.redemptions },
      { owner, amount: 0n, minZatOut: 0n, sealedAddress: "0x", nonce, deadline: 0n },
    );
    return {
      object: "redemption_terms" as const,
      owner,
      nonce: nonce.toString(),
      chainTime: Number(now),
      suggestedDeadline: Number(now + SUGGESTED_DEADLINE_SECONDS),
      ...(sealedAddress === undefined ? {} : { withdrawAddress: canonical, sealedAddress }),
      typedData: { domain, types, primaryType },
      bounds: { minZatOut: REDEEM_BOUND },
    };
  }

  async get(accountId: string, id: string) {
    const row = await requestWithPayout(this.db, accountId, id);
    if (!row) throw domainErrors.notFound(`Redemption ${id}`);
    const view = presentRedemption(row);
    // The chain's head only for a burned redemption waiting for its blocks, read at most once a second
    // however often its owner polls; unread, the count is unknown (null), never an error.
    const head =
      view.status === "burned" && !row.payout_status && this.chain
        ? await this.chain.client.getBlockNumber({ cacheTime: 1_000 }).catch(() => null)
        : null;
    return {
      ...view,
      payout: payoutProgress(row, head, this.payoutConfirmations),
      hold: await holdOf(this.db, "redemption", id),
    };
  }
}
