import * as snarkjs from "snarkjs";

export { bindingHash } from "@zsd/sdk";

/** Groth16 verification of a snarkjs-format proof with the circuit's key. */
export function groth16VerifyRaw(verificationKey: unknown, proof: unknown, publicSignals: string[]): Promise<boolean> {
  return snarkjs.groth16.verify(verificationKey, publicSignals, proof as never).catch(() => false);
}
