import type { ApiKey } from "../../../domain/keys.ts";
import { Problem } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { mintBody, mintIdParams, mintSchema, queuedSchema, successSchema } from "./schema.ts";
import type { MintService } from "../../../domain/mints.ts";

export function mintRoutes(mints: MintService, waitMs: number): AnyRoute[] {
  return [
    route({
      method: "post",
      path: "/mint",
      operationId: "mint",
      summary:
        "Mint against a verified proof: {amount, collateralType, proofId, recipient} answers 202 queued; {amount, collateralProof} waits for the transaction",
      tag: "Mint",
      auth: true,
      body: mintBody,
      responses: {
        200: { description: "Minted (proof-hash shape)", schema: successSchema },
        202: { description: "Queued (quick-start shape)", schema: queuedSchema },
      },
      handler: async ({ body }, _req, res) => {
        const accountId = (res.locals.apiKey as ApiKey).accountId;
        if ("proofId" in body) {
          if (body.collateralType !== "ZEC") {
            throw new Problem(
              422,
              "unsupported_collateral",
              "Unsupported collateral",
              `Only ZEC backs the stable token, not ${body.collateralType}.`,
            );
          }
          const queued = await mints.queue(accountId, { proofId: body.proofId }, body.amount, body.recipient);
          return { status: 202, body: { status: "queued", ...queued, pegPrice: "1.00" } };
        }
        const { mintId } = await mints.queue(accountId, { proofHash: body.collateralProof }, String(body.amount));
        const mint = await mints.wait(accountId, mintId, waitMs);
        if (mint.status === "confirmed") return { status: 200, body: { status: "success", mintId, tx: mint.txHash } };
        if (mint.status === "failed") {
          throw new Problem(422, "mint_failed", "Mint failed", mint.failureReason ?? "The mint failed.", {
            mintId,
            failureCode: mint.failureCode,
          });
        }
        throw new Problem(
          504,
          "mint_pending",
          "Mint still pending",
          `Not confirmed within ${waitMs} ms; poll GET /v1/mints/${mintId}.`,
          {
            mintId,
            headers: { "Retry-After": "2" },
          },
        );
      },
    }),
    route({
      method: "get",
      path: "/mints/:mintId",
      operationId: "getMint",
      summary: "A mint: queued → submitted → confirmed | failed, with its transaction",
      tag: "Mint",
      auth: true,
      params: mintIdParams,
      responses: { 200: { description: "The mint", schema: mintSchema } },
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await mints.get((res.locals.apiKey as ApiKey).accountId, params.mintId),
      }),
    }),
  ];
}
