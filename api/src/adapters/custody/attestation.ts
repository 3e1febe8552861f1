// The coordinator's side of attestation: ask every attestor to sign a batch, keep the signatures
// that recover to a member of the registry's current set, and hand back the threshold's worth,
// ordered as the registry takes them. An attestor that is down, slow or refuses costs nothing
// while enough others sign; fewer than the threshold and nothing is recorded.
import { type Address, type Hex, recoverTypedDataAddress } from "viem";
import { collateralRegistryAbi, depositBatchMessage, depositBatchTypedData, orderBySigner } from "@zsd/sdk";
import { depositLeaf } from "@zsd/sdk/notes";
import type { Chain } from "../chain.ts";
import { ServiceError } from "../errors.ts";

export interface DepositForAttestation {
  noteCommitment: bigint;
  amountZat: bigint;
  /** The Zcash txid, internal byte order (0x…). */
  zcashTxId: string;
}

/** One attestor's answer, as the coordinator saw it. */
export type AttestorAnswer =
  { url: string; signer: Address; signature: Hex } | { url: string; refused: string; status?: number };

/**
 * Too few attestors signed: nothing was recorded. The answers (attestors' addresses, their
 * refusals) are for the operator's log, not for the client, who learns only to retry.
 */
export class QuorumNotMet extends ServiceError {
  constructor(
    signed: number,
    threshold: bigint,
    readonly answers: AttestorAnswer[],
  ) {
    super(
      "unavailable",
      "attestation_quorum_not_met",
      "Attestors did not agree",
      `${signed} of the ${threshold} attestor signatures the registry asks for were given; the deposits stay unrecorded. Retry shortly.`,
      { retryAfter: 5 },
    );
  }
}

export class AttestorQuorum {
  constructor(
    private readonly chain: Chain,
    /** Each attestor's base address (http://host:port). */
    private readonly urls: readonly string[],
    private readonly timeoutMs = 10_000,
  ) {}

  /** The registry's next batch turn. */
  batchCount(): Promise<bigint> {
    return this.chain.read(() =>
      this.chain.client.readContract({
        address: this.chain.registry,
        abi: collateralRegistryAbi,
        functionName: "depositBatchCount",
      }),
    );
  }

  /**
   * Signatures of at least the registry's threshold of attestors over `deposits` as batch `batch`,
   * ordered by signer. Throws `attestation_quorum_not_met` (unavailable: ask again later) with each
   * attestor's answer when too few signed.
   */
  async sign(
    deposits: readonly DepositForAttestation[],
    batch: bigint,
  ): Promise<{ signatures: Hex[]; answers: AttestorAnswer[] }> {
    const [members, threshold] = await this.chain.read(() =>
      Promise.all([
        this.chain.client.readContract({
          address: this.chain.registry,
          abi: collateralRegistryAbi,
          functionName: "attestors",
        }),
        this.chain.client.readContract({
          address: this.chain.registry,
          abi: collateralRegistryAbi,
          functionName: "attestorThreshold",
        }),
      ]),
    );
    const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.noteCommitment));
    const totalZat = deposits.reduce((sum, d) => sum + d.amountZat, 0n);
    const typed = {
      ...depositBatchTypedData(this.chain.deployment.chainId, this.chain.registry),
      message: depositBatchMessage(leaves, totalZat, batch),
    };
    const body = JSON.stringify({
      batch: batch.toString(),
      deposits: deposits.map((d) => ({
        zcashTxId: d.zcashTxId,
        amountZat: d.amountZat.toString(),
        noteCommitment: `0x${d.noteCommitment.toString(16).padStart(64, "0")}`,
      })),
    });
    const memberSet = new Set(members.map((m) => m.toLowerCase()));
    const answers = await Promise.all(
      this.urls.map(async (url): Promise<AttestorAnswer> => {
        let response: Response;
        try {
          response = await fetch(new URL("/v1/attestations", url), {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(this.timeoutMs),
          });
        } catch (error) {
          return { url, refused: `unreachable: ${(error as Error).message}` };
        }
        const answer = (await response.json().catch(() => ({}))) as {
          signer?: string;
          signature?: string;
          detail?: string;
        };
        if (!response.ok) return { url, refused: answer.detail ?? `HTTP ${response.status}`, status: response.status };
        if (typeof answer.signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(answer.signature)) {
          return { url, refused: "answered no signature" };
        }
        // What counts is who signed, recovered here, not who the attestor says it is.
        const signer = await recoverTypedDataAddress({ ...typed, signature: answer.signature as Hex }).catch(
          () => undefined,
        );
        if (!signer || !memberSet.has(signer.toLowerCase())) {
          return { url, refused: `signed as ${signer ?? "nobody"}, not a member of the registry's attestor set` };
        }
        return { url, signer, signature: answer.signature as Hex };
      }),
    );
    const signed = orderBySigner(
      answers.filter((a): a is Extract<AttestorAnswer, { signature: Hex }> => "signature" in a),
    ).filter((a, i, all) => i === 0 || a.signer !== all[i - 1]!.signer);
    if (BigInt(signed.length) < threshold) throw new QuorumNotMet(signed.length, threshold, answers);
    return { signatures: signed.slice(0, Number(threshold)).map((a) => a.signature), answers };
  }
}
