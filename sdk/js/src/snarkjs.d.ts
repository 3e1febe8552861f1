// snarkjs ships no types; these cover the calls the SDK makes.
declare module "snarkjs" {
  export interface Groth16Proof {
    pi_a: string[];
    pi_b: string[][];
    pi_c: string[];
    protocol: string;
    curve: string;
  }
  type Artifact = string | Uint8Array | { type: "mem"; data: Uint8Array };
  export const groth16: {
    fullProve(
      input: Record<string, unknown>,
      wasm: Artifact,
      zkey: Artifact,
      logger?: unknown,
      wtnsCalcOptions?: unknown,
      proverOptions?: unknown,
    ): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    verify(vkey: unknown, publicSignals: readonly string[], proof: Groth16Proof, logger?: unknown): Promise<boolean>;
  };
  export const wtns: {
    calculate(input: Record<string, unknown>, wasm: Artifact, wtnsFile: Artifact, options?: unknown): Promise<void>;
  };
  export const zKey: {
    exportSolidityVerifier(zkey: string, templates: Record<string, string>, logger?: unknown): Promise<string>;
    exportVerificationKey(zkey: string, logger?: unknown): Promise<unknown>;
  };
}
