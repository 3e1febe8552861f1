// Payouts of redemptions (and of collateral released from positions and
// notes): every RedemptionRequested on-chain (relayed by us or sent by a
// holder directly) becomes a row, is paid by the custody once, then settled
// on-chain by the attestor (completeRedemption), or failed (failRedemption)
// when the wallet keeps refusing it, or at once when its sealed address does
// not open with custody's keys for its owner, holds no payable address, or is
// an envelope an earlier payout used (a replay): "unreadable_address", on the
// chain as in reads. A failed payout is not refunded: its ZEC
// stays held on-chain for its owner, who redirects it (POST
// /v1/redemptions/{id}/redirect) to another address (a new payout, a new row)
// or into a note; the row then becomes "redirected".
//
//   pending ─▶ sending ─▶ sent ─▶ settling ─▶ completed
//      ▲          │          │
//      └─ retry ──┴──────────┴─▶ failing ─▶ held ─▶ redirected (by the owner)
//                 └─ unknown outcome ─▶ review (an operator decides)
//
// "sending" is recorded before the wallet is asked to pay: a row found there
// by a later pass may or may not have been paid, so it is never sent again
// automatically. Every move is a compare-and-set on the row's version, and a
// pass that loses one stops there: a worker acting on a stale read (another
// replica moved the row meanwhile) can neither send nor fail it. One payout is
// in flight at a time, so that two never compete for the wallet's notes.
import { redemptionsAbi } from "@zsd/sdk";
import { formatZec } from "@zsd/sdk/units";
import type { Chain } from "../adapters/chain.ts";
import type { Attestor } from "../adapters/custody/attestor.ts";
import { type Custody, PayoutNotSent, PayoutRefused } from "../adapters/custody/index.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import { isRevert } from "../domain/errors.ts";
import { type ComplianceService, refusedByCompliance } from "../domain/compliance.ts";
import { NOT_PAYABLE, REDIRECT_HOW, REJECTED, failureReason, heldReason } from "../domain/redirects.ts";
import { displayTxId } from "../domain/txids.ts";
import { type PayoutVerdict, type SealedAddresses, payoutVerdict } from "../domain/sealed-addresses.ts";

export type PayoutStatus =
  "pending" | "sending" | "sent" | "settling" | "completed" | "failing" | "held" | "redirected" | "review";

export interface PayoutRow {
  redemption_id: string;
  owner: string;
  amount: string;
  zat_due: string;
  /** The address custody opened from the sealed one; null when it could not (the payout is failed). */
  withdraw_address: string | null;
  sealed_address_hash: string | null;
  /** The envelope from the RedemptionRequested event (null on rows older than migration 24). */
  sealed_address: `0x${string}` | null;
  status: PayoutStatus;
  attempts: number;
  version: number;
  operation_id: string | null;
  zcash_txid: string | null;
  last_error: string | null;
}

export interface PayoutOptions {
  /** Custody's seal keys: each payout's sealed address is opened for its owner. */
  sealed: SealedAddresses;
  /** Blocks a redemption's block must have on top of it, itself included, before it is paid: a reorganisation must not pay a redemption that never was. */
  confirmations: number;
  /** Refused payments before the payout is failed on-chain (its ZEC held for the owner to redirect). */
  maxAttempts: number;
  /** Wait before the first retry; doubles each time, up to an hour. */
  retryMs: number;
  /** Told of a step that failed (and will be tried again). */
  onError?: (error: unknown) => void;
  /** Told of every payout held for an operator. */
  onReview?: (redemptionId: string, reason: string) => void;
  /** Holds (a held redemption is not paid, a rejected one is failed and held) and redemption.paid / .failed events. */
  compliance?: ComplianceService;
}

const CURSOR = "redemptions";
const BLOCKS_PER_QUERY = 2_000n;
/** Blocks below the cursor read again each pass, for a redemption re-mined there by a reorganisation. */
const RESCAN_BLOCKS = 64n;
/**
 * SQL: the compliance hold of a payout's redemption request, or of the payout
 * itself (one redirected from a payout compliance refused), is in one of `states`.
 */
const holdIn = (states: string) =>
  `(EXISTS (SELECT 1 FROM redemption_requests r JOIN compliance_holds h
     ON h.subject_type = 'redemption' AND h.subject_id = r.id
     WHERE r.redemption_id::numeric = payouts.redemption_id AND h.state IN (${states}))
   OR EXISTS (SELECT 1 FROM compliance_holds h WHERE h.subject_type = 'payout'
     AND h.subject_id = payouts.redemption_id::text AND h.state IN (${states})))`;
const MAX_RETRY_MS = 3_600_000;
/** Contract status of a redemption. */
const REQUESTED = 1;
const COMPLETED = 2;
const FAILED = 3;
const REDIRECTED = 4;

export class Payouts {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly custody: Custody,
    private readonly attestor: Attestor,
    private readonly options: PayoutOptions,
  ) {}

  /** One pass: find new redemptions, follow payouts in flight, start the next one. */
  async tick(): Promise<void> {
    await this.discover().catch((error: unknown) => this.options.onError?.(error));
    // A "sending" row at the start of a pass was left by a pass that stopped while asking the wallet.
    for (const p of await this.#rows("sending")) {
      await this.#review(p, "The worker stopped while handing this payout to the wallet; it may have been paid.");
    }
    for (const p of await this.#rows("sent")) await this.#isolated(p, () => this.#follow(p));
    for (const p of await this.#rows("settling")) await this.#isolated(p, () => this.#settle(p));
    for (const p of await this.#rows("failing")) await this.#isolated(p, () => this.#fail(p));
    if (this.options.compliance) {
      // A screener rejected it before it was paid: failed on-chain, its ZEC held for the owner.
      const rejected = await this.db.query<PayoutRow>(
        `SELECT * FROM payouts WHERE status = 'pending' AND ${holdIn("'rejected'")} ORDER BY redemption_id LIMIT 20`,
      );
      for (const p of rejected) {
        await this.#isolated(p, async () => {
          if (await this.#move(p, "failing", { last_error: `${REJECTED}${await this.#rejectionCode(p)}` })) {
            await this.#fail(p);
          }
        });
      }
    }
    const [inFlight] = await this.db.query("SELECT 1 FROM payouts WHERE status IN ('sending', 'sent') LIMIT 1");
    if (inFlight) return;
    // A redemption held by compliance (or waiting for a verdict) is not paid until it is released.
    const held = this.options.compliance ? ` AND NOT ${holdIn("'awaiting_verdict', 'held', 'rejected'")}` : "";
    const [next] = await this.db.query<PayoutRow>(
      `SELECT * FROM payouts WHERE status = 'pending' AND next_attempt_at <= now()${held}
       ORDER BY redemption_id LIMIT 1`,
    );
    if (next) await this.#isolated(next, () => this.#start(next));
  }

  /**
   * One payout's trouble (a node or wallet that does not answer, a refusal
   * we do not expect) is written on its row and leaves the others moving;
   * the row is tried again next pass.
   */
  async #isolated(p: PayoutRow, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      // A failing row's last_error says why it is failed (failureReason reads it for the on-chain reason
      // and the event): a step's trouble goes to onError only, or a retried failure would say "payout_failed".
      await this.db.query(
        "UPDATE payouts SET last_error = $2, updated_at = now() WHERE redemption_id = $1 AND status <> 'failing'",
        [p.redemption_id, String((error as Error).message).slice(0, 500)],
      );
      this.options.onError?.(error);
    }
  }

  /** Records the RedemptionRequested events with enough confirmations since the last pass. */
  async discover(): Promise<number> {
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    const safe = head - BigInt(this.options.confirmations - 1);
    const [cursor] = await this.db.query<{ block: string }>("SELECT block FROM relay_cursors WHERE name = $1", [
      CURSOR,
    ]);
    const start = BigInt(this.chain.deployment.contracts.Redemptions!.startBlock);
    let from = cursor ? BigInt(cursor.block) + 1n - RESCAN_BLOCKS : start;
    if (from < start) from = start;
    let found = 0;
    while (from <= safe) {
      const to = from + BLOCKS_PER_QUERY - 1n < safe ? from + BLOCKS_PER_QUERY - 1n : safe;
      const range = { address: this.chain.redemptions, abi: redemptionsAbi, fromBlock: from, toBlock: to } as const;
      const [events, redirects] = await Promise.all([
        this.chain.client.getContractEvents({ ...range, eventName: "RedemptionRequested" }),
        // An owner may redirect a payout compliance refused to an address on-chain, not only through the API:
        // the new payout is held with the event that makes it, before any pass can pick it.
        this.options.compliance
          ? this.chain.client.getContractEvents({ ...range, eventName: "PayoutRedirected" })
          : Promise.resolve([]),
      ]);
      // A pass at rest rescans blocks below the cursor: the cursor is written only when it moves.
      const moves = !cursor || to > BigInt(cursor.block);
      if (events.length === 0 && redirects.length === 0 && !moves) {
        from = to + 1n;
        continue;
      }
      await this.db.transaction(async (tx) => {
        for (const e of events) {
          const a = e.args;
          const opened = await this.#open(tx, a.id!, a.owner!, a.sealedAddress!, a.sealedAddressHash!);
          const rows = await tx.query(
            `INSERT INTO payouts (redemption_id, owner, amount, zat_due, withdraw_address, sealed_address_hash,
               sealed_address, last_error, request_tx_hash, status)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending') ON CONFLICT (redemption_id) DO NOTHING
             RETURNING redemption_id`,
            [
              a.id!.toString(),
              a.owner!,
              a.amount!.toString(),
              a.zatDue!.toString(),
              "address" in opened ? opened.address : null,
              a.sealedAddressHash!.toLowerCase(),
              a.sealedAddress!.toLowerCase(),
              "address" in opened ? null : "missingKey" in opened ? opened.missingKey : `${NOT_PAYABLE}${opened.why}`,
              e.transactionHash,
            ],
          );
          found += rows.length;
        }
        for (const e of redirects) {
          if (e.args.newId) await this.#holdIfRefused(tx, e.args.id!, e.args.newId);
        }
        if (moves) {
          await tx.query(
            `INSERT INTO relay_cursors (name, block) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET block = GREATEST(relay_cursors.block, EXCLUDED.block)`,
            [CURSOR, to.toString()],
          );
        }
      });
      from = to + 1n;
    }
    return found;
  }

  /**
   * The address a payout's envelope holds, opened with custody's keys for its
   * owner (the associated data binds it to them), or why it will not be paid.
   * The reason names no address: it goes to the row and the operator's logs.
   */
  async #open(
    tx: Queryable,
    id: bigint,
    owner: `0x${string}`,
    sealed: `0x${string}`,
    hash: `0x${string}`,
  ): Promise<PayoutVerdict> {
    // The envelope of an earlier payout again (copied by its owner onto a new request): paid once only.
    const [earlier] = await tx.query<{ redemption_id: string }>(
      `SELECT redemption_id::text FROM payouts WHERE sealed_address_hash = $1 AND redemption_id < $2
       ORDER BY redemption_id LIMIT 1`,
      [hash.toLowerCase(), id.toString()],
    );
    if (earlier) return { why: `its sealed address was already used by payout ${earlier.redemption_id}.` };
    return payoutVerdict(this.options.sealed.payable(sealed, owner));
  }

  /**
   * Holds payout `newId`, redirected from `fromId`, for compliance review when
   * compliance refused `fromId` (or a payout it was redirected from): paying
   * it unscreened would undo the refusal.
   */
  async #holdIfRefused(tx: Queryable, fromId: bigint, newId: bigint): Promise<void> {
    const [origin] = await tx.query<{ account_id: string; request_id: string }>(
      `SELECT account_id, request_id FROM (
         SELECT r.account_id, r.id AS request_id FROM redemption_requests r WHERE r.redemption_id = $2
         UNION ALL
         SELECT h.account_id, h.redemption_request_id FROM compliance_holds h
         WHERE h.subject_type = 'payout' AND h.subject_id = $2
       ) o WHERE request_id IS NOT NULL AND ${refusedByCompliance("$1::numeric")} LIMIT 1`,
      // Once as a number, once as text: one parameter cannot be deduced as both.
      [fromId.toString(), fromId.toString()],
    );
    if (!origin) return;
    await this.options.compliance!.holdRedirectIn(tx, origin.account_id, {
      id: newId.toString(),
      fromId: fromId.toString(),
      redemptionRequestId: origin.request_id,
    });
  }

  #rows(status: PayoutStatus): Promise<PayoutRow[]> {
    return this.db.query<PayoutRow>("SELECT * FROM payouts WHERE status = $1 ORDER BY redemption_id LIMIT 20", [
      status,
    ]);
  }

  /**
   * Moves a payout on, only if nobody moved it since this pass read it (same
   * version). False means another pass got there first: the caller stops.
   */
  async #move(
    p: PayoutRow,
    to: PayoutStatus,
    fields: Record<string, unknown> = {},
    db: Queryable = this.db,
  ): Promise<boolean> {
    const { compliance } = this.options;
    if (compliance && (to === "completed" || to === "held") && db === this.db) {
      // The end of a redemption the API relayed is told to its account's agents, in the same transaction.
      const moved = await this.db.transaction(async (tx) => {
        if (!(await this.#move(p, to, fields, tx))) return false;
        // A redirected payout held for review is told as its redemption's.
        const [request] = await tx.query<{ id: string; account_id: string }>(
          `SELECT id, account_id FROM redemption_requests WHERE redemption_id = $1
           UNION ALL
           SELECT redemption_request_id, account_id FROM compliance_holds
           WHERE subject_type = 'payout' AND subject_id = $1 AND redemption_request_id IS NOT NULL
           LIMIT 1`,
          [p.redemption_id],
        );
        if (request) {
          await compliance.emitIn(
            tx,
            request.account_id,
            to === "completed" ? "redemption.paid" : "redemption.failed",
            to === "completed"
              ? {
                  redemptionId: request.id,
                  zecPaid: formatZec(BigInt(p.zat_due)),
                  zcashTxId: displayTxId(p.zcash_txid),
                }
              : {
                  redemptionId: request.id,
                  failureCode: failureReason(p),
                  failureReason: heldReason(failureReason(p)),
                  zecHeld: formatZec(BigInt(p.zat_due)),
                  payoutId: p.redemption_id,
                  redirect: REDIRECT_HOW,
                },
          );
        }
        return true;
      });
      if (moved) compliance.queued();
      return moved;
    }
    const keys = Object.keys(fields);
    const sets = keys.map((k, i) => `, ${k} = $${i + 4}`).join("");
    const rows = await db.query(
      `UPDATE payouts SET status = $2${sets}, version = version + 1, updated_at = now()
       WHERE redemption_id = $1 AND version = $3 RETURNING 1`,
      [p.redemption_id, to, p.version, ...keys.map((k) => fields[k])],
    );
    if (rows.length === 0) return false;
    Object.assign(p, fields, { status: to, version: p.version + 1 });
    return true;
  }

  async #review(p: PayoutRow, reason: string): Promise<void> {
    if (await this.#move(p, "review", { last_error: reason })) this.options.onReview?.(p.redemption_id, reason);
  }

  async #onChain(id: bigint) {
    return this.chain.client.readContract({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "getRedemption",
      args: [id],
    });
  }

  async #start(p: PayoutRow): Promise<void> {
    const id = BigInt(p.redemption_id);
    const onChain = await this.#onChain(id);
    if (onChain.status === COMPLETED) return void (await this.#move(p, "completed"));
    if (onChain.status === FAILED) return void (await this.#move(p, "held"));
    if (onChain.status === REDIRECTED) return void (await this.#move(p, "redirected"));
    if (
      onChain.status !== REQUESTED ||
      onChain.owner.toLowerCase() !== p.owner.toLowerCase() ||
      onChain.amount.toString() !== p.amount ||
      onChain.zatDue.toString() !== p.zat_due
    ) {
      await this.#review(p, "The redemption on-chain no longer matches its request event (reorganised?).");
      return;
    }
    let address = p.withdraw_address;
    if (address === null && !p.last_error?.startsWith(NOT_PAYABLE) && p.sealed_address && p.sealed_address_hash) {
      // Found while custody lacked the key it names: opened again (replay check included) with today's keys.
      const owner = p.owner as `0x${string}`;
      const hash = p.sealed_address_hash as `0x${string}`;
      const opened = await this.#open(this.db, BigInt(p.redemption_id), owner, p.sealed_address, hash);
      if ("missingKey" in opened) {
        // The contract took the key, so the holder did nothing wrong: an operator fixes custody's keys.
        await this.#review(p, opened.missingKey);
        return;
      }
      if ("address" in opened) {
        await this.db.query("UPDATE payouts SET withdraw_address = $2 WHERE redemption_id = $1", [
          p.redemption_id,
          opened.address,
        ]);
        address = p.withdraw_address = opened.address;
      } else p.last_error = `${NOT_PAYABLE}${opened.why}`;
    }
    if (address === null) {
      // An envelope custody cannot open (or a replay) is never paid: failed and held for its owner to
      // redirect, it holds up no payout behind it. Its reason was written when it was found.
      const reason = p.last_error?.startsWith(NOT_PAYABLE)
        ? p.last_error
        : `${NOT_PAYABLE}custody cannot open its sealed address.`;
      if (await this.#move(p, "failing", { last_error: reason })) await this.#fail(p);
      return;
    }
    if (!(await this.#claim(p))) return;
    let operationId: string;
    try {
      // The canonical (lower-case) form: the one the wallet is sure to read as we did.
      operationId = await this.custody.send({ redemptionId: id, address, zat: BigInt(p.zat_due) });
    } catch (error) {
      if (error instanceof PayoutNotSent) {
        // Never reached the wallet: try again later without spending an attempt.
        await this.#move(p, "pending", {
          attempts: p.attempts - 1,
          last_error: error.message,
          next_attempt_at: new Date(Date.now() + this.options.retryMs),
        });
        return;
      }
      if (error instanceof PayoutRefused) return this.#retryOrFail(p, error.message);
      await this.#review(p, `Handing the payout to the wallet failed midway: ${(error as Error).message}`);
      return;
    }
    if (!(await this.#move(p, "sent", { operation_id: operationId }))) {
      // Another replica took the row into review meanwhile: leave the operator the operation id.
      await this.db.query(
        "UPDATE payouts SET operation_id = $2 WHERE redemption_id = $1 AND status = 'review' AND operation_id IS NULL",
        [p.redemption_id, operationId],
      );
      return;
    }
    await this.#follow(p);
  }

  /**
   * Moves a payout to "sending" unless a screener held it since this pass read
   * it (reading the chain leaves time for that). Its redemption request is
   * locked first, as a hold locks it before it reads the payout: a hold
   * committed while we waited is seen by the next statement, and a hold
   * after us finds the payout no longer pending.
   */
  async #claim(p: PayoutRow): Promise<boolean> {
    if (!this.options.compliance) return this.#move(p, "sending", { attempts: p.attempts + 1 });
    return this.db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM redemption_requests WHERE redemption_id = $1 FOR UPDATE", [p.redemption_id]);
      // The same for a redirected payout's own hold: a screener's decision locks it first too.
      await tx.query("SELECT 1 FROM compliance_holds WHERE subject_type = 'payout' AND subject_id = $1 FOR UPDATE", [
        p.redemption_id,
      ]);
      const [held] = await tx.query(
        `SELECT 1 FROM payouts WHERE redemption_id = $1 AND ${holdIn("'awaiting_verdict', 'held', 'rejected'")}`,
        [p.redemption_id],
      );
      if (held) return false;
      return this.#move(p, "sending", { attempts: p.attempts + 1 }, tx);
    });
  }

  async #follow(p: PayoutRow): Promise<void> {
    const state = await this.custody.operation(p.operation_id!);
    switch (state.state) {
      case "pending":
        return;
      case "unknown":
        await this.#review(p, `Operation ${p.operation_id}: ${state.reason}; it may have been paid.`);
        return;
      case "failed":
        return this.#retryOrFail(p, state.reason);
      case "success": {
        const moved = await this.db.transaction(async (tx) => {
          if (!(await this.#move(p, "settling", { zcash_txid: state.zcashTxId }, tx))) return false;
          await recordPayout(tx, p.redemption_id, p.zat_due, state.zcashTxId);
          return true;
        });
        if (moved) await this.#settle(p);
        return;
      }
    }
  }

  async #retryOrFail(p: PayoutRow, reason: string): Promise<void> {
    if (p.attempts >= this.options.maxAttempts) {
      if (await this.#move(p, "failing", { last_error: reason })) await this.#fail(p);
      return;
    }
    const wait = Math.min(this.options.retryMs * 2 ** (p.attempts - 1), MAX_RETRY_MS);
    await this.#move(p, "pending", {
      last_error: reason,
      operation_id: null,
      next_attempt_at: new Date(Date.now() + wait),
    });
  }

  /** Marks the paid redemption completed on-chain with the Zcash txid. */
  async #settle(p: PayoutRow): Promise<void> {
    try {
      const { txHash } = await this.attestor.completeRedemption(BigInt(p.redemption_id), p.zcash_txid as `0x${string}`);
      await this.#move(p, "completed", { settle_tx_hash: txHash });
    } catch (error) {
      if (!isRevert(error, "RedemptionNotPending")) throw error;
      // Settled by an earlier pass that stopped before recording it.
      const onChain = await this.#onChain(BigInt(p.redemption_id));
      if (onChain.status === COMPLETED) await this.#move(p, "completed");
      else await this.#review(p, "Paid in ZEC, but the redemption is no longer pending on-chain.");
    }
  }

  /** The screener's reason code for a rejected redemption. */
  async #rejectionCode(p: PayoutRow): Promise<string> {
    const [hold] = await this.db.query<{ reason_code: string | null }>(
      `SELECT h.reason_code FROM redemption_requests r JOIN compliance_holds h
         ON h.subject_type = 'redemption' AND h.subject_id = r.id WHERE r.redemption_id = $1
       UNION ALL
       SELECT reason_code FROM compliance_holds WHERE subject_type = 'payout' AND subject_id = $1 LIMIT 1`,
      [p.redemption_id],
    );
    return hold?.reason_code ?? "rejected";
  }

  /**
   * Fails the payout on-chain: every payout alike (a redemption, released
   * collateral, a withdrawn note). Nothing is given back and no position
   * changes; the ZEC stays owed to the owner, who redirects it.
   */
  async #fail(p: PayoutRow): Promise<void> {
    const reason = failureReason(p);
    try {
      const { txHash } = await this.attestor.failRedemption(BigInt(p.redemption_id), reason);
      await this.#move(p, "held", { settle_tx_hash: txHash });
    } catch (error) {
      if (!isRevert(error, "RedemptionNotPending")) throw error;
      // Failed by an earlier pass that stopped before recording it (and maybe redirected since).
      const onChain = await this.#onChain(BigInt(p.redemption_id));
      if (onChain.status === FAILED) await this.#move(p, "held");
      else if (onChain.status === REDIRECTED) await this.#move(p, "redirected");
      else await this.#review(p, "Failing it was refused: the payout is no longer pending on-chain.");
    }
  }
}

/** The custody's ZEC ledger: one payout line per redemption. */
async function recordPayout(db: Queryable, redemptionId: string, zat: string, zcashTxId: string): Promise<void> {
  await db.query(
    `INSERT INTO custody_ledger (kind, amount_zat, redemption_id, zcash_txid) VALUES ('payout', $1, $2, $3)
     ON CONFLICT (redemption_id) WHERE kind = 'payout' DO NOTHING`,
    [zat, redemptionId, zcashTxId],
  );
}

/**
 * An operator's verdict on a payout held for review, after looking in the
 * wallet (its open operations, and its transactions for the memo
 * `zsd-redemption:<id>`): paid (with the Zcash txid; the worker then settles
 * it on-chain) or not paid (the worker sends it again). Returns false when it
 * is not in review.
 */
export async function resolveReview(
  db: Database,
  redemptionId: bigint,
  verdict: { paid: `0x${string}` } | { paid: false },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<PayoutRow>(
      `UPDATE payouts SET status = $2, zcash_txid = $3, operation_id = NULL, next_attempt_at = now(),
         last_error = NULL, version = version + 1, updated_at = now()
       WHERE redemption_id = $1 AND status = 'review' RETURNING *`,
      [redemptionId.toString(), verdict.paid ? "settling" : "pending", verdict.paid || null],
    );
    if (!row) return false;
    if (verdict.paid) await recordPayout(tx, row.redemption_id, row.zat_due, verdict.paid);
    return true;
  });
}
