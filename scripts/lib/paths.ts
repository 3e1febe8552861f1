import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const CIRCUIT = {
  source: join(ROOT, "circuits", "collateral.circom"),
  /** Committed artifacts that tests, the SDK and the API need. */
  artifacts: join(ROOT, "circuits", "build"),
  wasm: join(ROOT, "circuits", "build", "collateral.wasm"),
  zkey: join(ROOT, "circuits", "build", "collateral.zkey"),
  vkey: join(ROOT, "circuits", "build", "verification_key.json"),
  manifest: join(ROOT, "circuits", "build", "manifest.json"),
  verifier: join(ROOT, "contracts", "verifiers", "Groth16Verifier.sol"),
  batchVerifier: join(ROOT, "contracts", "verifiers", "Groth16BatchVerifier.sol"),
  /** Scratch space, not committed. */
  scratch: join(ROOT, "build", "circuit"),
  ptauDir: join(ROOT, "build", "ptau"),
};

export const ARTIFACTS_DIR = join(ROOT, "build", "artifacts");
export const DEPLOYMENTS_DIR = join(ROOT, "deployments");
