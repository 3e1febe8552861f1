// The rows behind position actions and note withdrawals (position_actions):
// how one is queued for the relay (admitted by compliance in the same
// transaction, a duplicate answered as a conflict), the chain reads and
// simulation every request makes first, and the event an account is told when
// the relay settles one. Shared by the signed actions (position-actions.ts),
// the note spends (note-spends.ts) and the keeper (position-keeper.ts).
import type { Abi, Address, Hex } from "viem";
import { findInsertHint, positionManagerAbi, stableMinterAbi } from "@zsd/sdk";
import { usdValueOfZat } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import type { ComplianceService } from "../compliance/compliance.ts";
import type { NewSubject } from "../compliance/types.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { holdOf } from "../compliance/hold-of.ts";
import { randomId } from "../../adapters/ids.ts";
import { type ActionRow, presentAction } from "./views.ts";
import { actionRow, collidingAction, inFlightOf, insertAction } from "./store.ts";
import type { ProofService } from "../mints/proofs.ts";
import { refusalOf } from "../reverts.ts";
import type { SealedAddresses } from "../redemptions/sealed-addresses.ts";

export interface PositionOptions {
  environment: "sandbox" | "production";
  /** Whether a relay worker sends what is queued here. */
  relaying: boolean;
  /** The relayer's address: simulations run as it. */
  relayer?: Address;
  /** The least ZEC (zatoshi) a payout to a Zcash address may carry (REDEMPTION_MIN_ZAT). */
  minimumZat: bigint;
  compliance?: ComplianceService;
  /** Custody's seal keys for this deployment: a payout's address is opened for its owner. */
  sealed?: SealedAddresses;
}

/** What every position request needs besides the chain: the rows, the proof checks, the deployment's options. */
export interface PositionContext {
  db: Database;
  proofs: ProofService;
  options: PositionOptions;
}

export const conflict = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("conflict", code, title, detail, facts);
export const unprocessable = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("unprocessable", code, title, detail, facts);

/** A view of one of our contracts, typed by the caller; an unreachable node is `unavailable`. */
function readAt<T>(chain: Chain, address: Address, abi: Abi, functionName: string, args: readonly unknown[]) {
  return chain.read(() => chain.client.readContract({ address, abi, functionName, args } as never) as Promise<T>);
}

/** A position's state and the ratio rules: PositionManager's reads. */
export function readPositions<T>(chain: Chain, functionName: string, args: readonly unknown[] = []): Promise<T> {
  return readAt<T>(chain, chain.positions, positionManagerAbi, functionName, args);
}

/**
 * Where a write that leaves the position holding `collateralZat` against `debt` starts its walk into the
 * ratio order. A hint only saves gas (the contract checks it and walks from a stale one), so a node that
 * does not answer here costs the write a longer walk, not the request.
 */
export async function insertHintFor(
  chain: Chain,
  position: { positionId?: bigint; collateralZat: bigint; debt: bigint },
): Promise<bigint> {
  return findInsertHint(chain.client, chain.positions, position).catch(() => 0n);
}

/** Signed calls' nonces and note spends: StableMinter's reads. */
export function readMinter<T>(chain: Chain, functionName: string, args: readonly unknown[] = []): Promise<T> {
  return readAt<T>(chain, chain.minter, stableMinterAbi, functionName, args);
}

/** The signer's actions queued or sent and not yet mined: each takes the next nonce. */
export async function inFlight(db: Queryable, signer: Address): Promise<bigint> {
  return inFlightOf(db, signer);
}

/**
 * The relay's simulation now: a refusal of the contracts is answered before anything is queued. `bounds`
 * maps a refusal's code to the request field whose signed bound it breached, named in the problem as `bound`.
 */
export async function simulate(
  ctx: PositionContext,
  chain: Chain,
  data: Hex,
  code: string,
  bounds: Record<string, string> = {},
) {
  try {
    await chain.client.call({ account: ctx.options.relayer, to: chain.minter, data });
  } catch (error) {
    const refusal = await refusalOf(chain, error);
    if (!refusal) throw domainErrors.unavailable("The chain node");
    const bound = bounds[refusal.code];
    throw unprocessable(code, "The minter would refuse this", refusal.reason, {
      failureCode: refusal.code,
      ...(bound === undefined ? {} : { bound }),
    });
  }
}

/** ZEC's value in ZSD wei at the oracle's price, for the rules (none read without compliance). */
export async function valueOf(ctx: PositionContext, chain: Chain, zat: bigint): Promise<bigint> {
  if (!ctx.options.compliance) return 0n;
  return usdValueOfZat(zat, (await chain.priceState()).price);
}

/**
 * Writes the row; a position action of an account (`screened`) is admitted
 * by compliance in the same transaction (the rules agent, required
 * screening), and answered with any hold that placed.
 */
export async function queueAction(
  ctx: PositionContext,
  accountId: string | null,
  fields: Partial<ActionRow> & Pick<ActionRow, "action" | "calldata">,
  screened?: Omit<NewSubject, "type" | "id">,
) {
  const { db, options } = ctx;
  const id = randomId(fields.action === "withdraw_note" ? "wdr" : "pact");
  const columns = { id, account_id: accountId, environment: options.environment, status: "queued", ...fields };
  const compliance = accountId !== null && screened ? options.compliance : undefined;
  try {
    const row = await db.transaction(async (tx) => {
      const inserted = await insertAction(tx, columns);
      await compliance?.admit(tx, accountId!, { type: "position_action", id, ...screened! }, null);
      return inserted;
    });
    compliance?.queued();
    return withHold(db, row);
  } catch (error) {
    if (!/position_actions_(signed|nullifier|liquidation|redistribution)/.test(String((error as Error).message))) {
      throw error;
    }
    const existing = await collidingAction(db, {
      signer: fields.signer ?? null,
      signedNonce: fields.signed_nonce ?? null,
      nullifierHash: fields.nullifier_hash ?? null,
      positionId: fields.position_id ?? null,
    });
    const own = existing && existing.account_id === accountId;
    const what = fields.action === "withdraw_note" ? "withdrawal" : "position_action";
    throw conflict(
      `${what}_already_submitted`,
      "Already submitted",
      fields.nullifier_hash
        ? "This note is already being spent through the relay."
        : "This signature (its signer and nonce) is already being relayed.",
      own ? { id: existing.id } : {},
    );
  }
}

/** The row as an account reads it: a position action with any compliance hold on it. */
export async function withHold(db: Queryable, row: ActionRow) {
  const view = presentAction(row);
  return view.object === "position_action" ? { ...view, hold: await holdOf(db, "position_action", row.id) } : view;
}

/** Emits an action's event to the account that asked for it (none for the keeper's). */
export async function emitAction(
  tx: Queryable,
  compliance: ComplianceService | undefined,
  row: ActionRow,
  type: string,
) {
  if (!compliance || row.account_id === null) return;
  const fresh = await actionRow(tx, row.id);
  const view = presentAction(fresh!) as Record<string, unknown>;
  delete view.object;
  delete view.createdAt;
  delete view.updatedAt;
  // Webhooks never carry a Zcash address: the account reads it with GET.
  delete view.zcashAddress;
  if (view.destination && "zcashAddress" in (view.destination as object)) view.destination = { zcashAddress: "sealed" };
  await compliance.emitIn(tx, row.account_id, type, view);
}
