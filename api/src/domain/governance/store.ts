// Every statement against the governance tables: the votes, delegations and
// proposal actions the service queues for the relay and reads back for their
// accounts, and the job-row operations the relay moves them with.
import type { Queryable } from "../../adapters/db/index.ts";
import { jobRows } from "../../adapters/db/rows.ts";
import type { DelegationRow, ProposalActionRow, VoteRow } from "./views.ts";

/** A ballot's row as the governance relay moves it. */
export const voteRows = jobRows("governance_votes");
/** A delegation's row as the governance relay moves it. */
export const delegationRows = jobRows("governance_delegations");
/** A proposal's queue or execute as the governance relay moves it. */
export const proposalActionRows = jobRows("governance_proposal_actions");

/** A queued or submitted ballot of `voter` on the proposal, if any. */
export async function findPendingVote(
  db: Queryable,
  proposalId: string,
  voter: string,
): Promise<{ id: string; account_id: string } | undefined> {
  const [pending] = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM governance_votes
       WHERE proposal_id = $1 AND voter = $2 AND status IN ('queued', 'submitted')`,
    [proposalId, voter],
  );
  return pending;
}

/** Queues a ballot; a unique index refuses a second pending ballot of the voter on the proposal. */
export async function insertVote(
  db: Queryable,
  vote: {
    id: string;
    accountId: string;
    environment: string;
    proposalId: string;
    voter: string;
    support: number;
    reason: string | null;
    signature: string;
    ballotNonce: string;
    weight: string;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO governance_votes
           (id, account_id, environment, proposal_id, voter, support, reason, signature, ballot_nonce, weight, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued')`,
    [
      vote.id,
      vote.accountId,
      vote.environment,
      vote.proposalId,
      vote.voter,
      vote.support,
      vote.reason,
      vote.signature,
      vote.ballotNonce,
      vote.weight,
    ],
  );
}

export async function findVote(
  db: Queryable,
  voteId: string,
  accountId: string,
  environment: string,
): Promise<VoteRow | undefined> {
  const [row] = await db.query<VoteRow>(
    `SELECT * FROM governance_votes WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [voteId, accountId, environment],
  );
  return row;
}

/** The delegations the account submitted in `environment` in the last day. */
export async function delegationsInLastDay(db: Queryable, accountId: string, environment: string): Promise<number> {
  const [{ count }] = (await db.query<{ count: string | number }>(
    `SELECT count(*) AS count FROM governance_delegations
         WHERE account_id = $1 AND environment = $2 AND created_at > now() - interval '1 day'`,
    [accountId, environment],
  )) as [{ count: string | number }];
  return Number(count);
}

/** A delegation of `delegator` at `delegationNonce` that has not failed, if any. */
export async function findLiveDelegation(
  db: Queryable,
  delegator: string,
  delegationNonce: string,
): Promise<{ id: string; account_id: string } | undefined> {
  const [taken] = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM governance_delegations
         WHERE delegator = $1 AND delegation_nonce = $2 AND status <> 'failed'`,
    [delegator, delegationNonce],
  );
  return taken;
}

export async function insertDelegation(
  db: Queryable,
  delegation: {
    id: string;
    accountId: string;
    environment: string;
    delegator: string;
    delegatee: string;
    delegationNonce: string;
    expiry: string;
    signature: { v: number; r: string; s: string };
  },
): Promise<void> {
  await db.query(
    `INSERT INTO governance_delegations
           (id, account_id, environment, delegator, delegatee, delegation_nonce, expiry, signature, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued')`,
    [
      delegation.id,
      delegation.accountId,
      delegation.environment,
      delegation.delegator,
      delegation.delegatee,
      delegation.delegationNonce,
      delegation.expiry,
      delegation.signature,
    ],
  );
}

export async function findDelegation(
  db: Queryable,
  delegationId: string,
  accountId: string,
  environment: string,
): Promise<DelegationRow | undefined> {
  const [row] = await db.query<DelegationRow>(
    `SELECT * FROM governance_delegations WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [delegationId, accountId, environment],
  );
  return row;
}

/** The queued or submitted `action` (queue, execute) of the proposal, if any. */
export async function findPendingProposalAction(
  db: Queryable,
  proposalId: string,
  action: string,
): Promise<{ id: string; account_id: string } | undefined> {
  const [pending] = await db.query<{ id: string; account_id: string }>(
    `SELECT id, account_id FROM governance_proposal_actions
       WHERE proposal_id = $1 AND action = $2 AND status IN ('queued', 'submitted')`,
    [proposalId, action],
  );
  return pending;
}

/** Queues a proposal's queue or execute; a unique index refuses a second pending one. */
export async function insertProposalAction(
  db: Queryable,
  row: { id: string; accountId: string; environment: string; proposalId: string; action: string; calldata: string },
): Promise<void> {
  await db.query(
    `INSERT INTO governance_proposal_actions (id, account_id, environment, proposal_id, action, calldata, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'queued')`,
    [row.id, row.accountId, row.environment, row.proposalId, row.action, row.calldata],
  );
}

export async function findProposalAction(
  db: Queryable,
  actionId: string,
  accountId: string,
  environment: string,
): Promise<ProposalActionRow | undefined> {
  const [row] = await db.query<ProposalActionRow>(
    `SELECT * FROM governance_proposal_actions WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [actionId, accountId, environment],
  );
  return row;
}
