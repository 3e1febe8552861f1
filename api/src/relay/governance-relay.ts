// The governance relay: queued ballots (castVoteBySig) and delegations
// (delegateBySig) go out through the transaction sender, write-ahead as mints
// do, and are followed to confirmation. A signed call whose vote or nonce was
// used meanwhile is reconciled from the chain: if a mined transaction carries
// our very call (ours, whichever of a replaced pair was mined, or a copy sent
// by someone else) it went through; otherwise the voter voted, or the
// delegator signed, by other means and this one never can.
import { type Address, type Hex, encodeFunctionData, formatUnits, parseEventLogs, parseTransaction } from "viem";
import { governanceTokenAbi, stableGovernorAbi } from "@zsd/sdk";
import type { Database, Queryable } from "../adapters/db/index.ts";
import type { GovernanceChain } from "../adapters/governance.ts";
import type { ComplianceService } from "../domain/compliance.ts";
import { SUPPORT } from "../domain/governance.ts";
import { type Failure, refusalOf, refusalOfMined } from "../domain/reverts.ts";
import { updateRow } from "./rows.ts";
import type { SentTransaction, TransactionSender } from "./sender.ts";

interface JobRow {
  id: string;
  account_id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  submitted_at: Date | string | null;
  attempts: number;
}

interface VoteRow extends JobRow {
  proposal_id: string;
  voter: string;
  support: number;
  reason: string | null;
  signature: Hex;
}

interface DelegationRow extends JobRow {
  delegator: string;
  delegatee: string;
  delegation_nonce: string;
  expiry: string;
  signature: { v: number; r: Hex; s: Hex };
}

/** A mined transaction that carried a job's call, and what it says. */
interface Landed {
  txHash: Hex;
  blockNumber: bigint;
  weight?: bigint;
}

/** What differs between votes and delegations. */
interface Kind<Row extends JobRow> {
  table: "governance_votes" | "governance_delegations";
  what: string;
  to: (gov: GovernanceChain) => Address;
  encode: (row: Row) => Hex;
  /** Whether the chain already took the vote or the nonce this call needs. */
  used: (gov: GovernanceChain, row: Row) => Promise<boolean>;
  /** The mined transaction carrying exactly `data` to the contract, among the events of the vote or nonce. */
  landed: (gov: GovernanceChain, row: Row, data: Hex) => Promise<Landed | undefined>;
  /** The failure when the vote or nonce was taken by another transaction. */
  usedFailure: (row: Row) => Failure;
  /** What a confirmed job's receipt logs say (the vote's weight). */
  fromLogs: (logs: Parameters<typeof parseEventLogs>[0]["logs"]) => Pick<Landed, "weight">;
  /** Events of a confirmation, in its transaction. */
  confirmed?: (tx: Queryable, row: Row, landed: Landed) => Promise<void>;
}

export interface GovernanceRelayOptions {
  /** Blocks on top of a vote's or delegation's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Failed simulations without a refusal of our contracts (a node error) before a job is failed. */
  maxAttempts: number;
  /** governance.vote.confirmed to the account that relayed the ballot. */
  compliance?: ComplianceService;
}

/** Transactions to `to` carrying `data`, among candidate events' transactions, newest first. */
async function carrying(gov: GovernanceChain, to: Address, data: Hex, hashes: Hex[]): Promise<Hex | undefined> {
  for (const hash of hashes.reverse()) {
    const tx = await gov.client.getTransaction({ hash });
    if (tx.to?.toLowerCase() === to.toLowerCase() && tx.input.toLowerCase() === data.toLowerCase()) return hash;
  }
  return undefined;
}

export class GovernanceRelay {
  readonly #votes: Kind<VoteRow>;
  readonly #delegations: Kind<DelegationRow>;

  constructor(
    private readonly db: Database,
    private readonly gov: GovernanceChain,
    private readonly sender: TransactionSender,
    private readonly options: GovernanceRelayOptions,
  ) {
    const compliance = options.compliance;
    this.#votes = {
      table: "governance_votes",
      what: "vote",
      to: (g) => g.governor,
      encode: (v) =>
        v.reason === null
          ? encodeFunctionData({
              abi: stableGovernorAbi,
              functionName: "castVoteBySig",
              args: [BigInt(v.proposal_id), v.support, v.voter as Address, v.signature],
            })
          : encodeFunctionData({
              abi: stableGovernorAbi,
              functionName: "castVoteWithReasonAndParamsBySig",
              args: [BigInt(v.proposal_id), v.support, v.voter as Address, v.reason, "0x", v.signature],
            }),
      used: (g, v) =>
        g.client.readContract({
          address: g.governor,
          abi: stableGovernorAbi,
          functionName: "hasVoted",
          args: [BigInt(v.proposal_id), v.voter as Address],
        }),
      landed: async (g, v, data) => {
        const options = {
          address: g.governor,
          abi: stableGovernorAbi,
          args: { voter: v.voter as Address },
          fromBlock: g.startBlock,
          strict: true,
        } as const;
        const events = [
          ...(await g.client.getContractEvents({ ...options, eventName: "VoteCast" })),
          ...(await g.client.getContractEvents({ ...options, eventName: "VoteCastWithParams" })),
        ].filter((e) => e.args.proposalId === BigInt(v.proposal_id));
        const hash = await carrying(
          g,
          g.governor,
          data,
          events.map((e) => e.transactionHash),
        );
        const event = events.find((e) => e.transactionHash === hash);
        return event
          ? { txHash: event.transactionHash, blockNumber: event.blockNumber, weight: event.args.weight }
          : undefined;
      },
      usedFailure: (v) => ({
        code: "already_voted",
        reason: `${v.voter} voted on proposal ${v.proposal_id} by another transaction first; a voter votes once.`,
      }),
      fromLogs: (logs) => {
        const [event] = [
          ...parseEventLogs({ abi: stableGovernorAbi, logs, eventName: "VoteCast" }),
          ...parseEventLogs({ abi: stableGovernorAbi, logs, eventName: "VoteCastWithParams" }),
        ];
        return { weight: event?.args.weight };
      },
      confirmed: async (tx, v, landed) => {
        await compliance?.emitIn(tx, v.account_id, "governance.vote.confirmed", {
          voteId: v.id,
          proposalId: v.proposal_id,
          voter: v.voter,
          support: SUPPORT[v.support],
          weight: landed.weight === undefined ? null : formatUnits(landed.weight, 18),
          reason: v.reason,
          txHash: landed.txHash,
          blockNumber: Number(landed.blockNumber),
        });
      },
    };
    this.#delegations = {
      table: "governance_delegations",
      what: "delegation",
      to: (g) => g.token,
      encode: (d) =>
        encodeFunctionData({
          abi: governanceTokenAbi,
          functionName: "delegateBySig",
          args: [
            d.delegatee as Address,
            BigInt(d.delegation_nonce),
            BigInt(d.expiry),
            d.signature.v,
            d.signature.r,
            d.signature.s,
          ],
        }),
      used: async (g, d) =>
        (await g.client.readContract({
          address: g.token,
          abi: governanceTokenAbi,
          functionName: "nonces",
          args: [d.delegator as Address],
        })) > BigInt(d.delegation_nonce),
      landed: async (g, d, data) => {
        const events = await g.client.getContractEvents({
          address: g.token,
          abi: governanceTokenAbi,
          eventName: "DelegateChanged",
          args: { delegator: d.delegator as Address },
          fromBlock: g.tokenStartBlock,
          strict: true,
        });
        const hash = await carrying(
          g,
          g.token,
          data,
          events.map((e) => e.transactionHash),
        );
        const event = events.find((e) => e.transactionHash === hash);
        return event ? { txHash: event.transactionHash, blockNumber: event.blockNumber } : undefined;
      },
      usedFailure: (d) => ({
        code: "nonce_used",
        reason: `Another signature of ${d.delegator} used its nonce ${d.delegation_nonce} on the governance token first; sign again.`,
      }),
      fromLogs: () => ({}),
    };
  }

  /** Follows submitted jobs, then submits queued ones: votes first, as they have deadlines. */
  async pass(): Promise<void> {
    await this.#pass(this.#votes);
    await this.#pass(this.#delegations);
  }

  async #pass<Row extends JobRow>(kind: Kind<Row>): Promise<void> {
    for (const row of await this.#jobs<Row>(kind, "submitted")) await this.#follow(kind, row);
    for (const row of await this.#jobs<Row>(kind, "queued")) await this.#submit(kind, row);
  }

  #jobs<Row extends JobRow>(kind: Kind<Row>, status: "queued" | "submitted"): Promise<Row[]> {
    return this.db.query<Row>(`SELECT * FROM ${kind.table} WHERE status = $1 ORDER BY created_at LIMIT 50`, [status]);
  }

  #set(kind: Kind<never>, id: string, changes: Record<string, unknown>, expectedStatus?: string) {
    const fields = { ...changes };
    if (changes.status === "confirmed" || changes.status === "failed") fields.settled_at = new Date();
    return updateRow(
      this.db,
      kind.table,
      id,
      fields,
      expectedStatus ? { column: "status", value: expectedStatus } : undefined,
    );
  }

  async #submit<Row extends JobRow>(kind: Kind<Row>, row: Row): Promise<void> {
    const to = kind.to(this.gov);
    const data = kind.encode(row);
    let gas: bigint;
    try {
      // The simulation: a call the contracts refuse now is failed at once, with their reason.
      gas = await this.gov.client.estimateGas({ account: this.sender.address, to, data });
    } catch (error) {
      if (await kind.used(this.gov, row)) return this.#reconcileUsed(kind, row, data);
      const refusal = await refusalOf(this.gov.chain, error);
      if (refusal) return this.#fail(kind, row, refusal);
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (row.attempts + 1 >= this.options.maxAttempts) {
        return this.#fail(kind, row, {
          code: "simulation_failed",
          reason: `The ${kind.what} could not be simulated ${row.attempts + 1} times: ${reason}`,
        });
      }
      await this.#set(kind as Kind<never>, row.id, { attempts: row.attempts + 1, failure_reason: reason });
      return;
    }
    await this.sender.send(to, data, gas, (sent) =>
      this.#set(kind as Kind<never>, row.id, { status: "submitted", ...sent, attempts: row.attempts + 1 }, "queued"),
    );
  }

  async #follow<Row extends JobRow>(kind: Kind<Row>, row: Row): Promise<void> {
    const data = parseTransaction(row.raw_tx as Hex).data!;
    const receipt = await this.sender.receipt(row.tx_hash!);
    if (!receipt) {
      if (await kind.used(this.gov, row)) return this.#reconcileUsed(kind, row, data);
      const replaced = (sent: SentTransaction) =>
        this.#set(kind as Kind<never>, row.id, { ...sent, attempts: row.attempts + 1 });
      if ((await this.sender.advance(row, replaced)) === "nonce taken") {
        await this.#set(kind as Kind<never>, row.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null });
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (await kind.used(this.gov, row)) return this.#reconcileUsed(kind, row, data);
      const failure = await refusalOfMined(this.gov.chain, {
        from: this.sender.address,
        to: kind.to(this.gov),
        data,
        blockNumber: receipt.blockNumber,
      });
      return this.#fail(kind, row, failure, receipt.blockNumber);
    }
    const head = await this.gov.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#confirm(kind, row, {
        txHash: receipt.transactionHash,
        blockNumber: receipt.blockNumber,
        ...kind.fromLogs(receipt.logs),
      });
    }
  }

  /** The vote or nonce is used: by our call (then it is confirmed) or by another (then this one failed). */
  async #reconcileUsed<Row extends JobRow>(kind: Kind<Row>, row: Row, data: Hex): Promise<void> {
    const landed = await kind.landed(this.gov, row, data);
    if (landed) {
      const head = await this.gov.client.getBlockNumber({ cacheTime: 0 });
      // Not yet deep enough: a later pass confirms it.
      if (head - landed.blockNumber + 1n < BigInt(this.options.confirmations)) return;
      return this.#confirm(kind, row, landed);
    }
    await this.#fail(kind, row, kind.usedFailure(row));
  }

  async #confirm<Row extends JobRow>(kind: Kind<Row>, row: Row, landed: Landed): Promise<void> {
    const confirmed = await this.db.transaction(async (tx) => {
      const moved = await updateRow(
        tx,
        kind.table,
        row.id,
        {
          status: "confirmed",
          tx_hash: landed.txHash,
          block_number: Number(landed.blockNumber),
          settled_at: new Date(),
          ...(landed.weight === undefined ? {} : { weight: landed.weight.toString() }),
        },
        { column: "status", value: row.status },
      );
      if (moved) await kind.confirmed?.(tx, row, landed);
      return moved;
    });
    if (confirmed) this.options.compliance?.queued();
  }

  async #fail<Row extends JobRow>(kind: Kind<Row>, row: Row, failure: Failure, blockNumber?: bigint): Promise<void> {
    await updateRow(
      this.db,
      kind.table,
      row.id,
      {
        status: "failed",
        failure_code: failure.code,
        failure_reason: failure.reason,
        settled_at: new Date(),
        ...(blockNumber === undefined ? {} : { block_number: Number(blockNumber) }),
      },
      { column: "status", value: row.status },
    );
  }
}
