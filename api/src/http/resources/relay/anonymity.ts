// The anonymity set of a mint: how many deposits could back
// a mint that proves a given collateral floor, for a wallet to choose a floor
// that does not single out its deposit. One indexed count at the indexer,
// cached as every ledger read (INDEXER_CACHE_MS); public, as the leaves are.
import { z } from "zod";
import { formatZec, parseZec } from "@zsd/sdk/units";
import type { Upstreams } from "../../../adapters/upstreams.ts";
import { decimalAmount } from "../../formats.ts";
import { type AnyRoute, route } from "../../routes.ts";

/** The count below which the SDKs warn (their ZSD_MIN_ANONYMITY), served for other clients to use. */
export const ADVISED_MIN_ANONYMITY = 20;

const anonymityQuery = z.strictObject({
  floor: decimalAmount({ unit: "ZEC", integerDigits: 11, decimals: 8, example: "3.1" }).describe(
    "The collateral floor a mint would prove, in ZEC (its collateralFloorZat, public in the mint)",
  ),
});

const anonymitySchema = z
  .object({
    object: z.literal("anonymity"),
    floor: z.string().describe("The floor asked about, in ZEC"),
    floorZat: z.string().describe("The same in zatoshi"),
    candidates: z
      .number()
      .int()
      .describe(
        "How many leaves could hold at least the floor at once as far as the chain shows: the deposits a mint at this floor could spend. A released note counts when its public amount reaches the floor; a batch of n deposits, which publishes its total T only, counts min(n, floor(T / floor)) when T less a zatoshi for each other leaf reaches the floor (dust recorded beside a large deposit does not count as large)",
      ),
    hiddenAmountLeaves: z
      .number()
      .int()
      .describe(
        "Leaves whose amount is private (change, and deposits the attestor recorded in a batch). Change leaves could back any floor and are not counted in candidates (a lower bound); batched deposits are, as many as their batch's total covers",
      ),
    leaves: z.number().int().describe("Every leaf of the deposit tree"),
    advisedMinimum: z
      .number()
      .int()
      .describe("The SDKs warn when candidates is below this (their ZSD_MIN_ANONYMITY, 20 by default)"),
  })
  .meta({ id: "Anonymity" });

interface IndexerAnonymity {
  floorZat: string;
  candidates: number;
  hiddenAmountLeaves: number;
  leaves: number;
}

export function anonymityRoutes(upstreams: Upstreams): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/relay/anonymity",
      operationId: "getAnonymitySet",
      summary: "How many deposits could back a mint that proves this collateral floor (its anonymity set)",
      tag: "Relay",
      auth: false,
      query: anonymityQuery,
      responses: {
        200: {
          description: "The anonymity set of a mint at this floor",
          schema: anonymitySchema,
          example: {
            object: "anonymity",
            floor: "3.1",
            floorZat: "310000000",
            candidates: 212,
            hiddenAmountLeaves: 40,
            leaves: 1304,
            advisedMinimum: ADVISED_MIN_ANONYMITY,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ query }) => {
        const floorZat = parseZec(query.floor);
        const set = await upstreams.indexer<IndexerAnonymity>(`/anonymity?floorZat=${floorZat}`);
        return {
          status: 200,
          body: {
            object: "anonymity",
            floor: formatZec(floorZat),
            floorZat: floorZat.toString(),
            candidates: set.candidates,
            hiddenAmountLeaves: set.hiddenAmountLeaves,
            leaves: set.leaves,
            advisedMinimum: ADVISED_MIN_ANONYMITY,
          } satisfies z.input<typeof anonymitySchema>,
        };
      },
    }),
  ];
}
