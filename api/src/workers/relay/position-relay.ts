// The position relay: queued position actions and note spends
// (domain/positions/positions.ts), sent and followed by the call relay
// (./call-relay.ts). What a call needs is its signer's nonce (a signed
// action), its note's nullifier (a top-up or a withdrawal) or, for the
// keeper's liquidation or redistribution, the position still open; when another transaction
// took it first, the minter's and position manager's events say whether that one carried our call.
// Queued note spends share one spendBatch, and the keeper's redistributions one redistributeMany.
import { type Address, type Hex, parseEventLogs } from "viem";
import { positionManagerAbi, stableMinterAbi } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import { actionFree, positionActionRows } from "../../domain/positions/store.ts";
import type { ActionRow } from "../../domain/positions/views.ts";
import { emitAction } from "../../domain/positions/queue.ts";
import { RELAY_HEADROOM, spendBatchHeadroom } from "../../adapters/gas.ts";
import { type CallKind, CallRelay, type Logs, carrying } from "./call-relay.ts";
import { expiringRoots } from "./mint-batch.ts";
import { batchCarries, spendBatchCall, spendOf } from "./spend-batch.ts";
import { redistributeManyCall, redistributionBatchCarries } from "../upkeep/redistribute-batch.ts";
import type { TransactionSender } from "./sender.ts";

/** What a mined action's events say: where the released ZEC went. */
interface Released {
  payoutId?: bigint;
  releasedZat?: bigint;
  /** The new note's place in the registry's leaf queue: it has no leaf index until inserted. */
  noteSequence?: bigint;
}

/** The position manager's events that name a position an action changed. */
const POSITION_EVENTS = [
  "PositionRepaid",
  "PositionToppedUp",
  "PositionClosed",
  "PositionLiquidated",
  "PositionRedistributed",
] as const;

/** A spend's events: its note's (the minter's) and the position's it topped up (the position manager's). */
const SPEND_EVENTS_ABI = [...stableMinterAbi, ...positionManagerAbi];

function released(logs: Logs): Released {
  const [release] = parseEventLogs({ abi: stableMinterAbi, logs, eventName: "CollateralReleased" });
  if (release) {
    const { payoutId, amountZat, noteSequence } = release.args;
    return payoutId === 0n ? { releasedZat: amountZat, noteSequence } : { releasedZat: amountZat, payoutId };
  }
  const [withdrawn] = parseEventLogs({ abi: stableMinterAbi, logs, eventName: "NoteWithdrawn" });
  return withdrawn ? { releasedZat: withdrawn.args.amountZat, payoutId: withdrawn.args.payoutId } : {};
}

/** A batch's logs hold every spend's events: a note spend's own are those naming its nullifier. */
function ownLogs(logs: Logs, row: ActionRow): Logs {
  if (row.nullifier_hash === null) return logs;
  const nullifier = BigInt(row.nullifier_hash);
  return parseEventLogs({ abi: SPEND_EVENTS_ABI, logs, eventName: ["NoteWithdrawn", "PositionToppedUp"] }).filter(
    (e) => (e.args as { nullifierHash?: bigint }).nullifierHash === nullifier,
  );
}

/** Note spends carry a proof, not a signed nonce: any number go together in one spendBatch. */
const NOTE_SPENDS = new Set(["top_up", "withdraw_note"]);

/**
 * Most of the keeper's redistributions one redistributeMany carries: about 40,000 gas each
 * (bench:contracts), so 50 stay near 2M gas, far under a block; the relay reads 50 queued rows a pass.
 */
export const REDISTRIBUTE_BATCH_MAX = 50;

/** The keeper's redistribution of `row`'s position in a mined transaction's logs, if it is there. */
function redistributionIn(logs: Logs, row: ActionRow) {
  if (row.action !== "redistribute") return undefined;
  const positionId = BigInt(row.position_id!);
  return parseEventLogs({ abi: positionManagerAbi, logs, eventName: "PositionRedistributed" }).find(
    (e) => e.args.positionId === positionId,
  );
}

/**
 * What a mined action's events say of `row`. A redistributeMany pays one payout for all its positions (its
 * release names position 0): each row names that payout and its own position's reward, the floor's rest
 * taken from the other positions being in the payout only.
 */
function factsOf(logs: Logs, row: ActionRow): Released {
  const facts = released(ownLogs(logs, row));
  const [release] = parseEventLogs({ abi: stableMinterAbi, logs, eventName: "CollateralReleased" });
  const own = redistributionIn(logs, row);
  if (own && release?.args.positionId === 0n) return { ...facts, releasedZat: own.args.rewardZat };
  return facts;
}

export interface PositionRelayOptions {
  confirmations: number;
  maxAttempts: number;
  /** position.action.* and withdrawal.* events to the account that asked. */
  compliance?: ComplianceService;
  /** Most queued note spends one transaction carries (spendBatch); below 2, each goes alone. */
  spendBatchMax?: number;
}

export class PositionRelay {
  readonly #relay: CallRelay;
  readonly #kind: CallKind<ActionRow, Released>;

  constructor(db: Database, chain: Chain, sender: TransactionSender, options: PositionRelayOptions) {
    const { compliance } = options;
    this.#relay = new CallRelay(db, chain, sender, { ...options, onEvents: () => compliance?.queued() });
    const minter = { address: chain.minter, abi: stableMinterAbi } as const;
    const positions = { address: chain.positions, abi: positionManagerAbi } as const;
    const event = (row: ActionRow) => (row.action === "withdraw_note" ? "withdrawal" : "position.action");
    this.#kind = {
      rows: positionActionRows,
      what: "position action",
      to: chain.minter,
      encode: (row) => row.calldata,
      used: async (row) => {
        if (row.signed_nonce !== null) {
          const nonce = await chain.client.readContract({
            ...minter,
            functionName: "nonces",
            args: [row.signer as Address],
          });
          return nonce > BigInt(row.signed_nonce);
        }
        if (row.nullifier_hash !== null) {
          return chain.client.readContract({ ...minter, functionName: "isSpent", args: [BigInt(row.nullifier_hash)] });
        }
        const position = await chain.client.readContract({
          ...positions,
          functionName: "getPosition",
          args: [BigInt(row.position_id!)],
        });
        return position.status !== 1;
      },
      landed: async (row, data) => {
        const fromBlock = BigInt(chain.deployment.contracts.StableMinter.startBlock);
        const positionsFromBlock = BigInt(chain.deployment.contracts.PositionManager.startBlock);
        const hashes: Hex[] = [];
        if (row.action === "withdraw_note") {
          const events = await chain.client.getContractEvents({
            ...minter,
            eventName: "NoteWithdrawn",
            args: { nullifierHash: BigInt(row.nullifier_hash!) },
            fromBlock,
          });
          hashes.push(...events.map((e) => e.transactionHash));
        } else {
          const positionId = BigInt(row.position_id!);
          const releases = await chain.client.getContractEvents({
            ...minter,
            eventName: "CollateralReleased",
            args: { positionId },
            fromBlock,
          });
          hashes.push(...releases.map((e) => e.transactionHash));
          for (const eventName of POSITION_EVENTS) {
            const events = await chain.client.getContractEvents({
              ...positions,
              eventName,
              args: { positionId },
              fromBlock: positionsFromBlock,
            } as never);
            hashes.push(...(events as { transactionHash: Hex }[]).map((e) => e.transactionHash));
          }
        }
        // A note spend may have gone inside a spendBatch (ours, mined before a pass saw it), a redistribution
        // inside a redistributeMany (whose event for the position puts it among `hashes`): that carried it too.
        const carries = (input: Hex) =>
          row.nullifier_hash !== null
            ? batchCarries(input, row.calldata as Hex)
            : row.action === "redistribute" && redistributionBatchCarries(input, BigInt(row.position_id!));
        const hash = await carrying(chain.client, chain.minter, data, [...new Set(hashes)], carries);
        if (!hash) return undefined;
        const receipt = await chain.client.getTransactionReceipt({ hash });
        return { txHash: hash, blockNumber: receipt.blockNumber, facts: factsOf(receipt.logs, row) };
      },
      usedFailure: (row) => ({
        code:
          row.signed_nonce !== null
            ? "nonce_used"
            : row.nullifier_hash !== null
              ? "nullifier_spent"
              : "position_not_open",
        reason:
          row.signed_nonce !== null
            ? `Another signature of ${row.signer} used its nonce ${row.signed_nonce} on the minter first; sign again.`
            : row.nullifier_hash !== null
              ? "The note was spent by another transaction first."
              : `Position ${row.position_id} was liquidated or closed by another transaction first.`,
      }),
      fromLogs: factsOf,
      // A redistributeMany skips a position cleared first or no longer under 100%, and goes on with the rest.
      carried: (logs, row) => row.action !== "redistribute" || redistributionIn(logs, row) !== undefined,
      skipped: (row) => ({
        code: "not_redistributed",
        reason:
          `The keeper's redistributeMany went through without position ${row.position_id}: it was no longer under ` +
          "100% (nor within a redemption's margin of it) when mined. The keeper queues it again if it falls back.",
      }),
      columns: (r) => ({
        payout_id: r.payoutId?.toString() ?? null,
        released_zat: r.releasedZat?.toString() ?? null,
        note_sequence: r.noteSequence?.toString() ?? null,
      }),
      confirmed: (tx, row) => emitAction(tx, compliance, row, `${event(row)}.confirmed`),
      failed: (tx, row) => emitAction(tx, compliance, row, `${event(row)}.failed`),
      // Not while compliance holds it, nor while it holds an earlier action of the same signer.
      free: compliance ? actionFree : undefined,
      batches: [
        {
          max: options.spendBatchMax ?? 1,
          // A spend whose root expires soon goes alone: mined past its expiry, it would revert the batch for all.
          joining: async (rows) => {
            const spends = rows.filter((row) => NOTE_SPENDS.has(row.action));
            const roots = new Map(spends.map((row) => [row.id, spendOf(row.calldata as Hex).root.toString()]));
            const expiring = await expiringRoots(chain, [...roots.values()]);
            return spends.filter((row) => !expiring.has(roots.get(row.id)!));
          },
          encode: (rows) => spendBatchCall(rows.map((row) => row.calldata as Hex)),
          headroom: spendBatchHeadroom,
        },
        {
          // The keeper's redistributions of a pass: one transaction, one payout, a floor's worth of gas saved
          // on each. Only those paying the same address for the same relayer share the batch's destination.
          max: REDISTRIBUTE_BATCH_MAX,
          joining: async (rows) => rows.filter((row) => row.action === "redistribute" && row.account_id === null),
          key: (row) => `${row.signer?.toLowerCase() ?? ""} ${row.zcash_address ?? ""}`,
          encode: (rows) => redistributeManyCall(rows.map((row) => row.calldata as Hex)),
          // Positions are taken out of the order, never walked into it: the relay's usual headroom.
          headroom: () => RELAY_HEADROOM,
        },
      ],
    };
  }

  async pass(): Promise<void> {
    await this.#relay.pass(this.#kind);
  }
}
