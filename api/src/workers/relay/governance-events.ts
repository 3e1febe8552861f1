// Governance events for agents: the governor's ProposalCreated, ProposalQueued
// and ProposalExecuted, once they have the relay's confirmations, become
// governance.proposal.created / .queued / .executed for every account with an
// agent that subscribes to them. The events and the cursor past their block
// are written in one transaction, so each is emitted once however often the
// worker restarts.
import { type Log, formatUnits } from "viem";
import { stableGovernorAbi } from "@zsd/sdk";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import type { GovernanceChain } from "../../adapters/governance.ts";
import { type SubscribableEventType, emitEvent } from "../../domain/agents/events.ts";
import { titleOf } from "../../domain/governance/governance.ts";
import type { Environment } from "../../domain/accounts/keys.ts";
import { advanceCursor, readCursor } from "../cursors.ts";
import { accountsListening } from "../../domain/agents/store.ts";

const BLOCKS_PER_QUERY = 2_000n;

export interface GovernanceEventsOptions {
  environment: Environment;
  /** Blocks on top of an event's block before it is told (1 = mined). */
  confirmations: number;
  /** Wakes the webhook worker after events were written. */
  onQueued?: () => void;
}

type GovernorLog = Log<bigint, number, false, undefined, true, typeof stableGovernorAbi>;

export class GovernanceEvents {
  readonly #cursor: string;

  constructor(
    private readonly db: Database,
    private readonly gov: GovernanceChain,
    private readonly options: GovernanceEventsOptions,
  ) {
    this.#cursor = `governance-events:${options.environment}:${gov.governor.toLowerCase()}`;
  }

  async pass(): Promise<void> {
    const head = await this.gov.client.getBlockNumber({ cacheTime: 0 });
    const safe = head - BigInt(this.options.confirmations - 1);
    const cursor = await readCursor(this.db, this.#cursor);
    let from = cursor ? BigInt(cursor.block) + 1n : this.gov.startBlock;
    let emitted = 0;
    while (from <= safe) {
      const to = from + BLOCKS_PER_QUERY - 1n < safe ? from + BLOCKS_PER_QUERY - 1n : safe;
      const logs = (await this.gov.client.getContractEvents({
        address: this.gov.governor,
        abi: stableGovernorAbi,
        fromBlock: from,
        toBlock: to,
        strict: true,
      })) as GovernorLog[];
      await this.db.transaction(async (tx) => {
        for (const log of logs) emitted += await this.#emit(tx, log);
        await advanceCursor(tx, this.#cursor, to);
      });
      from = to + 1n;
    }
    if (emitted > 0) this.options.onQueued?.();
  }

  /** One governor event to every account listening for it; the number of accounts told. */
  async #emit(tx: Queryable, log: GovernorLog): Promise<number> {
    const at = { blockNumber: Number(log.blockNumber), txHash: log.transactionHash };
    let type: SubscribableEventType;
    let data: Record<string, unknown>;
    if (log.eventName === "ProposalCreated") {
      const a = log.args;
      type = "governance.proposal.created";
      data = {
        proposalId: a.proposalId.toString(),
        proposer: a.proposer,
        title: titleOf(a.description),
        voteStart: Number(a.voteStart),
        voteEnd: Number(a.voteEnd),
        calls: a.targets.map((target, i) => ({
          target,
          value: formatUnits(a.values[i] ?? 0n, 18),
          summary: this.gov.decode(target, a.values[i] ?? 0n, a.calldatas[i] ?? "0x").summary,
        })),
        ...at,
      };
    } else if (log.eventName === "ProposalQueued") {
      type = "governance.proposal.queued";
      data = {
        proposalId: log.args.proposalId.toString(),
        eta: new Date(Number(log.args.etaSeconds) * 1000).toISOString(),
        ...at,
      };
    } else if (log.eventName === "ProposalExecuted") {
      type = "governance.proposal.executed";
      data = { proposalId: log.args.proposalId.toString(), ...at };
    } else {
      return 0;
    }
    const accounts = await accountsListening(tx, this.options.environment, type);
    for (const account_id of accounts) {
      await emitEvent(tx, { account: account_id, environment: this.options.environment, type, data });
    }
    return accounts.length;
  }
}
