// The redirect relay: a failed payout's owner signed where its held ZEC goes
// (domain/payouts/redirects.ts); the call relay (./call-relay.ts) sends
// redirectWithSig to the Redemptions contract and follows it. What the call
// needs is the owner's nonce on Redemptions and the payout still failed; when
// another transaction took either first, the PayoutRedirected events say
// whether that one carried our call. Once confirmed, the payout's row is
// "redirected"; a redirect to an address made a new payout, which the payout
// worker finds (its PayoutRequested event) and pays like any other.
import { type Address, type Hex, parseEventLogs } from "viem";
import { redemptionsAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { ON_CHAIN } from "../../domain/payouts/status.ts";
import { type RedirectRow, markRedirected, redirectRows } from "../../domain/payouts/store.ts";
import { type CallKind, CallRelay, type Logs, carrying } from "./call-relay.ts";
import type { TransactionSender } from "./sender.ts";

interface Redirected {
  newPayoutId?: bigint;
  /** The new note's place in the registry's leaf queue: it has no leaf index until inserted. */
  noteSequence?: bigint;
}

function redirected(logs: Logs): Redirected {
  const [event] = parseEventLogs({ abi: redemptionsAbi, logs, eventName: "PayoutRedirected" });
  if (!event) return {};
  const { newId, noteSequence } = event.args;
  return newId === 0n ? { noteSequence } : { newPayoutId: newId };
}

/** Contract status of a failed payout (IRedemptions.Status.Failed). */
const FAILED = ON_CHAIN.failed;

export class RedirectRelay {
  readonly #relay: CallRelay;
  readonly #kind: CallKind<RedirectRow, Redirected>;

  constructor(
    db: Database,
    chain: Chain,
    sender: TransactionSender,
    options: { confirmations: number; maxAttempts: number },
  ) {
    this.#relay = new CallRelay(db, chain, sender, options);
    const redemptions = { address: chain.redemptions, abi: redemptionsAbi } as const;
    this.#kind = {
      rows: redirectRows,
      what: "redirect",
      to: chain.redemptions,
      encode: (row) => row.calldata,
      used: async (row) => {
        const [nonce, payout] = await Promise.all([
          chain.client.readContract({ ...redemptions, functionName: "nonces", args: [row.owner as Address] }),
          chain.client.readContract({ ...redemptions, functionName: "getPayout", args: [BigInt(row.payout_id)] }),
        ]);
        return nonce > BigInt(row.signed_nonce) || payout.status !== FAILED;
      },
      landed: async (row, data) => {
        const events = await chain.client.getContractEvents({
          ...redemptions,
          eventName: "PayoutRedirected",
          args: { id: BigInt(row.payout_id) },
          fromBlock: BigInt(chain.deployment.contracts.Redemptions!.startBlock),
        });
        const hash = await carrying(chain.client, chain.redemptions, data, [
          ...new Set(events.map((e) => e.transactionHash as Hex)),
        ]);
        if (!hash) return undefined;
        const receipt = await chain.client.getTransactionReceipt({ hash });
        return { txHash: hash, blockNumber: receipt.blockNumber, facts: redirected(receipt.logs) };
      },
      usedFailure: (row) => ({
        code: "payout_not_failed",
        reason:
          `Payout ${row.payout_id} was redirected, or the owner's nonce ${row.signed_nonce} used, by another ` +
          "transaction first.",
      }),
      fromLogs: redirected,
      columns: (r) => ({
        new_payout_id: r.newPayoutId?.toString() ?? null,
        note_sequence: r.noteSequence?.toString() ?? null,
      }),
      confirmed: (tx, row) => markRedirected(tx, row.payout_id.toString()),
    };
  }

  async pass(): Promise<void> {
    await this.#relay.pass(this.#kind);
  }
}
