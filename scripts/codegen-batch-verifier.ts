// Writes contracts/verifiers/Groth16BatchVerifier.sol from the committed
// verification key (circuit-setup writes it too, after a new key).
import { readFileSync, writeFileSync } from "node:fs";
import { batchVerifierSource } from "./lib/batch-verifier.ts";
import { CIRCUIT } from "./lib/paths.ts";

writeFileSync(CIRCUIT.batchVerifier, batchVerifierSource(JSON.parse(readFileSync(CIRCUIT.vkey, "utf8"))));
console.log(`wrote ${CIRCUIT.batchVerifier}`);
