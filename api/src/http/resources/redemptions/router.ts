import type { ApiKey } from "../../../domain/keys.ts";
import { type AnyRoute, route } from "../../routes.ts";
import { redeemBody, redemptionIdParams, redemptionSchema, termsQuery, termsSchema } from "./schema.ts";
import type { RedemptionService } from "../../../domain/redemptions.ts";

export function redemptionRoutes(redemptions: RedemptionService): AnyRoute[] {
  return [
    route({
      method: "post",
      path: "/redeem",
      operationId: "redeem",
      summary: "Burn ZSD for ZEC paid to a shielded address: relays the owner's signed redemption",
      tag: "Redeem",
      auth: true,
      body: redeemBody,
      responses: {
        202: { description: "Accepted: requested, then burned, then paid or failed", schema: redemptionSchema },
      },
      handler: async ({ body }, _req, res) => ({
        status: 202,
        body: await redemptions.request((res.locals.apiKey as ApiKey).accountId, body),
      }),
    }),
    // Before /redemptions/:id, which would take "terms" for an id.
    route({
      method: "get",
      path: "/redemptions/terms",
      operationId: "getRedemptionTerms",
      summary: "What an owner signs to redeem through the relay: EIP-712 domain and type, next nonce, a deadline",
      tag: "Redeem",
      auth: true,
      query: termsQuery,
      responses: { 200: { description: "The signing terms", schema: termsSchema } },
      handler: async ({ query }) => ({ status: 200, body: await redemptions.signingTerms(query.owner) }),
    }),
    route({
      method: "get",
      path: "/redemptions/:id",
      operationId: "getRedemption",
      summary: "A redemption: requested → burned → paid | failed, with the Zcash txid",
      tag: "Redeem",
      auth: true,
      params: redemptionIdParams,
      responses: { 200: { description: "The redemption", schema: redemptionSchema } },
      handler: async ({ params }, _req, res) => ({
        status: 200,
        body: await redemptions.get((res.locals.apiKey as ApiKey).accountId, params.id),
      }),
    }),
  ];
}
