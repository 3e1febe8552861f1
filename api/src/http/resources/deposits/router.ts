import { z } from "zod";
import type { Queryable } from "../../../adapters/db/index.ts";
import { depositOf } from "../../../domain/deposits/deposits.ts";
import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { prefixedId } from "../../formats.ts";
import { type AnyRoute, route } from "../../routes.ts";

const depositIdParams = z.object({ depositId: prefixedId("dep", 20, "a deposit id") });

const depositSchema = z
  .object({
    object: z.literal("deposit"),
    id: z.string(),
    leafIndex: z.number().int().describe("The deposit's leaf in the commitment tree"),
    leaf: z.string().describe("Poseidon(amountZat, noteCommitment), the only trace of this deposit on-chain"),
    amount: z.string().describe("ZEC deposited: not on-chain (the chain shows its batch's total only)"),
    amountZat: z.string(),
    noteCommitment: z.string().describe("The note commitment the deposit's memo carried: not on-chain either"),
    txHash: z.string().describe("The attestor's recordDeposits transaction (the batch)"),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: "Deposit" });

/** A deposit by its id, for the account that made it: its amount is public nowhere else. */
export function depositRoutes(db: Queryable): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/deposits/:depositId",
      operationId: "getDeposit",
      summary: "One of your deposits: its amount and note commitment, which the chain does not show",
      tag: "Ledger",
      auth: true,
      params: depositIdParams,
      responses: {
        200: {
          description: "The deposit",
          schema: depositSchema,
          example: {
            object: "deposit",
            id: "dep_4Hn8pQ2rT6vX1zB3cD5f",
            leafIndex: 41,
            leaf: "9310212785467612390829371018263547581920384756102938475610293847561029",
            amount: "4",
            amountZat: "400000000",
            noteCommitment: "14744269619966411208579211824598458697587494354926760081771325075741142829156",
            txHash: "0x7d9f1b3d5f7a9c1e3a5c7e9a1c3e5a7c9e1a3c5e7a9c1e3a5c7e9a1c3e5a7c9e",
            createdAt: "2026-03-02T10:10:00.000Z",
          },
        },
      },
      problems: ["resource_not_found"],
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await depositOf(db, (res.locals.apiKey as ApiKey).accountId, params.depositId),
      }),
    }),
  ];
}
