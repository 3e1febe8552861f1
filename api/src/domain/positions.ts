// Positions: what a mint opened, read live from the minter (redemptions move
// every position's debt and collateral at once, so only the chain knows them
// now), and the actions on them the relay sends for their signers — repay,
// withdraw collateral, close, liquidate — with the note spends that need no
// signature but a proof: top up a position, withdraw a note's ZEC.
import { type Address, type Hex, encodeFunctionData, formatUnits, recoverTypedDataAddress } from "viem";
import {
  type Destination,
  type Groth16Proof,
  bindingHash,
  closeTypedData,
  collateralRegistryAbi,
  liquidateTypedData,
  noteSpend,
  publicSignalsFromArray,
  redemptionsAbi,
  repayTypedData,
  stableMinterAbi,
  stableTokenAbi,
  toSolidityProof,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { SNARK_SCALAR_FIELD } from "@zsd/sdk/notes";
import { sealAddress } from "@zsd/sdk/seal";
import { ZAT_PER_ZEC, formatZec, formatZsd, parseZec, parseZsd, usdValueOfZat } from "@zsd/sdk/units";
import type { Chain } from "../adapters/chain.ts";
import type { Database, Queryable } from "../adapters/db/index.ts";
import type { ComplianceService } from "./compliance.ts";
import type { NewSubject } from "./compliance-types.ts";
import { DomainError, domainErrors } from "./errors.ts";
import { holdOf } from "./holds.ts";
import { randomId } from "./ids.ts";
import { type ActionRow, presentAction } from "./position-views.ts";
import type { ProofService } from "./proofs.ts";
import { type SealedAddresses, refuseRetiredKey, refuseReusedEnvelope } from "./sealed-addresses.ts";
import { refusalOf } from "./reverts.ts";

export const POSITION_STATUS = ["none", "open", "liquidated", "closed"] as const;
/** A deadline an hour on: long enough to sign and send, short enough that a lost signature expires. */
const SUGGESTED_DEADLINE_SECONDS = 3_600n;

/** How many of a signer's used nonces a signature is checked against before it is called invalid. */
const USED_NONCE_LOOKBACK = 8n;

/** Where released collateral goes, as a request names it: exactly one of the two. */
export type DestinationInput = { sealedAddress: Hex } | { noteCommitment: string };

interface Signed {
  deadline: number;
  signature: Hex;
}
export type ActionInput =
  | ({ action: "repay"; amount: string; payer: Address } & Signed)
  | ({ action: "withdraw"; amount: string; destination: DestinationInput } & Signed)
  | ({ action: "close"; destination: DestinationInput } & Signed)
  | ({ action: "liquidate"; liquidator: Address; destination: DestinationInput } & Signed);

export interface SpendInput {
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: "groth16"; curve: "bn128" };
  publicSignals: string[];
}

const conflict = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("conflict", code, title, detail, facts);
const unprocessable = (code: string, title: string, detail: string, facts: Record<string, unknown> = {}) =>
  new DomainError("unprocessable", code, title, detail, facts);

/** A ratio in basis points as a decimal ("1.5" for 15000). */
const ratio = (bps: bigint) => formatUnits(bps, 4);
/** How the rules agent's reasons name the ZEC-moving actions. */
const ACTION_NOUN = { withdraw: "withdrawal", close: "close", liquidate: "liquidation" } as const;

export class PositionService {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    private readonly proofs: ProofService,
    private readonly options: {
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
    },
  ) {}

  #chain(what = "Positions"): Chain {
    if (!this.chain) throw domainErrors.unavailable(`${what} (no deployment is configured)`);
    return this.chain;
  }

  #relayingChain(what: string): Chain {
    const chain = this.#chain(what);
    if (!this.options.relaying || !this.options.sealed) {
      throw domainErrors.unavailable(`${what} (no relayer key is configured)`);
    }
    return chain;
  }

  #minter<T>(chain: Chain, functionName: string, args: readonly unknown[] = []): Promise<T> {
    return chain.read(
      () =>
        chain.client.readContract({
          address: chain.minter,
          abi: stableMinterAbi,
          functionName,
          args,
        } as never) as Promise<T>,
    );
  }

  /** The position now: collateral, debt, ratio and liquidation price at the oracle's price. */
  async get(positionId: string) {
    const chain = this.#chain();
    const id = BigInt(positionId);
    const [position, { price, ageSeconds, maxAgeSeconds }, liquidationBps, minimumBps] = await Promise.all([
      this.#minter<{ owner: Address; status: number; collateralZat: bigint; debt: bigint }>(chain, "getPosition", [id]),
      chain.priceState(),
      this.#minter<bigint>(chain, "liquidationRatioBps"),
      this.#minter<bigint>(chain, "minCollateralRatioBps"),
    ]);
    if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
    const { collateralZat, debt } = position;
    const value = usdValueOfZat(collateralZat, price);
    const ratioBps = debt === 0n ? null : (value * 10_000n) / debt;
    // The price at which the collateral is worth the debt times the liquidation ratio (8 decimals, rounded up).
    const denominator = collateralZat * 10_000n * 10n ** 10n;
    const liquidationPrice =
      debt === 0n || collateralZat === 0n
        ? null
        : formatUnits((debt * liquidationBps * ZAT_PER_ZEC + denominator - 1n) / denominator, 8);
    const status = POSITION_STATUS[position.status] ?? "none";
    return {
      object: "position" as const,
      id: positionId,
      owner: position.owner,
      status,
      collateral: formatZec(collateralZat),
      debt: formatZsd(debt),
      collateralValueUsd: formatZsd(value),
      collateralRatio: ratioBps === null ? null : ratio(ratioBps),
      liquidationPrice,
      liquidatable: status === "open" && ratioBps !== null && ratioBps < liquidationBps,
      minCollateralRatio: ratio(minimumBps),
      liquidationRatio: ratio(liquidationBps),
      price: formatUnits(price, 8),
      priceStale: ageSeconds > maxAgeSeconds,
    };
  }

  /** Where the pool's ZEC is: in positions, in unminted notes, owed to payouts; and the system's ratio. */
  async collateral() {
    const chain = this.chain;
    if (!chain) return null;
    const read = <T>(address: Address, abi: unknown, functionName: string) =>
      chain.read(() => chain.client.readContract({ address, abi, functionName } as never) as Promise<T>);
    const [unminted, backing, free, debt, pending, floorBps, { price }] = await Promise.all([
      read<bigint>(chain.registry, collateralRegistryAbi, "unmintedZat"),
      read<bigint>(chain.minter, stableMinterAbi, "backingCollateralZat"),
      read<bigint>(chain.minter, stableMinterAbi, "freeCollateralZat"),
      read<bigint>(chain.minter, stableMinterAbi, "totalDebt"),
      read<bigint>(chain.redemptions, redemptionsAbi, "pendingZatDue"),
      read<bigint>(chain.minter, stableMinterAbi, "systemFloorRatioBps"),
      chain.priceState(),
    ]);
    const value = usdValueOfZat(backing, price);
    const systemBps = debt === 0n ? null : (value * 10_000n) / debt;
    return {
      inPositionsZec: formatZec(backing),
      claimableZec: formatZec(free),
      unmintedZec: formatZec(unminted),
      pendingPayoutZec: formatZec(pending),
      positionsValueUsd: formatZsd(value),
      systemRatio: systemBps === null ? null : ratio(systemBps),
      systemFloorRatio: ratio(floorBps),
      recoveryMode: systemBps !== null && systemBps < floorBps,
    };
  }

  /** What a signer signs for a position action through the relay. */
  async terms(signer: Address) {
    const chain = this.#chain();
    const [nonce, now] = await Promise.all([this.#minter<bigint>(chain, "nonces", [signer]), chain.now()]);
    const pending = await this.#inFlight(signer);
    const domain = this.#domain(chain);
    const zero = { positionId: 0n, nonce: 0n, deadline: 0n, sealedAddress: "0x" as Hex, noteCommitment: 0n };
    return {
      object: "position_terms" as const,
      signer,
      nonce: (nonce + pending).toString(),
      chainTime: Number(now),
      suggestedDeadline: Number(now + SUGGESTED_DEADLINE_SECONDS),
      domain: { name: "ZSD Minter", version: "1", ...domain },
      types: {
        ...repayTypedData(domain, { ...zero, amount: 0n, payer: signer }).types,
        ...withdrawCollateralTypedData(domain, { ...zero, amountZat: 0n }).types,
        ...closeTypedData(domain, zero).types,
        ...liquidateTypedData(domain, zero).types,
      },
    };
  }

  #domain(chain: Chain) {
    return { chainId: chain.deployment.chainId, verifyingContract: chain.minter };
  }

  /** The signer's actions queued or sent and not yet mined: each takes the next nonce. */
  async #inFlight(signer: Address): Promise<bigint> {
    const [row] = await this.db.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM position_actions
       WHERE lower(signer) = lower($1) AND signed_nonce IS NOT NULL AND status IN ('queued', 'submitted')`,
      [signer],
    );
    return BigInt(row?.n ?? "0");
  }

  /** The destination as the contract takes it, with the address custody opened (for the payout's `owner`). */
  #destination(input: DestinationInput, owner: Address): Destination & { address: string } {
    if ("sealedAddress" in input) {
      const field = "body.destination.sealedAddress";
      return {
        sealedAddress: input.sealedAddress,
        noteCommitment: 0n,
        address: this.options.sealed!.open(input.sealedAddress, owner, field),
      };
    }
    const commitment = BigInt(input.noteCommitment);
    if (commitment === 0n || commitment >= SNARK_SCALAR_FIELD) {
      throw domainErrors.invalid([
        { field: "body.destination.noteCommitment", message: "a field element above 0 and below the field modulus" },
      ]);
    }
    return { sealedAddress: "0x", noteCommitment: commitment, address: "" };
  }

  /** Checks a signed action, simulates it and queues it for the relay. */
  async request(accountId: string, positionId: string, input: ActionInput) {
    const chain = this.#relayingChain("Position actions");
    const id = BigInt(positionId);
    const position = await this.#minter<{ owner: Address; status: number; collateralZat: bigint }>(
      chain,
      "getPosition",
      [id],
    );
    if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
    const signer =
      input.action === "repay" ? input.payer : input.action === "liquidate" ? input.liquidator : position.owner;
    // The payout's owner is the signer (the position's owner, or the liquidator): the address is sealed for it.
    const to = "destination" in input ? this.#destination(input.destination, signer) : undefined;
    if (to?.address) await refuseRetiredKey(chain, to.sealedAddress, "body.destination.sealedAddress");
    let amount: bigint | undefined;
    if (input.action === "repay" || input.action === "withdraw") {
      try {
        amount = input.action === "repay" ? parseZsd(input.amount) : parseZec(input.amount);
      } catch {
        throw domainErrors.invalid([
          { field: "body.amount", message: `a ${input.action === "repay" ? "ZSD" : "ZEC"} amount` },
        ]);
      }
      if (amount === 0n) throw domainErrors.invalid([{ field: "body.amount", message: "must be above 0" }]);
    }
    if (to?.address && input.action === "withdraw" && amount! < this.options.minimumZat) {
      throw unprocessable(
        "payout_too_small",
        "Payout too small",
        `A payout to a Zcash address carries at least ${formatZec(this.options.minimumZat)} ZEC; ask for more or release into a note.`,
        { minimumZec: formatZec(this.options.minimumZat) },
      );
    }
    const [chainNonce, now] = await Promise.all([this.#minter<bigint>(chain, "nonces", [signer]), chain.now()]);
    const deadline = BigInt(input.deadline);
    if (deadline < now) {
      throw unprocessable(
        "expired_signature",
        "Expired signature",
        `The signature's deadline ${deadline} has passed (chain time ${now}).`,
      );
    }
    const next = chainNonce + (await this.#inFlight(signer));
    const domain = this.#domain(chain);
    const dest: Destination = { sealedAddress: to?.sealedAddress ?? "0x", noteCommitment: to?.noteCommitment ?? 0n };
    const typedAt = (nonce: bigint) =>
      input.action === "repay"
        ? repayTypedData(domain, { positionId: id, amount: amount!, payer: signer, nonce, deadline })
        : input.action === "withdraw"
          ? withdrawCollateralTypedData(domain, { positionId: id, amountZat: amount!, ...dest, nonce, deadline })
          : input.action === "close"
            ? closeTypedData(domain, { positionId: id, ...dest, nonce, deadline })
            : liquidateTypedData(domain, { positionId: id, ...dest, nonce, deadline });
    const signedAt = async (nonce: bigint) =>
      (
        await recoverTypedDataAddress({ ...typedAt(nonce), signature: input.signature } as never).catch(() => undefined)
      )?.toLowerCase() === signer.toLowerCase();
    if (!(await signedAt(next))) {
      // The same signature again: at a nonce being relayed, or one the chain has taken.
      for (let n = next - 1n; n >= 0n && n >= chainNonce - USED_NONCE_LOOKBACK; n--) {
        if (!(await signedAt(n))) continue;
        const [existing] = await this.db.query<ActionRow>(
          `SELECT * FROM position_actions WHERE lower(signer) = lower($1) AND signed_nonce = $2 AND status <> 'failed'`,
          [signer, n.toString()],
        );
        throw conflict(
          "position_action_already_submitted",
          "Already submitted",
          n < chainNonce
            ? `This signature's nonce (${n}) was already used on the minter: sign again at ${next}.`
            : `This signature (nonce ${n}) is already being relayed.`,
          existing && existing.account_id === accountId ? { id: existing.id } : {},
        );
      }
      const who = input.action === "repay" ? "payer" : input.action === "liquidate" ? "liquidator" : "position's owner";
      throw unprocessable(
        "position_signature_invalid",
        "Invalid signature",
        `The signature is not the ${who}'s (${signer}) EIP-712 ${typedAt(next).primaryType} of these terms at nonce ${next} ` +
          "(GET /v1/positions/terms gives the domain, types and nonce).",
      );
    }
    const nonce = next;
    if (to?.address) await refuseReusedEnvelope(this.db, to.sealedAddress, "body.destination.sealedAddress");
    const calldata =
      input.action === "repay"
        ? encodeFunctionData({
            abi: stableMinterAbi,
            functionName: "repayWithSig",
            args: [id, amount!, signer, deadline, input.signature],
          })
        : input.action === "withdraw"
          ? encodeFunctionData({
              abi: stableMinterAbi,
              functionName: "withdrawCollateralWithSig",
              args: [id, amount!, dest, deadline, input.signature],
            })
          : input.action === "close"
            ? encodeFunctionData({
                abi: stableMinterAbi,
                functionName: "closeWithSig",
                args: [id, dest, deadline, input.signature],
              })
            : encodeFunctionData({
                abi: stableMinterAbi,
                functionName: "liquidateWithSig",
                args: [id, signer, dest, deadline, input.signature],
              });
    // Only a call at the chain's nonce can be simulated: a later one waits for those before it.
    if (nonce === chainNonce) await this.#simulate(chain, calldata, "position_action_would_revert");
    // What the rules weigh: ZSD repaid, or the value of the ZEC the action takes out (all of it to close).
    const movedZat = input.action === "withdraw" ? amount! : position.collateralZat;
    const screened = {
      amount: input.action === "repay" ? amount! : await this.#valueOf(chain, movedZat),
      address: signer,
      zcashAddress: to?.address || undefined,
      named:
        input.action === "repay"
          ? { action: "repayment", amount: formatZsd(amount!), unit: "ZSD" as const }
          : { action: ACTION_NOUN[input.action], amount: formatZec(movedZat), unit: "ZEC" as const },
    };
    return this.#queue(
      accountId,
      {
        action: input.action,
        position_id: positionId,
        signer,
        signed_nonce: nonce.toString(),
        amount: amount?.toString() ?? null,
        zcash_address: to?.address || null,
        note_commitment: to && !to.address ? dest.noteCommitment.toString() : null,
        calldata,
      },
      screened,
    );
  }

  /**
   * A note's ZEC out to a shielded Zcash address, proven with a proof bound to
   * that address and the payout's owner (who may redirect it if custody cannot pay).
   */
  async withdrawNote(accountId: string, input: SpendInput & { sealedAddress: Hex; owner: Address }) {
    const chain = this.#relayingChain("Withdrawals");
    const { sealedAddress } = input;
    const zcashAddress = this.options.sealed!.open(sealedAddress, input.owner, "body.sealedAddress");
    await refuseRetiredKey(chain, sealedAddress, "body.sealedAddress");
    const signals = publicSignalsFromArray(input.publicSignals);
    if (signals.collateralFloorZat < this.options.minimumZat) {
      throw unprocessable(
        "payout_too_small",
        "Payout too small",
        `A payout to a Zcash address carries at least ${formatZec(this.options.minimumZat)} ZEC.`,
        { minimumZec: formatZec(this.options.minimumZat) },
      );
    }
    const { owner } = input;
    const binding = bindingHash({
      chainId: BigInt(chain.deployment.chainId),
      minter: chain.minter,
      sealedAddress,
      owner,
    });
    // The address stays out of the answer's words: they may reach a log.
    await this.proofs.checkSpend(chain, input, binding, `a withdrawal to this sealed address owned by ${owner}`);
    await refuseReusedEnvelope(this.db, sealedAddress, "body.sealedAddress");
    const calldata = encodeFunctionData({
      abi: stableMinterAbi,
      functionName: "withdrawNote",
      args: [toSolidityProof(input.proof as Groth16Proof), noteSpend(signals), sealedAddress, owner],
    });
    await this.#simulate(chain, calldata, "withdrawal_would_revert");
    return this.#queue(accountId, {
      action: "withdraw_note",
      position_id: null,
      amount: signals.collateralFloorZat.toString(),
      zcash_address: zcashAddress,
      // The payout's owner (no nonce: the proof, not a signature, authorises the spend).
      signer: owner,
      nullifier_hash: signals.nullifierHash.toString(),
      calldata,
    });
  }

  /** A note's ZEC added to an open position, proven with a proof bound to that position. */
  async topUp(accountId: string, positionId: string, input: SpendInput) {
    const chain = this.#relayingChain("Top-ups");
    const id = BigInt(positionId);
    const position = await this.#minter<{ owner: Address; status: number }>(chain, "getPosition", [id]);
    if (position.status === 0) throw domainErrors.notFound(`Position ${positionId}`);
    const signals = publicSignalsFromArray(input.publicSignals);
    const binding = bindingHash({ chainId: BigInt(chain.deployment.chainId), minter: chain.minter, positionId: id });
    await this.proofs.checkSpend(chain, input, binding, `a top-up of position ${positionId}`);
    const calldata = encodeFunctionData({
      abi: stableMinterAbi,
      functionName: "topUp",
      args: [toSolidityProof(input.proof as Groth16Proof), noteSpend(signals), id],
    });
    await this.#simulate(chain, calldata, "position_action_would_revert");
    return this.#queue(
      accountId,
      {
        action: "top_up",
        position_id: positionId,
        amount: signals.collateralFloorZat.toString(),
        nullifier_hash: signals.nullifierHash.toString(),
        calldata,
      },
      // Signed by nobody (the proof authorises it): the rules look at the position's owner.
      {
        amount: await this.#valueOf(chain, signals.collateralFloorZat),
        address: position.owner,
        named: { action: "top-up", amount: formatZec(signals.collateralFloorZat), unit: "ZEC" },
      },
    );
  }

  /** The relay's simulation now: a refusal of the contracts is answered before anything is queued. */
  async #simulate(chain: Chain, data: Hex, code: string) {
    try {
      await chain.client.call({ account: this.options.relayer, to: chain.minter, data });
    } catch (error) {
      const refusal = await refusalOf(chain, error);
      if (!refusal) throw domainErrors.unavailable("The chain node");
      throw unprocessable(code, "The minter would refuse this", refusal.reason, { failureCode: refusal.code });
    }
  }

  /** ZEC's value in ZSD wei at the oracle's price, for the rules (none read without compliance). */
  async #valueOf(chain: Chain, zat: bigint): Promise<bigint> {
    if (!this.options.compliance) return 0n;
    return usdValueOfZat(zat, (await chain.priceState()).price);
  }

  /**
   * Writes the row; a position action of an account (`screened`) is admitted
   * by compliance in the same transaction (the rules agent, required
   * screening), and answered with any hold that placed.
   */
  async #queue(
    accountId: string | null,
    fields: Partial<ActionRow> & Pick<ActionRow, "action" | "calldata">,
    screened?: Omit<NewSubject, "type" | "id">,
  ) {
    const id = randomId(fields.action === "withdraw_note" ? "wdr" : "pact");
    const columns = { id, account_id: accountId, environment: this.options.environment, status: "queued", ...fields };
    const keys = Object.keys(columns);
    const compliance = accountId !== null && screened ? this.options.compliance : undefined;
    try {
      const row = await this.db.transaction(async (tx) => {
        const [inserted] = await tx.query<ActionRow>(
          `INSERT INTO position_actions (${keys.join(", ")}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING *`,
          keys.map((k) => columns[k as keyof typeof columns]),
        );
        await compliance?.admit(tx, accountId!, { type: "position_action", id, ...screened! }, null);
        return inserted!;
      });
      compliance?.queued();
      const view = presentAction(row);
      return view.object === "position_action" ? { ...view, hold: await holdOf(this.db, "position_action", id) } : view;
    } catch (error) {
      if (!/position_actions_(signed|nullifier|liquidation|redistribution)/.test(String((error as Error).message))) {
        throw error;
      }
      const [existing] = await this.db.query<ActionRow>(
        `SELECT * FROM position_actions WHERE status <> 'failed' AND
           ((lower(signer) = lower($1) AND signed_nonce = $2) OR nullifier_hash = $3 OR
            (action IN ('liquidate', 'redistribute') AND position_id = $4 AND status IN ('queued', 'submitted')))
         LIMIT 1`,
        [fields.signer ?? null, fields.signed_nonce ?? null, fields.nullifier_hash ?? null, fields.position_id ?? null],
      );
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

  /** An action or withdrawal this account asked for. */
  async action(accountId: string, id: string, kind: "position_action" | "withdrawal", positionId?: string) {
    const [row] = await this.db.query<ActionRow>(
      `SELECT * FROM position_actions WHERE id = $1 AND account_id = $2 AND environment = $3`,
      [id, accountId, this.options.environment],
    );
    const matches =
      row &&
      (kind === "withdrawal" ? row.action === "withdraw_note" : row.action !== "withdraw_note") &&
      (positionId === undefined || row.position_id === positionId);
    if (!matches) throw domainErrors.notFound(kind === "withdrawal" ? `Withdrawal ${id}` : `Action ${id}`);
    const view = presentAction(row);
    return view.object === "position_action" ? { ...view, hold: await holdOf(this.db, "position_action", id) } : view;
  }

  /**
   * The keeper's liquidation: the relayer repays with its own ZSD and takes
   * the collateral to `zcashAddress`, which it seals for itself like anyone.
   */
  queueKeeperLiquidation(chain: Chain, relayer: Address, positionId: bigint, zcashAddress: string) {
    return this.#queueKeeper(chain, relayer, positionId, zcashAddress, "liquidate");
  }

  /**
   * The keeper's redistribution of a position under 100%: its debt and
   * collateral are spread over the other positions, and the reward is paid to
   * `zcashAddress`. Costs the relayer no ZSD.
   */
  queueKeeperRedistribution(chain: Chain, relayer: Address, positionId: bigint, zcashAddress: string) {
    return this.#queueKeeper(chain, relayer, positionId, zcashAddress, "redistribute");
  }

  async #queueKeeper(
    chain: Chain,
    relayer: Address,
    positionId: bigint,
    zcashAddress: string,
    action: "liquidate" | "redistribute",
  ) {
    // Sealed afresh each time with the current key, for the relayer as the payout's owner: custody pays an envelope once.
    const key = await chain.currentSealKey();
    const context = { chainId: chain.deployment.chainId, redemptions: chain.redemptions, owner: relayer };
    const network = this.options.environment === "production" ? "mainnet" : "testnet";
    const sealedAddress = sealAddress(key, context, zcashAddress, network);
    const calldata = encodeFunctionData({
      abi: stableMinterAbi,
      functionName: action,
      args: [positionId, { sealedAddress, noteCommitment: 0n }],
    });
    try {
      await chain.client.call({ account: relayer, to: chain.minter, data: calldata });
    } catch {
      return undefined;
    }
    return this.#queue(null, {
      action,
      position_id: positionId.toString(),
      signer: relayer,
      zcash_address: zcashAddress,
      calldata,
    }).catch((error: unknown) => {
      if (error instanceof DomainError && error.kind === "conflict") return undefined;
      throw error;
    });
  }

  /** Emits an action's event to the account that asked for it (none for the keeper's). */
  static async emit(tx: Queryable, compliance: ComplianceService | undefined, row: ActionRow, type: string) {
    if (!compliance || row.account_id === null) return;
    const [fresh] = await tx.query<ActionRow>("SELECT * FROM position_actions WHERE id = $1", [row.id]);
    const view = presentAction(fresh!) as Record<string, unknown>;
    delete view.object;
    delete view.createdAt;
    delete view.updatedAt;
    // Webhooks never carry a Zcash address (issue 23): the account reads it with GET.
    delete view.zcashAddress;
    if (view.destination && "zcashAddress" in (view.destination as object))
      view.destination = { zcashAddress: "sealed" };
    await compliance.emitIn(tx, row.account_id, type, view);
  }

  /** The token balance of `holder`, for the keeper. */
  static balanceOf(chain: Chain, token: Address, holder: Address) {
    return chain.read(() =>
      chain.client.readContract({ address: token, abi: stableTokenAbi, functionName: "balanceOf", args: [holder] }),
    );
  }
}
