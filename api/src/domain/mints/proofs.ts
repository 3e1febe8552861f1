// Collateral proofs submitted to the relay: verified off-chain before anything
// is spent, checked against the chain, and held as one claim per nullifier.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { type Address, encodeAbiParameters, keccak256, zeroAddress } from "viem";
import { formatZsd, parseZsd } from "@zsd/sdk/units";
import { type Groth16Proof, bindingHash, publicSignalsFromArray, verifyCollateralProof } from "@zsd/sdk";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import { randomId } from "../../adapters/ids.ts";
import { DomainError, type ErrorKind, domainErrors } from "../errors.ts";

import { type ProofRow, insertProof, proofOf, proofWithHash, rejectProof, verifiedProofOf } from "./store.ts";

export type { ProofRow } from "./store.ts";

/**
 * Whether the minter would still take a proof against `root`, asked of the
 * registry as the minter asks it (isValidRoot at the minter's maxRootAge):
 * "unknown" if the registry never had it, "expired" once it was superseded
 * too long ago. A chain that cannot be read is `unavailable`.
 */
export async function rootState(chain: Chain, root: bigint): Promise<"usable" | "unknown" | "expired"> {
  if (await chain.isValidRoot(root, await chain.maxRootAge())) return "usable";
  return (await chain.rootSupersededAt(root)) === 0n ? "unknown" : "expired";
}

export const ROOT_EXPIRED_REASON =
  "The deposit tree moved on too long ago: make a new proof of the deposit against the current root.";

const reject = (kind: ErrorKind, code: string, title: string, detail: string, extra: Record<string, unknown> = {}) =>
  new DomainError(kind, code, title, detail, extra);

/** A proof as a wallet submits it (the HTTP schema validates the shapes). */
export interface ProofSubmission {
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: "groth16"; curve: "bn128" };
  /** [changeLeaf, root, nullifierHash, collateralFloorZat, bindingHash], decimal. */
  publicSignals: string[];
  /** ZSD, decimal. */
  mintAmount: string;
  recipient: Address;
  relayer?: Address;
  fee?: string;
  owner: Address;
}

export { rejectProof } from "./store.ts";

/** Verified proofs a process remembers (a digest each). */
const VERIFIED_REMEMBERED = 10_000;

/** A proof by its numbers alone (the database may give its JSON back with keys in another order), digested. */
function verifiedKey(proof: Groth16Proof, publicSignals: string[]): string {
  const numbers = [...proof.pi_a, ...proof.pi_b.flat(), ...proof.pi_c, "|", ...publicSignals].join(",");
  return createHash("sha256").update(numbers).digest("base64");
}

export class ProofService {
  readonly #verificationKey: unknown;
  readonly #verified = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly chain: Chain | undefined,
    verificationKeyFile: string,
    /** This relay's terms, when it relays: a proof that pays another relayer, or less, could never mint here. */
    private readonly relay?: { relayer: Address; minimumFee: bigint },
  ) {
    this.#verificationKey = JSON.parse(readFileSync(verificationKeyFile, "utf8"));
  }

  /**
   * Whether a stored proof verifies, as at its submission: the relay checks
   * each again before it joins a batch. A proof this process verified already
   * (the same points and signals) is not verified twice.
   */
  async verifies(proof: unknown, publicSignals: string[]): Promise<boolean> {
    const key = verifiedKey(proof as Groth16Proof, publicSignals);
    if (this.#verified.has(key)) return true;
    // A throw here is no verdict: the proof verified when stored, so the verifier failed, not the proof.
    return this.#verify(proof as Groth16Proof, publicSignals, "throw");
  }

  /** snarkjs's verification under the collateral circuit's key; an accepted proof is remembered. */
  async #verify(
    proof: Groth16Proof,
    publicSignals: string[],
    onError: "invalid" | "throw" = "invalid",
  ): Promise<boolean> {
    // A proof whose points are not on the curve makes snarkjs throw: at submission it is simply invalid.
    const verified = await verifyCollateralProof(
      this.#verificationKey,
      proof,
      publicSignalsFromArray(publicSignals),
    ).catch((error: unknown) => {
      if (onError === "throw") throw error;
      return false;
    });
    if (verified) {
      const key = verifiedKey(proof, publicSignals);
      this.#verified.add(key);
      // Oldest first out: a bound on memory, not on what may be verified.
      if (this.#verified.size > VERIFIED_REMEMBERED) this.#verified.delete(this.#verified.values().next().value!);
    }
    return verified;
  }

  /**
   * Whether a note's nullifier is spent on chain. Wallets ask before proving,
   * so that a spent note is refused in a second rather than after a proof;
   * the hash is what submitting the proof reveals anyway, and names no leaf.
   */
  async nullifier(nullifierHash: bigint) {
    const spent = await this.#requireChain().isSpent(nullifierHash);
    return { object: "nullifier" as const, nullifierHash: nullifierHash.toString(), spent };
  }

  #requireChain(): Chain {
    if (!this.chain) throw domainErrors.unavailable("Minting (no deployment is configured)");
    return this.chain;
  }

  /** Refuses at once what the mint would refuse later: a fee paid to another relayer, or below this relay's. */
  #checkRelayTerms(relayer: Address, fee: bigint): void {
    if (!this.relay) return;
    const expected = { relayer: this.relay.relayer, minimumFee: formatZsd(this.relay.minimumFee) };
    if (fee > 0n && relayer.toLowerCase() !== this.relay.relayer.toLowerCase()) {
      throw new DomainError(
        "unprocessable",
        "relayer_mismatch",
        "Proof made for another relayer",
        `The proof pays its fee to ${relayer}; this relay is ${this.relay.relayer} (see GET /v1/relay).`,
        { expected },
      );
    }
    if (fee < this.relay.minimumFee) {
      throw new DomainError(
        "unprocessable",
        "fee_below_minimum",
        "Fee below this relay's minimum",
        `The proof binds a fee of ${formatZsd(fee)} ZSD; this relay charges at least ${expected.minimumFee} ZSD (see GET /v1/relay).`,
        { expected },
      );
    }
  }

  /**
   * What every spend of a note needs before it is relayed: a proof made for
   * this action (its binding hash), that verifies, against a root the minter
   * still takes, of a note not yet spent.
   */
  async checkSpend(
    chain: Chain,
    input: Pick<ProofSubmission, "proof" | "publicSignals">,
    binding: bigint,
    made: string,
  ) {
    const [, root, nullifierHash, , given] = input.publicSignals.map(BigInt) as [
      bigint,
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    if (given !== binding) {
      throw reject(
        "unprocessable",
        "binding_mismatch",
        "Binding mismatch",
        `The proof was not made for ${made} on this minter.`,
      );
    }
    const verified = await this.#verify(input.proof as Groth16Proof, input.publicSignals);
    if (!verified) {
      throw reject(
        "unprocessable",
        "invalid_proof",
        "Invalid proof",
        "The proof does not verify against the collateral circuit.",
      );
    }
    const state = await rootState(chain, root);
    if (state === "unknown")
      throw reject(
        "unprocessable",
        "unknown_root",
        "Unknown root",
        "The proof's deposit-tree root was never recorded.",
      );
    if (state === "expired") throw reject("unprocessable", "root_expired", "Root expired", ROOT_EXPIRED_REASON);
    if (await chain.isSpent(nullifierHash)) {
      throw reject(
        "conflict",
        "nullifier_spent",
        "Note already spent",
        "This deposit note's nullifier has already been spent.",
      );
    }
  }

  async submit(accountId: string, input: ProofSubmission) {
    const chain = this.#requireChain();
    const [changeLeaf, root, nullifierHash, floor, binding] = input.publicSignals.map(BigInt) as [
      bigint,
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    const mintAmount = parseZsd(input.mintAmount);
    const fee = parseZsd(input.fee ?? "0");
    const relayer: Address = input.relayer ?? zeroAddress;
    if (mintAmount === 0n) throw domainErrors.invalid([{ field: "body.mintAmount", message: "must be above 0" }]);
    if (fee > mintAmount) throw domainErrors.invalid([{ field: "body.fee", message: "cannot exceed mintAmount" }]);
    if (fee > 0n && relayer === zeroAddress) {
      throw domainErrors.invalid([{ field: "body.relayer", message: "a fee needs a relayer" }]);
    }
    this.#checkRelayTerms(relayer, fee);
    // The mint would revert DebtBelowMinimum: say so before the proof is stored and queued. Read after the checks
    // above, which need no chain, so that a node down answers them still.
    const minDebt = await chain.minDebt();
    if (mintAmount < minDebt) {
      const least = formatZsd(minDebt);
      throw domainErrors.invalid([
        {
          field: "body.mintAmount",
          message: `must be at least ${least} ZSD, the least debt a position may owe (PositionManager.minDebt()): prove again with a mintAmount of ${least} or more`,
        },
      ]);
    }

    // The proof binds recipient, relayer, fee, amount and owner through its last signal.
    const expected = bindingHash({
      owner: input.owner,
      chainId: BigInt(chain.deployment.chainId),
      minter: chain.minter,
      recipient: input.recipient,
      relayer,
      fee,
      mintAmount,
    });
    await this.checkSpend(chain, input, expected, "a mint with this recipient, relayer, fee, amount and owner");

    const proofHash = keccak256(
      encodeAbiParameters(
        [{ type: "uint256[8]" }, { type: "uint256[5]" }],
        [
          [
            ...input.proof.pi_a.slice(0, 2),
            ...input.proof.pi_b.slice(0, 2).flat(),
            ...input.proof.pi_c.slice(0, 2),
          ].map(BigInt) as never,
          input.publicSignals.map(BigInt) as never,
        ],
      ),
    );
    const insert = () =>
      insertProof(this.db, [
        randomId("prf"),
        accountId,
        proofHash,
        root.toString(),
        nullifierHash.toString(),
        floor.toString(),
        binding.toString(),
        mintAmount.toString(),
        input.recipient,
        relayer,
        fee.toString(),
        JSON.stringify(input.proof),
        input.owner,
        changeLeaf.toString(),
      ]);
    try {
      return await insert();
    } catch (error) {
      const message = String((error as Error).message);
      if (/proofs_proof_hash_key|proof_hash/.test(message)) {
        const existing = await proofWithHash(this.db, proofHash);
        throw reject(
          "conflict",
          "proof_already_submitted",
          "Proof already submitted",
          "This proof was submitted before.",
          {
            proofId: existing?.account_id === accountId ? existing.id : undefined,
          },
        );
      }
      if (!/proofs_live_nullifier/.test(message)) throw error;
    }
    // A proof waiting for a mint that can no longer happen must not hold the
    // deposit: this newer proof takes its place.
    if (await this.#retireExpiredClaim(chain, nullifierHash)) {
      try {
        return await insert();
      } catch (error) {
        if (!/proofs_live_nullifier/.test(String((error as Error).message))) throw error;
      }
    }
    throw reject(
      "conflict",
      "nullifier_claimed",
      "Deposit already claimed",
      "Another pending proof already claims this deposit.",
    );
  }

  /** Rejects the verified (not yet minted) proof claiming `nullifierHash` if its root has expired. */
  async #retireExpiredClaim(chain: Chain, nullifierHash: bigint): Promise<boolean> {
    const live = await verifiedProofOf(this.db, nullifierHash);
    if (!live || (await rootState(chain, BigInt(live.root))) !== "expired") return false;
    return (await rejectProof(this.db, live.id, "verified", ROOT_EXPIRED_REASON)) > 0;
  }

  async get(accountId: string, proofId: string) {
    const row = await proofOf(this.db, accountId, "id", proofId);
    if (!row) throw domainErrors.notFound(`Proof ${proofId}`);
    return row;
  }
}
