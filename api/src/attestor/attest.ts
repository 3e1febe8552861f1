// An attestor's one judgement: did these deposits reach custody, as claimed, on the Zcash node
// this attestor runs itself? It signs a batch only when every deposit in it is one its own node
// shows (amount, note commitment in the memo, enough confirmations), and only for the registry's
// next batch, so that a coordinator can neither invent a deposit nor bank a signature for later.
import type { Address, Hex, LocalAccount } from "viem";
import { depositBatchMessage, depositBatchTypedData } from "@zsd/sdk";
import { depositLeaf } from "@zsd/sdk/notes";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";
import { type ReceivedNote, type ZcashdClient, parseDepositMemo } from "../adapters/custody/zcashd.ts";

/** A deposit the coordinator says custody received. */
export interface DepositClaim {
  /** The Zcash txid in its internal byte order (as the ledger and the chain keep it). */
  zcashTxId: Hex;
  amountZat: bigint;
  noteCommitment: bigint;
}

export interface AttestationRequest {
  /** The registry's batch count the batch is meant to be recorded at. */
  batch: bigint;
  deposits: DepositClaim[];
}

export interface Attestation {
  signer: Address;
  signature: Hex;
  batch: bigint;
}

/** Why an attestor signs nothing: each says what the coordinator can do. */
export class AttestationRefused extends Error {
  override name = "AttestationRefused";
  constructor(
    readonly reason: "wrong_turn" | "not_seen" | "repeated",
    message: string,
    /** For not_seen and repeated: the indexes of the deposits in question. */
    readonly deposits: number[] = [],
  ) {
    super(message);
  }
}

export interface AttestorOptions {
  account: LocalAccount;
  /** This attestor's own node, which holds custody's viewing key. */
  zcashd: ZcashdClient;
  custodyAddress: string;
  minConfirmations: number;
  chainId: number;
  registry: Address;
  /** The registry's depositBatchCount(), read from this attestor's own chain node. */
  batchCount: () => Promise<bigint>;
}

/** At most this many deposits in one request: a batch is at most 16 leaves (the API's DEPOSIT_BATCH_MAX). */
export const MAX_DEPOSITS_PER_BATCH = 64;

export class DepositAttestor {
  constructor(private readonly options: AttestorOptions) {}

  get signer(): Address {
    return this.options.account.address;
  }

  async attest(request: AttestationRequest): Promise<Attestation> {
    const { deposits } = request;
    const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.noteCommitment));
    const repeated = leaves.flatMap((leaf, i) => (leaves.indexOf(leaf) !== i ? [i] : []));
    if (repeated.length > 0) {
      throw new AttestationRefused("repeated", "the batch names the same deposit twice", repeated);
    }
    const turn = await this.options.batchCount();
    if (request.batch !== turn) {
      throw new AttestationRefused(
        "wrong_turn",
        `the registry's next deposit batch is ${turn}, not ${request.batch}: ask again for batch ${turn}`,
      );
    }
    const notes = await this.options.zcashd.call<ReceivedNote[]>("z_listreceivedbyaddress", [
      this.options.custodyAddress,
      this.options.minConfirmations,
    ]);
    const seen = new Set<string>();
    for (const note of notes) {
      if (note.change || note.confirmations < this.options.minConfirmations) continue;
      const commitment = parseDepositMemo(note.memo);
      if (commitment === undefined || !/^[0-9a-fA-F]{64}$/.test(note.txid)) continue;
      seen.add(key(zcashTxIdFromDisplay(note.txid), BigInt(note.amountZat), commitment));
    }
    const unseen = deposits.flatMap((d, i) => (seen.has(key(d.zcashTxId, d.amountZat, d.noteCommitment)) ? [] : [i]));
    if (unseen.length > 0) {
      throw new AttestationRefused(
        "not_seen",
        `this attestor's node shows no confirmed deposit (${this.options.minConfirmations}+ confirmations) ` +
          `matching deposit${unseen.length > 1 ? "s" : ""} ${unseen.join(", ")}: amount, txid and memo must match`,
        unseen,
      );
    }
    const totalZat = deposits.reduce((sum, d) => sum + d.amountZat, 0n);
    const signature = await this.options.account.signTypedData({
      ...depositBatchTypedData(this.options.chainId, this.options.registry),
      message: depositBatchMessage(leaves, totalZat, turn),
    });
    return { signer: this.signer, signature, batch: turn };
  }
}

function key(zcashTxId: string, amountZat: bigint, commitment: bigint): string {
  return `${zcashTxId.toLowerCase()}:${amountZat}:${commitment}`;
}
