import { type Address, formatUnits, zeroAddress } from "viem";
import { encodeMintCall, toSolidityProof } from "@zsd/sdk";
import { formatZsd, parseZsd, usdValueOfZat } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { randomId } from "../../adapters/ids.ts";
import { DomainError, domainErrors } from "../errors.ts";
import { freshPrice } from "../price/price.ts";
import { refusalOf } from "../reverts.ts";
import type { ComplianceService } from "../compliance/compliance.ts";
import { type HoldView, holdOf } from "../compliance/hold-of.ts";
import { ROOT_EXPIRED_REASON, rejectProof, rootState } from "./proofs.ts";
import { type MintRow, claimProofForMint, mintOf, proofOf } from "./store.ts";

/** A mint as the service reads it: its row, the hold on it, and the chain's head once it is mined. */
export interface MintState {
  row: MintRow;
  hold: HoldView | null;
  /** The chain's head block when the mint has a block (for its confirmations); null before. */
  head: number | null;
}

interface ProofRow {
  id: string;
  status: string;
  root: string;
  mint_id: string | null;
  mint_amount: string;
  recipient: string;
  relayer: string;
  fee: string;
  collateral_floor_zat: string;
  nullifier_hash: string;
  change_leaf: string;
  owner: string | null;
  /** The Groth16 proof as snarkjs wrote it. */
  proof: unknown;
}

/** The proof's columns a mint call needs. */
export interface MintCallRow {
  proof: unknown;
  root: string;
  nullifier_hash: string;
  collateral_floor_zat: string;
  change_leaf: string;
  mint_amount: string;
  recipient: string;
  relayer: string;
  fee: string;
  owner: string | null;
  /** Where the new position's walk into the ratio order starts (not stored: the relay finds it as it sends). */
  hint?: bigint;
}

/** Call data of `StableMinter.mint` for a stored proof: the request is exactly what the proof binds. */
export function mintCallOf(row: MintCallRow) {
  return encodeMintCall(toSolidityProof(row.proof as never), {
    root: BigInt(row.root),
    nullifierHash: BigInt(row.nullifier_hash),
    collateralFloorZat: BigInt(row.collateral_floor_zat),
    changeLeaf: BigInt(row.change_leaf),
    mintAmount: BigInt(row.mint_amount),
    recipient: row.recipient as Address,
    relayer: (row.relayer || zeroAddress) as Address,
    fee: BigInt(row.fee),
    owner: (row.owner ?? row.recipient) as Address,
    hint: row.hint ?? 0n,
  });
}

const mismatch = (detail: string) =>
  new DomainError("unprocessable", "proof_mismatch", "Request does not match the proof", detail);

export class MintService {
  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    private readonly relayer: string | undefined,
    /** Events, the rules agent and screening, in the transaction that queues a mint. */
    private readonly compliance?: ComplianceService,
  ) {}

  #requireRelay(): Chain {
    if (!this.chain || !this.relayer)
      throw domainErrors.unavailable("Minting (no deployment or relayer key is configured)");
    return this.chain;
  }

  async #proof(accountId: string, where: "id" | "proof_hash", value: string): Promise<ProofRow> {
    const proof = await proofOf<ProofRow>(this.db, accountId, where, value);
    if (!proof) throw domainErrors.notFound(`Proof ${value}`);
    return proof;
  }

  /** Queues a mint of a verified proof; the amount (and recipient) must be what the proof binds. */
  async queue(accountId: string, ref: { proofId: string } | { proofHash: string }, amount: string, recipient?: string) {
    const chain = this.#requireRelay();
    const proof =
      "proofId" in ref
        ? await this.#proof(accountId, "id", ref.proofId)
        : await this.#proof(accountId, "proof_hash", ref.proofHash);
    const wei = parseZsd(amount);
    if (wei.toString() !== proof.mint_amount) {
      throw mismatch(`The proof binds ${formatZsd(BigInt(proof.mint_amount))} ZSD, not ${formatZsd(wei)}.`);
    }
    if (recipient && recipient.toLowerCase() !== proof.recipient.toLowerCase()) {
      throw mismatch(`The proof binds recipient ${proof.recipient}, not ${recipient}.`);
    }
    if (
      BigInt(proof.fee) > 0n &&
      proof.relayer.toLowerCase() !== this.relayer!.toLowerCase() &&
      proof.relayer !== zeroAddress
    ) {
      throw mismatch(`The proof pays its fee to ${proof.relayer}; this relay is ${this.relayer}.`);
    }
    if (proof.status !== "verified") {
      throw new DomainError(
        "conflict",
        "proof_already_used",
        "Proof already used",
        `Proof ${proof.id} is ${proof.status}.`,
        {
          mintId: proof.mint_id ?? undefined,
        },
      );
    }

    // Every chain read comes before anything is written: a node that cannot
    // answer is "unavailable", which leaves the proof as it was and no mint queued.
    const [price, root, refusal] = await Promise.all([
      freshPrice(chain, "mints"),
      rootState(chain, BigInt(proof.root)),
      this.#simulate(chain, proof),
    ]);
    if (root === "expired") {
      // It can never mint now; rejecting it frees the deposit for a new proof.
      await rejectProof(this.db, proof.id, "verified", ROOT_EXPIRED_REASON);
      throw new DomainError("unprocessable", "root_expired", "Root expired", ROOT_EXPIRED_REASON, {
        proofId: proof.id,
      });
    }

    // A spent nullifier is left to the relay: it tells this proof's own mint (made elsewhere) from another's.
    if (refusal && refusal.code !== "nullifier_already_spent") {
      throw new DomainError("unprocessable", "mint_would_revert", "The minter would refuse this mint", refusal.reason, {
        proofId: proof.id,
        failureCode: refusal.code,
      });
    }

    const id = randomId("mint");
    await this.db.transaction(async (tx) => {
      const claimed = await claimProofForMint(tx, {
        id,
        accountId,
        proofId: proof.id,
        amount: proof.mint_amount,
        recipient: proof.recipient,
      });
      if (!claimed)
        throw new DomainError(
          "conflict",
          "proof_already_used",
          "Proof already used",
          `Proof ${proof.id} was just used by another mint.`,
        );
      await this.compliance?.admit(
        tx,
        accountId,
        { type: "mint", id, amount: wei, address: proof.recipient },
        { mintId: id, amount: formatZsd(wei), recipient: proof.recipient },
      );
    });
    this.compliance?.queued();
    const value = usdValueOfZat(BigInt(proof.collateral_floor_zat), price);
    return {
      mintId: id,
      expectedCollateralRatio: formatUnits((value * 10_000n) / wei, 4),
      hold: await holdOf(this.db, "mint", id),
    };
  }

  /**
   * The mint as the relay would send it, simulated now: a refusal the
   * contracts would make (collateral worth too little at today's price, a
   * pause) is answered before anything is queued. A node that cannot answer
   * is the chain being unavailable.
   */
  async #simulate(chain: Chain, proof: ProofRow) {
    const data = mintCallOf(proof);
    try {
      await chain.client.call({ account: this.relayer as Address, to: chain.minter, data });
      return undefined;
    } catch (error) {
      const refusal = await refusalOf(chain, error);
      if (!refusal) throw domainErrors.unavailable("The chain node");
      return refusal;
    }
  }

  /** The mint as its row stands, with its hold and, once mined, the chain's head (for its confirmations). */
  async get(accountId: string, mintId: string): Promise<MintState> {
    const row = await mintOf(this.db, accountId, mintId);
    if (!row) throw domainErrors.notFound(`Mint ${mintId}`);
    const block = row.block_number === null ? null : Number(row.block_number);
    const head =
      block === null || !this.chain
        ? null
        : Number(await this.chain.read(() => this.chain!.client.getBlockNumber({ cacheTime: 0 })));
    return { row, hold: await holdOf(this.db, "mint", row.id), head };
  }

  /** Waits for a mint to be confirmed or failed, up to `timeoutMs`. */
  async wait(accountId: string, mintId: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mint = await this.get(accountId, mintId);
      if (mint.row.status === "confirmed" || mint.row.status === "failed" || Date.now() > deadline) return mint;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
