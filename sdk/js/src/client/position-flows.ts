// A position's whole actions, with no signature or proof in the caller's
// hands. The owner's key comes from the note that opened the position
// (positionOwnerKey), so a wallet that keeps its notes can act on its
// positions; a payer (repay) signs with its own wallet. Notes are spent with a
// proof made on this machine, bound to the one action (top-up of this
// position, or payout to this address). Each flow follows the action until the
// chain has it.
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { type Note, noteCommitment, positionOwner, positionOwnerKey } from "../notes/index.ts";
import {
  type MinterDomain,
  closeTypedData,
  liquidateTypedData,
  repayTypedData,
  withdrawCollateralTypedData,
} from "../positions.ts";
import { formatZec, parseZec, parseZsd } from "../units/index.ts";
import { FlowError } from "./errors.ts";
import { type Flows, type Hold, type ProveStep, type TypedDataSigner, follow } from "./flows.ts";
import type { PositionsResource, RelayResource, WithdrawalsResource } from "./resources.ts";
import type { Answer, Relay } from "./types.ts";

export type PositionAction = Answer<"getPositionAction">;
export type Withdrawal = Answer<"getWithdrawal">;

export type PositionStep =
  | ProveStep
  | { step: "signing"; signer: Address }
  /** hold: compliance keeps the action (not the note withdrawals, which are never held) from the relay. */
  | { step: "following"; id: string; status: string; hold: Hold | null };

/**
 * Where released ZEC goes: a shielded address custody pays (given in clear; the
 * SDK checks it and sends it sealed to custody's key), or a new note (keep it: it mints again).
 */
export type ReleaseTo = { zcashAddress: string } | { note: Note };

interface Following {
  onProgress?: (step: PositionStep) => void;
  /** How long to wait for `confirmed` (default 2 minutes). */
  timeoutMs?: number;
}

export interface RepayParams extends Following {
  positionId: string;
  /** ZSD to burn against the debt. */
  amount: string;
  /** Whose ZSD is burned: any holder's wallet. */
  signer: TypedDataSigner;
}

export interface WithdrawCollateralParams extends Following {
  positionId: string;
  /** The note that opened the position: its owner key signs. */
  note: Note;
  /** ZEC to take out; the position must stay at or above the minimum ratio. */
  amount: string;
  to: ReleaseTo;
}

export interface ClosePositionParams extends Following {
  positionId: string;
  note: Note;
  to: ReleaseTo;
  /** Repays what is still owed first, from this wallet (the owner's fresh address holds no ZSD). */
  payer?: TypedDataSigner;
  /**
   * The signed bounds: the most ZSD burned and the least ZEC released. Absent, the position as read just
   * before signing: a redistribution onto it or a redemption before the relay sends it makes it revert.
   */
  maxDebt?: string;
  minZec?: string;
}

export interface TopUpParams extends Following {
  positionId: string;
  /** The note whose ZEC is added (a deposit, or with `noteAmount` a change or released note). */
  note: Note;
  noteAmount?: string;
  /** ZEC to add; by default all the note holds (the rest stays as its change note). */
  amount?: string;
}

export interface LiquidateParams extends Following {
  positionId: string;
  /** The liquidator: its ZSD repays the debt, and the seized ZEC is its payout. */
  signer: TypedDataSigner;
  to: ReleaseTo;
  /** The most ZSD burned; absent, the debt as read just before signing. */
  maxDebt?: string;
  /** The least ZEC taken; absent, "0" (the value bound guards a price fall). */
  minSeizedZec?: string;
  /** The least ZSD the ZEC taken is worth at the liquidation's price; absent, the debt read (never at a loss). */
  minSeizedValue?: string;
}

export interface WithdrawNoteParams extends Following {
  note: Note;
  noteAmount?: string;
  /** A shielded Zcash address of the environment's network, in clear (sent sealed). */
  zcashAddress: string;
  /** ZEC to pay; by default all the note holds. */
  amount?: string;
}

const addressOf = (signer: TypedDataSigner): Address => {
  const address = signer.address ?? signer.account?.address;
  if (!address) throw new FlowError("The signer has no address.", { code: "signer_without_address" });
  return address;
};

const TYPED_DATA = {
  Repay: repayTypedData,
  WithdrawCollateral: withdrawCollateralTypedData,
  Close: closeTypedData,
  Liquidate: liquidateTypedData,
} as const;

export class PositionFlows {
  constructor(
    private readonly flows: Flows,
    private readonly r: { relay: RelayResource; positions: PositionsResource; withdrawals: WithdrawalsResource },
  ) {}

  /** Burns the signer's ZSD against the position's debt. */
  async repay(params: RepayParams): Promise<PositionAction> {
    const payer = addressOf(params.signer);
    const maxAmount = parseZsd(params.amount);
    const signed = await this.#sign(
      params.signer,
      "Repay",
      { positionId: BigInt(params.positionId), maxAmount, payer },
      params,
    );
    const queued = await this.r.positions.repay(params.positionId, { amount: params.amount, payer, ...signed });
    return this.waitForAction(params.positionId, queued.actionId, params);
  }

  /** Takes ZEC out of the position, signed with the owner key of the note that opened it. */
  async withdrawCollateral(params: WithdrawCollateralParams): Promise<PositionAction> {
    const owner = ownerOf(params.note);
    const queued = await this.#released(params.to, owner.address, async (destination, typed) => {
      const signed = await this.#sign(
        owner,
        "WithdrawCollateral",
        { positionId: BigInt(params.positionId), amountZat: parseZec(params.amount), ...typed },
        params,
      );
      return this.r.positions.withdraw(params.positionId, { amount: params.amount, destination, ...signed });
    });
    return this.waitForAction(params.positionId, queued.actionId, params);
  }

  /** Repays what is owed (from `payer`, when given) and releases all the collateral to `to`. */
  async close(params: ClosePositionParams): Promise<PositionAction> {
    const position = await this.r.positions.get(params.positionId);
    if (params.payer && position.status === "open" && parseZsd(position.debt) > 0n) {
      await this.repay({ ...params, amount: position.debt, signer: params.payer });
    }
    const owner = ownerOf(params.note);
    const seen = await this.r.positions.get(params.positionId);
    const maxDebt = params.maxDebt ?? seen.debt;
    const minZec = params.minZec ?? seen.collateral;
    const bounds = { maxDebt: parseZsd(maxDebt), minZatOut: parseZec(minZec) };
    const queued = await this.#released(params.to, owner.address, async (destination, typed) => {
      const signed = await this.#sign(
        owner,
        "Close",
        { positionId: BigInt(params.positionId), ...bounds, ...typed },
        params,
      );
      return this.r.positions.close(params.positionId, { maxDebt, minZec, destination, ...signed });
    });
    return this.waitForAction(params.positionId, queued.actionId, params);
  }

  /** Repays an undercollateralised position's debt with the signer's ZSD; the seized ZEC goes to `to`. */
  async liquidate(params: LiquidateParams): Promise<PositionAction> {
    const liquidator = addressOf(params.signer);
    const seen = params.maxDebt && params.minSeizedValue ? undefined : await this.r.positions.get(params.positionId);
    const maxDebt = params.maxDebt ?? seen!.debt;
    const minSeizedZec = params.minSeizedZec ?? "0";
    const minSeizedValue = params.minSeizedValue ?? seen!.debt;
    const bounds = {
      maxDebt: parseZsd(maxDebt),
      minSeizedZat: parseZec(minSeizedZec),
      minSeizedValue: parseZsd(minSeizedValue),
    };
    const queued = await this.#released(params.to, liquidator, async (destination, typed) => {
      const signed = await this.#sign(
        params.signer,
        "Liquidate",
        { positionId: BigInt(params.positionId), ...bounds, ...typed },
        params,
      );
      return this.r.positions.liquidate(params.positionId, {
        liquidator,
        maxDebt,
        minSeizedZec,
        minSeizedValue,
        destination,
        ...signed,
      });
    });
    return this.waitForAction(params.positionId, queued.actionId, params);
  }

  /**
   * Sends a release to `to`: an address checked and sealed for the payout's
   * owner (`beneficiary`: the position's owner, or the liquidator), or a note's
   * commitment. `send` signs and posts it; it runs again with a fresh seal key
   * when the API cannot open the seal (the key was rotated).
   */
  #released<T>(
    to: ReleaseTo,
    beneficiary: Address,
    send: (
      destination: { sealedAddress: Hex } | { noteCommitment: string },
      typed: { sealedAddress: Hex; noteCommitment: bigint },
    ) => Promise<T>,
  ): Promise<T> {
    if ("note" in to) {
      const commitment = noteCommitment(to.note);
      return send({ noteCommitment: commitment.toString() }, { sealedAddress: "0x", noteCommitment: commitment });
    }
    return this.flows.sealer.retryOnRotation(async (fresh) => {
      const sealedAddress = await this.flows.sealer.seal(to.zcashAddress, beneficiary, fresh);
      return send({ sealedAddress }, { sealedAddress, noteCommitment: 0n });
    });
  }

  /** Adds a note's ZEC to the position, with a proof bound to this position only. */
  async topUp(params: TopUpParams): Promise<PositionAction> {
    const relay = await this.#relay();
    const proved = await this.flows.proveNote(relay, {
      note: params.note,
      noteAmount: params.noteAmount,
      floorZat: this.#part(params.amount),
      binding: { ...bindingBase(relay), positionId: BigInt(params.positionId) },
      onProgress: params.onProgress,
    });
    const queued = await this.r.positions.topUp(params.positionId, {
      proof: proved.proof,
      publicSignals: proved.publicSignals,
    });
    return this.waitForAction(params.positionId, queued.actionId, params);
  }

  /**
   * Pays a note's ZEC to a shielded address (a deposit that will never mint),
   * with a proof bound to it and to the payout's owner, positionOwner(note):
   * the key derived from the note, which can redirect the payout if custody
   * cannot make it.
   */
  async withdrawNote(params: WithdrawNoteParams): Promise<Withdrawal> {
    const owner = positionOwner(params.note);
    // The proof binds the seal: after a rotation the note is proven again for a new one.
    const queued = await this.flows.sealer.retryOnRotation(async (fresh) => {
      const sealedAddress = await this.flows.sealer.seal(params.zcashAddress, owner, fresh);
      const relay = await this.#relay();
      const proved = await this.flows.proveNote(relay, {
        note: params.note,
        noteAmount: params.noteAmount,
        floorZat: this.#part(params.amount),
        binding: { ...bindingBase(relay), sealedAddress, owner },
        onProgress: params.onProgress,
      });
      return this.r.withdrawals.create({
        proof: proved.proof,
        publicSignals: proved.publicSignals,
        sealedAddress,
        owner,
      });
    });
    return follow({
      what: `Withdrawal ${queued.withdrawalId}`,
      read: () => this.r.withdrawals.get(queued.withdrawalId),
      until: "confirmed",
      failedCode: "withdrawal_failed",
      how: "withdrawals.get()",
      ...following(queued.withdrawalId, params),
    });
  }

  /** Follows a position action until it is confirmed (a failed one throws FlowError with its failureCode). */
  waitForAction(positionId: string, actionId: string, params: Following = {}): Promise<PositionAction> {
    return follow({
      what: `Action ${actionId}`,
      read: () => this.r.positions.action(positionId, actionId),
      until: "confirmed",
      failedCode: "action_failed",
      how: "positions.action()",
      ...following(actionId, params),
    });
  }

  /** Signs `message` as `primaryType` with the minter's domain and types, at the signer's next nonce. */
  async #sign(
    signer: TypedDataSigner,
    primaryType: "Repay" | "WithdrawCollateral" | "Close" | "Liquidate",
    message: Record<string, unknown>,
    params: Following,
  ): Promise<{ deadline: number; signature: Hex }> {
    const address = addressOf(signer);
    params.onProgress?.({ step: "signing", signer: address });
    const terms = await this.r.positions.terms(address);
    // The SDK's own types, not the API's: what the wallet signs is what this code means to send.
    const typed = TYPED_DATA[primaryType](
      terms.domain as MinterDomain,
      {
        ...message,
        nonce: BigInt(terms.nonce),
        deadline: BigInt(terms.suggestedDeadline),
      } as never,
    );
    const signature = await signer.signTypedData({
      ...typed,
      ...(signer.account ? { account: signer.account } : {}),
    } as never);
    return { deadline: terms.suggestedDeadline, signature };
  }

  async #relay(): Promise<Relay> {
    const relay = await this.r.relay.get();
    if (!relay.relayer || relay.chainId === null || !relay.contracts?.StableMinter?.address) {
      throw new FlowError("This API does not relay positions (no deployment or relayer).", {
        code: "relay_unavailable",
      });
    }
    return relay;
  }

  /** `amount` ZEC of the note, or all of it. */
  #part(amount: string | undefined) {
    return (amountZat: bigint) => {
      if (amount === undefined) return amountZat;
      const wanted = parseZec(amount);
      if (wanted === 0n || wanted > amountZat) {
        throw new FlowError(`The note holds ${formatZec(amountZat)} ZEC; ${amount} ZEC cannot be spent from it.`, {
          code: "note_insufficient",
        });
      }
      return wanted;
    };
  }
}

const following = (id: string, params: Following) => ({
  timeoutMs: params.timeoutMs ?? 120_000,
  onStatus: (status: string, hold: Hold | null) => params.onProgress?.({ step: "following", id, status, hold }),
});

const ownerOf = (note: Note) => privateKeyToAccount(positionOwnerKey(note));

const bindingBase = (relay: Relay) => ({
  chainId: BigInt(relay.chainId!),
  minter: relay.contracts!.StableMinter!.address as Address,
});
