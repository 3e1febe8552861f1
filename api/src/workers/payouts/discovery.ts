// How payouts are found: every PayoutRequested event with enough
// confirmations becomes a payout row (its sealed address opened for its owner,
// or the reason it will not be paid), and a payout redirected on-chain from
// one compliance refused is held for review. The scan rereads the newest
// blocks below its cursor each pass, for a redemption a reorganisation re-mined.
import { redemptionsAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { NOT_PAYABLE } from "../../domain/payouts/status.ts";
import { earlierPayoutWith, insertPayout, recordedPayouts } from "../../domain/payouts/store.ts";
import { refusedOrigin } from "../../domain/redemptions/store.ts";
import { advanceCursor, readCursor } from "../cursors.ts";
import { type PayoutVerdict, type SealedAddresses, payoutVerdict } from "../../domain/redemptions/sealed-addresses.ts";

/** What the scan needs of the payout worker's options (PayoutOptions). */
export interface DiscoveryOptions {
  /** Custody's seal keys: each payout's sealed address is opened for its owner. */
  sealed: SealedAddresses;
  /** Blocks a redemption's block must have on top of it, itself included, before it is paid: a reorganisation must not pay a redemption that never was. */
  confirmations: number;
  /** Holds (a held redemption is not paid, a rejected one is failed and held) and redemption.paid / .failed events. */
  compliance?: ComplianceService;
}

const CURSOR = "redemptions";
const BLOCKS_PER_QUERY = 2_000n;
/** Blocks below the cursor read again each pass, for a redemption re-mined there by a reorganisation. */
const RESCAN_BLOCKS = 64n;

/** Records the PayoutRequested events with enough confirmations since the last pass. */
export async function discoverPayouts(db: Database, chain: Chain, options: DiscoveryOptions): Promise<number> {
  const head = await chain.client.getBlockNumber({ cacheTime: 0 });
  const safe = head - BigInt(options.confirmations - 1);
  const cursor = await readCursor(db, CURSOR);
  const start = BigInt(chain.deployment.contracts.Redemptions!.startBlock);
  let from = cursor ? BigInt(cursor.block) + 1n - RESCAN_BLOCKS : start;
  if (from < start) from = start;
  let found = 0;
  while (from <= safe) {
    const to = from + BLOCKS_PER_QUERY - 1n < safe ? from + BLOCKS_PER_QUERY - 1n : safe;
    const range = { address: chain.redemptions, abi: redemptionsAbi, fromBlock: from, toBlock: to } as const;
    const [events, redirects] = await Promise.all([
      chain.client.getContractEvents({ ...range, eventName: "PayoutRequested" }),
      // An owner may redirect a payout compliance refused to an address on-chain, not only through the API:
      // the new payout is held with the event that makes it, before any pass can pick it.
      options.compliance
        ? chain.client.getContractEvents({ ...range, eventName: "PayoutRedirected" })
        : Promise.resolve([]),
    ]);
    // A pass at rest rescans blocks below the cursor: the cursor is written only when it moves.
    const moves = !cursor || to > BigInt(cursor.block);
    if (events.length === 0 && redirects.length === 0 && !moves) {
      from = to + 1n;
      continue;
    }
    await db.transaction(async (tx) => {
      // A payout recorded by an earlier pass keeps its row (the insert below does nothing for it): its
      // envelope is not opened again. Opening costs milliseconds of CPU, and the rescanned blocks hold
      // every recent redemption, pass after pass.
      const recorded = await recordedPayouts(
        tx,
        events.map((e) => e.args.id!.toString()),
      );
      for (const e of events) {
        const a = e.args;
        if (recorded.has(a.id!.toString())) continue;
        const opened = await openPayout(tx, options.sealed, a.id!, a.owner!, a.sealedAddress!, a.sealedAddressHash!);
        const inserted = await insertPayout(tx, {
          id: a.id!.toString(),
          owner: a.owner!,
          amount: a.amount!.toString(),
          zatDue: a.zatDue!.toString(),
          withdrawAddress: "address" in opened ? opened.address : null,
          sealedAddressHash: a.sealedAddressHash!.toLowerCase(),
          sealedAddress: a.sealedAddress!.toLowerCase(),
          lastError:
            "address" in opened ? null : "missingKey" in opened ? opened.missingKey : `${NOT_PAYABLE}${opened.why}`,
          requestTxHash: e.transactionHash,
        });
        if (inserted) found += 1;
      }
      for (const e of redirects) {
        if (e.args.newId) await holdIfRefused(tx, options.compliance!, e.args.id!, e.args.newId);
      }
      if (moves) {
        await advanceCursor(tx, CURSOR, to);
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
export async function openPayout(
  tx: Queryable,
  sealedAddresses: SealedAddresses,
  id: bigint,
  owner: `0x${string}`,
  sealed: `0x${string}`,
  hash: `0x${string}`,
): Promise<PayoutVerdict> {
  // The envelope of an earlier payout again (copied by its owner onto a new request): paid once only.
  // Only an earlier payout that opened counts: a copy someone else put on their own request first (a
  // front-run) opens for nobody but the envelope's owner, and must not spoil the owner's payout.
  const earlier = await earlierPayoutWith(tx, hash, id);
  if (earlier) return { why: `its sealed address was already used by payout ${earlier}.` };
  return payoutVerdict(sealedAddresses.payable(sealed, owner));
}

/**
 * Holds payout `newId`, redirected from `fromId`, for compliance review when
 * compliance refused `fromId` (or a payout it was redirected from): paying
 * it unscreened would undo the refusal.
 */
async function holdIfRefused(
  tx: Queryable,
  compliance: ComplianceService,
  fromId: bigint,
  newId: bigint,
): Promise<void> {
  const origin = await refusedOrigin(tx, fromId);
  if (!origin) return;
  await compliance.holdRedirectIn(tx, origin.account_id, {
    id: newId.toString(),
    fromId: fromId.toString(),
    redemptionRequestId: origin.request_id,
  });
}
