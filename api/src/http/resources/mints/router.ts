import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { Problem } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { presentMint } from "./presenter.ts";
import { mintBody, mintIdParams, mintSchema, queuedSchema, successSchema } from "./schema.ts";
import type { MintService } from "../../../domain/mints/mints.ts";

const MINT_ID = "mint_4Hn8pQ2rT6vX1zB3cD5f";
const TX = "0x8c2d7f4e1a9b6c3d0e5f2a7b4c1d8e9f6a3b0c7d4e1f8a5b2c9d6e3f0a7b4c1d";

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
      requestExamples: {
        queued: {
          summary: "Quick start: queue the mint of a submitted proof, answered 202 at once",
          value: {
            amount: "100.0",
            collateralType: "ZEC",
            proofId: "prf_7Kq2mXb9LwT4zPa1QeR8",
            recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
          },
        },
        wait: {
          summary: "By proof hash: wait for the transaction (up to MINT_WAIT_MS)",
          value: { amount: 100, collateralProof: "0x5b1f0c8e9d6a4b3c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d" },
        },
      },
      responses: {
        200: {
          description: "Minted (proof-hash shape)",
          schema: successSchema,
          example: { status: "success", mintId: MINT_ID, tx: TX },
        },
        202: {
          description: "Queued (quick-start shape)",
          schema: queuedSchema,
          example: {
            status: "queued",
            mintId: MINT_ID,
            expectedCollateralRatio: "2.125",
            pegPrice: "1.00",
            hold: null,
          },
        },
      },
      problems: [
        "unsupported_collateral",
        "resource_not_found",
        "proof_mismatch",
        "proof_already_used",
        "root_expired",
        "price_stale",
        "mint_would_revert",
        "upstream_unavailable",
        "mint_failed",
        "mint_pending",
      ],
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
        const mint = presentMint(await mints.wait(accountId, mintId, waitMs));
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
      responses: {
        200: {
          description: "The mint",
          schema: mintSchema,
          example: {
            object: "mint",
            mintId: MINT_ID,
            status: "confirmed",
            proofId: "prf_7Kq2mXb9LwT4zPa1QeR8",
            amount: "100.0",
            recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
            positionId: "7",
            txHash: TX,
            blockNumber: 1203,
            confirmations: 2,
            failureCode: null,
            failureReason: null,
            hold: null,
            createdAt: "2026-03-02T10:15:00.000Z",
            updatedAt: "2026-03-02T10:15:04.000Z",
          },
        },
      },
      problems: ["resource_not_found", "upstream_unavailable"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: presentMint(await mints.get((res.locals.apiKey as ApiKey).accountId, params.mintId)),
      }),
    }),
  ];
}
