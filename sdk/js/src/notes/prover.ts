import * as snarkjs from "snarkjs";
import type { Groth16Proof } from "snarkjs";
import { PUBLIC_SIGNALS } from "./constants.ts";
import { type AnyBinding, bindingHash } from "./binding.ts";
import { type Note, assertZat, changeNote, noteCommitment, nullifierHash } from "./note.ts";
import type { MerklePath } from "./tree.ts";

export type { Groth16Proof };

/** The circuit's wasm and proving key: file paths in Node, bytes in a browser. */
export interface ProvingArtifacts {
  wasm: string | Uint8Array;
  zkey: string | Uint8Array;
}

export interface CollateralProofInput {
  note: Note;
  amountZat: bigint;
  path: MerklePath;
  collateralFloorZat: bigint;
  /** The action the proof is for: a mint, a top-up or a withdrawal. */
  binding: AnyBinding;
}

/** Public signals by name, in the order of PUBLIC_SIGNALS. */
export type PublicSignals = Record<(typeof PUBLIC_SIGNALS)[number], bigint>;

export interface CollateralProof {
  proof: Groth16Proof;
  publicSignals: PublicSignals;
}

/** The proof in the argument layout of the Solidity verifier (G2 coordinates swapped). */
export interface SolidityProof {
  a: readonly [bigint, bigint];
  b: readonly [readonly [bigint, bigint], readonly [bigint, bigint]];
  c: readonly [bigint, bigint];
}

export function publicSignalsToArray(signals: PublicSignals): string[] {
  return PUBLIC_SIGNALS.map((name) => signals[name].toString());
}

export function publicSignalsFromArray(values: readonly (string | bigint)[]): PublicSignals {
  if (values.length !== PUBLIC_SIGNALS.length) {
    throw new RangeError(`expected ${PUBLIC_SIGNALS.length} public signals, got ${values.length}`);
  }
  return Object.fromEntries(PUBLIC_SIGNALS.map((name, i) => [name, BigInt(values[i]!)])) as PublicSignals;
}

/** The circuit input (all signals as decimal strings). */
export function circuitInput(input: CollateralProofInput): Record<string, string | string[]> {
  assertZat("amountZat", input.amountZat);
  assertZat("collateralFloorZat", input.collateralFloorZat);
  if (input.collateralFloorZat > input.amountZat) throw new RangeError("collateralFloorZat exceeds the deposit amount");
  return {
    root: input.path.root.toString(),
    nullifierHash: nullifierHash(input.note, input.path.leaf).toString(),
    collateralFloorZat: input.collateralFloorZat.toString(),
    bindingHash: bindingHash(input.binding).toString(),
    changeCommitment: noteCommitment(changeNote(input.note)).toString(),
    amountZat: input.amountZat.toString(),
    secret: input.note.secret.toString(),
    nullifierSecret: input.note.nullifierSecret.toString(),
    pathLength: input.path.pathLength.toString(),
    leafIndex: input.path.leafIndex.toString(),
    siblings: input.path.siblings.map(String),
  };
}

/** Proves that the note's deposit is in the tree and worth at least the floor. */
export async function proveCollateral(
  input: CollateralProofInput,
  artifacts: ProvingArtifacts,
): Promise<CollateralProof> {
  const { proof, publicSignals } = await snarkjs.groth16.fullProve(circuitInput(input), artifacts.wasm, artifacts.zkey);
  return { proof, publicSignals: publicSignalsFromArray(publicSignals) };
}

/** Off-chain Groth16 verification with the circuit's verification key. */
export async function verifyCollateralProof(
  verificationKey: unknown,
  proof: Groth16Proof,
  publicSignals: PublicSignals,
): Promise<boolean> {
  return snarkjs.groth16.verify(verificationKey, publicSignalsToArray(publicSignals), proof);
}

export function toSolidityProof(proof: Groth16Proof): SolidityProof {
  const n = (v: string | undefined) => BigInt(v ?? "0");
  return {
    a: [n(proof.pi_a[0]), n(proof.pi_a[1])],
    b: [
      [n(proof.pi_b[0]?.[1]), n(proof.pi_b[0]?.[0])],
      [n(proof.pi_b[1]?.[1]), n(proof.pi_b[1]?.[0])],
    ],
    c: [n(proof.pi_c[0]), n(proof.pi_c[1])],
  };
}

/** snarkjs keeps worker threads alive; call before a Node process should exit. */
export async function releaseProver(): Promise<void> {
  const curve = (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128;
  await curve?.terminate();
  delete (globalThis as { curve_bn128?: unknown }).curve_bn128;
}
