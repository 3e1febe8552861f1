// The position_actions table: the statements the queue, compliance and the
// position relay read and write it with.
import type { Queryable } from "../../adapters/db/index.ts";
import { jobRows } from "../../adapters/db/rows.ts";
import { notHeld } from "../compliance/store.ts";
import type { ActionRow } from "./views.ts";

/** A position action's row as the position relay moves it. */
export const positionActionRows = jobRows("position_actions");

/**
 * SQL: the queued action at `id` may go. Not while compliance holds it, nor
 * while it holds an earlier action of the same signer: signed at the next
 * nonce, this one would be refused by the minter until that one is mined.
 */
export const actionFree = (id: string) =>
  `${notHeld("position_action", id)} AND NOT EXISTS (
     SELECT 1 FROM position_actions j JOIN position_actions a
       ON lower(a.signer) = lower(j.signer) AND a.signed_nonce::numeric < j.signed_nonce::numeric
     WHERE j.id = ${id} AND a.status = 'queued' AND NOT ${notHeld("position_action", "a.id")})`;

/** The account's position action `id` (not a note withdrawal), locked; its status, or undefined. */
export async function lockActionOf(
  tx: Queryable,
  accountId: string,
  environment: string,
  id: string,
): Promise<{ status: string } | undefined> {
  const [action] = await tx.query<{ status: string }>(
    `SELECT status FROM position_actions WHERE id = $1 AND account_id = $2 AND environment = $3
       AND action <> 'withdraw_note' FOR UPDATE`,
    [id, accountId, environment],
  );
  return action;
}

/** Fails a queued action compliance refused (never sent); its row, or undefined when it is not queued. */
export async function failRefusedAction(tx: Queryable, id: string, reason: string): Promise<ActionRow | undefined> {
  const [failed] = await tx.query<ActionRow>(
    `UPDATE position_actions SET status = 'failed', failure_code = 'compliance_rejected', failure_reason = $2,
       settled_at = now(), updated_at = now()
     WHERE id = $1 AND status = 'queued' RETURNING *`,
    [id, reason],
  );
  return failed;
}

/** How many position actions signed by `address` (lower case) in the last `seconds`: the rules agent's velocity. */
export async function recentActionsBy(tx: Queryable, address: string, seconds: number): Promise<number> {
  const [recent] = await tx.query<{ n: number | string }>(
    `SELECT count(*) AS n FROM position_actions WHERE lower(signer) = $1 AND created_at > now() - make_interval(secs => $2)`,
    [address, seconds],
  );
  return Number(recent?.n ?? 0);
}

/** The signer's actions queued or sent and not yet mined: each takes the next nonce. */
export async function inFlightOf(db: Queryable, signer: string): Promise<bigint> {
  const [row] = await db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM position_actions
     WHERE lower(signer) = lower($1) AND signed_nonce IS NOT NULL AND status IN ('queued', 'submitted')`,
    [signer],
  );
  return BigInt(row?.n ?? "0");
}

/** Queues an action (its columns as given); unique indexes refuse a duplicate signature, note or position job. */
export async function insertAction(tx: Queryable, columns: Record<string, unknown>): Promise<ActionRow> {
  const keys = Object.keys(columns);
  const [inserted] = await tx.query<ActionRow>(
    `INSERT INTO position_actions (${keys.join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
    keys.map((k) => columns[k]),
  );
  return inserted!;
}

/**
 * The live action a refused insert collided with: the same signature (signer
 * and nonce), the same note, or a keeper's job on the same position.
 */
export async function collidingAction(
  db: Queryable,
  f: { signer: unknown; signedNonce: unknown; nullifierHash: unknown; positionId: unknown },
): Promise<ActionRow | undefined> {
  const [existing] = await db.query<ActionRow>(
    `SELECT * FROM position_actions WHERE status <> 'failed' AND
       ((lower(signer) = lower($1) AND signed_nonce = $2) OR nullifier_hash = $3 OR
        (action IN ('liquidate', 'redistribute') AND position_id = $4 AND status IN ('queued', 'submitted')))
     LIMIT 1`,
    [f.signer, f.signedNonce, f.nullifierHash, f.positionId],
  );
  return existing;
}

/** Action `id` as it stands now. */
export async function actionRow(tx: Queryable, id: string): Promise<ActionRow | undefined> {
  const [fresh] = await tx.query<ActionRow>("SELECT * FROM position_actions WHERE id = $1", [id]);
  return fresh;
}

/** The signer's live (not failed) action signed at `nonce`, if any. */
export async function actionAtNonce(db: Queryable, signer: string, nonce: bigint): Promise<ActionRow | undefined> {
  const [existing] = await db.query<ActionRow>(
    `SELECT * FROM position_actions WHERE lower(signer) = lower($1) AND signed_nonce = $2 AND status <> 'failed'`,
    [signer, nonce.toString()],
  );
  return existing;
}

/** The account's action `id` in `environment`, if any. */
export async function actionOf(
  db: Queryable,
  accountId: string,
  environment: string,
  id: string,
): Promise<ActionRow | undefined> {
  const [row] = await db.query<ActionRow>(
    `SELECT * FROM position_actions WHERE id = $1 AND account_id = $2 AND environment = $3`,
    [id, accountId, environment],
  );
  return row;
}
