import type { ApiKey } from "../../../domain/keys.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { proofIdParams, proofSchema, submitProofBody } from "./schema.ts";
import type { ProofService } from "../../../domain/proofs.ts";

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
      responses: { 201: { description: "The verified proof record", schema: proofSchema } },
      handler: async ({ body }, _req, res) => ({
        status: 201,
        body: await proofs.submit((res.locals.apiKey as ApiKey).accountId, body),
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
      responses: { 200: { description: "The proof record", schema: proofSchema } },
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await proofs.get((res.locals.apiKey as ApiKey).accountId, params.proofId),
      }),
    }),
  ];
}
