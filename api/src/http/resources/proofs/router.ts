import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { nullifierParams, nullifierSchema, proofIdParams, proofSchema, submitProofBody } from "./schema.ts";
import type { ProofService } from "../../../domain/mints/proofs.ts";
import { presentProof } from "./presenter.ts";

const EXAMPLE_PROOF = {
  object: "proof",
  proofId: "prf_7Kq2mXb9LwT4zPa1QeR8",
  proofHash: "0x5b1f0c8e9d6a4b3c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d",
  status: "verified",
  publicInputs: {
    root: "2150831829738264937502917346018264739102837465019283746501928374650192837465",
    nullifierHash: "1093847561029384756102938475610293847561029384756102938475610293847561",
    collateralFloorZat: "500000000",
    bindingHash: "8473625190283746501928374650192837465019283746501928374650192837465012",
    changeLeaf: "0",
  },
  mintAmount: "100.0",
  recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  relayer: "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
  fee: "0.5",
  owner: "0x2f4b8a1C36b9E0d1A7c5F3e2D9b8A6c4E1f0D3a7",
  rejectionReason: null,
  mintId: null,
  createdAt: "2026-03-02T10:15:00.000Z",
};

/** Field elements as snarkjs writes them (shortened here: real ones run to 77 digits). */
const EXAMPLE_SUBMISSION = {
  proof: {
    pi_a: ["1368015179489954701390400359078579693043519447331113978918064868415326638035", "947520000", "1"],
    pi_b: [
      ["1208451262108230573201302043919640436547436004519216155101937123432455102133", "7720000"],
      ["1198317026281203480958113045120938409809834059029409091039701092091092091", "8810000"],
      ["1", "0"],
    ],
    pi_c: ["3902375198247981723987123498172398471239847123984712398471239847123", "10420000", "1"],
    protocol: "groth16",
    curve: "bn128",
  },
  publicSignals: [
    EXAMPLE_PROOF.publicInputs.changeLeaf,
    EXAMPLE_PROOF.publicInputs.root,
    EXAMPLE_PROOF.publicInputs.nullifierHash,
    EXAMPLE_PROOF.publicInputs.collateralFloorZat,
    EXAMPLE_PROOF.publicInputs.bindingHash,
  ],
  mintAmount: "100.0",
  recipient: EXAMPLE_PROOF.recipient,
  relayer: EXAMPLE_PROOF.relayer,
  fee: "0.5",
  owner: EXAMPLE_PROOF.owner,
};

export function proofRoutes(proofs: ProofService): AnyRoute[] {
  return [
    route({
      method: "post",
      path: "/proofs/submit",
      operationId: "submitProof",
      summary: "Submit a collateral proof: verified off-chain and against the chain before anything is spent",
      tag: "Proofs",
      auth: true,
      body: submitProofBody,
      requestExamples: {
        proof: { summary: "A proof the JS SDK made, paying this relay's fee", value: EXAMPLE_SUBMISSION },
      },
      responses: { 201: { description: "The verified proof record", schema: proofSchema, example: EXAMPLE_PROOF } },
      problems: [
        "relayer_mismatch",
        "fee_below_minimum",
        "binding_mismatch",
        "invalid_proof",
        "unknown_root",
        "root_expired",
        "nullifier_spent",
        "proof_already_submitted",
        "nullifier_claimed",
        "upstream_unavailable",
      ],
      handler: async ({ body }, _req, res) => ({
        status: 201,
        body: presentProof(await proofs.submit((res.locals.apiKey as ApiKey).accountId, body)),
      }),
    }),
    route({
      method: "get",
      path: "/proofs/:proofId",
      operationId: "getProof",
      summary:
        "A submitted proof: verified (again, if its mint failed), consumed (by a mint) or rejected (it can never mint: its deposit was minted by another proof, or its root expired)",
      tag: "Proofs",
      auth: true,
      params: proofIdParams,
      responses: {
        200: {
          description: "The proof record",
          schema: proofSchema,
          example: { ...EXAMPLE_PROOF, status: "consumed", mintId: "mint_4Hn8pQ2rT6vX1zB3cD5f" },
        },
      },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: presentProof(await proofs.get((res.locals.apiKey as ApiKey).accountId, params.proofId)),
      }),
    }),
    route({
      method: "get",
      path: "/nullifiers/:nullifierHash",
      operationId: "getNullifier",
      summary:
        "Whether a note's nullifier is spent on chain: the SDKs ask before proving, so a spent note fails at once",
      tag: "Proofs",
      auth: true,
      params: nullifierParams,
      responses: {
        200: {
          description: "The nullifier's state on chain",
          schema: nullifierSchema,
          example: { object: "nullifier", nullifierHash: EXAMPLE_PROOF.publicInputs.nullifierHash, spent: true },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ params }) => ({ status: 200, body: await proofs.nullifier(BigInt(params.nullifierHash)) }),
    }),
  ];
}
