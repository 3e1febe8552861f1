import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compileCircuit,
  readManifest,
  sha256File,
  sourcesHash,
  verificationKey,
  verifierSource,
} from "../../scripts/lib/circuit.ts";
import { CIRCUIT } from "../../scripts/lib/paths.ts";
import {
  type CollateralProofInput,
  DepositTree,
  MAX_DEPTH,
  PUBLIC_SIGNALS,
  SNARK_SCALAR_FIELD,
  circuitInput,
  createNote,
  depositLeaf,
  noteCommitment,
  proveCollateral,
  publicSignalsFromArray,
  releaseProver,
  verifyCollateralProof,
} from "@zsd/sdk/notes";
import { PROVING_ARTIFACTS, VERIFICATION_KEY, ZSD } from "../helpers/fixtures.ts";

const binding = {
  chainId: 31337n,
  minter: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707",
  recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  relayer: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  fee: ZSD,
  mintAmount: 100n * ZSD,
  owner: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
} as const;

/** A valid input: the note's deposit sits among others in a tree of 11 leaves. */
function validInput(amountZat = 500_000_000n, floor = 400_000_000n): CollateralProofInput {
  const note = createNote();
  const leaf = depositLeaf(amountZat, noteCommitment(note));
  const others = Array.from({ length: 10 }, (_, i) => depositLeaf(BigInt(i + 1) * 1000n, noteCommitment(createNote())));
  const tree = new DepositTree([...others.slice(0, 6), leaf, ...others.slice(6)]);
  return { note, amountZat, path: tree.path({ leaf }), collateralFloorZat: floor, binding };
}

/** Computes the witness; rejects when any constraint of the circuit fails. */
async function witness(input: Record<string, unknown>): Promise<void> {
  await snarkjs.wtns.calculate(input, PROVING_ARTIFACTS.wasm, { type: "mem" } as never);
}

describe("collateral circuit", () => {
  afterAll(releaseProver);

  it("accepts a valid witness, and the proof verifies with the committed key", async () => {
    const input = validInput();
    await witness(circuitInput(input));
    const { proof, publicSignals } = await proveCollateral(input, PROVING_ARTIFACTS);
    expect(await verifyCollateralProof(VERIFICATION_KEY, proof, publicSignals)).toBe(true);
    expect(publicSignals.collateralFloorZat).toBe(400_000_000n);
    expect(publicSignals.root).toBe(input.path.root);
  });

  it("accepts the floor equal to the amount and amounts at the 64-bit limit", async () => {
    await witness(circuitInput(validInput(123n, 123n)));
    await witness(circuitInput(validInput(2n ** 64n - 1n, 2n ** 64n - 1n)));
  });

  describe("rejects", () => {
    it("a wrong sibling in the path", async () => {
      const input = circuitInput(validInput()) as Record<string, string[]>;
      input.siblings![1] = (BigInt(input.siblings![1]!) + 1n).toString();
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("a wrong leaf index", async () => {
      const input = circuitInput(validInput());
      input.leafIndex = (BigInt(input.leafIndex as string) ^ 1n).toString();
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("a path longer than MAX_DEPTH", async () => {
      const input = circuitInput(validInput());
      input.pathLength = String(MAX_DEPTH + 1);
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("an amount below the floor", async () => {
      const input = circuitInput(validInput(500n, 500n));
      input.collateralFloorZat = "501";
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("an amount above 64 bits, even when the tree holds that leaf", async () => {
      const note = createNote();
      const amountZat = 2n ** 64n;
      // Built by hand: depositLeaf refuses amounts the circuit cannot range-check.
      const { poseidon2 } = await import("poseidon-lite");
      const leaf = poseidon2([amountZat, noteCommitment(note)]);
      const tree = new DepositTree([leaf, 1n]);
      const path = tree.path({ leaf });
      const input = circuitInput({ note, amountZat: 1n, path, collateralFloorZat: 1n, binding });
      input.amountZat = amountZat.toString();
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("a floor above 64 bits or wrapped around the field", async () => {
      for (const floor of [2n ** 64n, SNARK_SCALAR_FIELD - 1n]) {
        const input = circuitInput(validInput(1000n, 1n));
        input.collateralFloorZat = floor.toString();
        await expect(witness(input)).rejects.toThrow(/Assert Failed/);
      }
    });

    it("a nullifier hash that is not the note's", async () => {
      const input = circuitInput(validInput());
      input.nullifierHash = (BigInt(input.nullifierHash as string) + 1n).toString();
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("someone else's note secret", async () => {
      const valid = validInput();
      const input = circuitInput(valid);
      input.secret = createNote().secret.toString();
      await expect(witness(input)).rejects.toThrow(/Assert Failed/);
    });

    it("every tampered public signal at verification", async () => {
      const { proof, publicSignals } = await proveCollateral(validInput(), PROVING_ARTIFACTS);
      for (const name of PUBLIC_SIGNALS) {
        const tampered = { ...publicSignals, [name]: publicSignals[name] + 1n };
        expect(await verifyCollateralProof(VERIFICATION_KEY, proof, tampered), name).toBe(false);
      }
      expect(() => publicSignalsFromArray(["1", "2", "3"])).toThrow(/expected 5/);
    });
  });

  describe("committed artifacts", () => {
    let compiled: ReturnType<typeof compileCircuit>;
    const manifest = readManifest();
    beforeAll(() => {
      compiled = compileCircuit();
    });

    it("were made from the current circuit sources", () => {
      expect(sourcesHash(), "circuit sources changed: run npm run circuit:setup").toBe(manifest.sourcesSha256);
      expect(sha256File(compiled.r1cs), "r1cs differs: run npm run circuit:setup").toBe(manifest.r1csSha256);
      expect(sha256File(compiled.wasm)).toBe(manifest.wasmSha256);
      expect(compiled.constraints).toBe(manifest.constraints);
      expect(manifest.publicSignals).toEqual([...PUBLIC_SIGNALS]);
    });

    it("are the files the manifest names", () => {
      expect(sha256File(CIRCUIT.wasm)).toBe(manifest.wasmSha256);
      expect(sha256File(CIRCUIT.zkey)).toBe(manifest.zkeySha256);
      expect(sha256File(CIRCUIT.vkey)).toBe(manifest.verificationKeySha256);
      expect(sha256File(CIRCUIT.verifier)).toBe(manifest.verifierSha256);
    });

    it("derive the committed verification key and Solidity verifier from the zkey", async () => {
      expect(await verificationKey(CIRCUIT.zkey)).toEqual(JSON.parse(readFileSync(CIRCUIT.vkey, "utf8")));
      expect(await verifierSource(CIRCUIT.zkey)).toBe(readFileSync(CIRCUIT.verifier, "utf8"));
    });

    it("prove with the freshly compiled wasm against the committed zkey", async () => {
      const { proof, publicSignals } = await proveCollateral(validInput(), {
        wasm: compiled.wasm,
        zkey: PROVING_ARTIFACTS.zkey,
      });
      expect(await verifyCollateralProof(VERIFICATION_KEY, proof, publicSignals)).toBe(true);
    });
  });
});
