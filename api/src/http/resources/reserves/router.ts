import { z } from "zod";
import { type AnyRoute, route } from "../../routes.ts";
import { type ReservesWatch, presentReading } from "../../../domain/reserves/reserves.ts";
import { domainErrors } from "../../../domain/errors.ts";

const zec = z
  .string()
  .regex(/^-?[0-9]+(\.[0-9]{1,8})?$/)
  .describe("ZEC, a decimal string");
const zat = z
  .string()
  .regex(/^-?[0-9]+$/)
  .describe("Zatoshi, a decimal integer string");

const readingSchema = z.object({
  readAt: z.string().describe("When the two sides were read"),
  custody: z.object({
    held: zec,
    heldZat: zat.describe("What custody's own Zcash node shows its address holding (unconfirmed change included)"),
    inFlight: zec,
    inFlightZat: zat.describe("Payouts custody handed to its wallet and the chain has not settled yet"),
    zcashHeight: z.number().int().describe("The Zcash block height custody's node was at"),
  }),
  chain: z.object({
    expected: zec,
    expectedZat: zat.describe("The registry's collateral: deposits recorded less payouts completed"),
    depositedZat: zat,
    paidOutZat: zat,
    blockNumber: z.number().int().describe("The chain block the registry was read at"),
  }),
  difference: zec,
  differenceZat: zat.describe("held + in flight − expected: negative is a shortfall"),
  toleranceZat: zat.describe("A shortfall beyond this stops new mints (RESERVES_TOLERANCE_ZAT)"),
  status: z.enum(["ok", "shortfall"]),
  mintsPaused: z.boolean().describe("Whether new mints are stopped on the chain (StableMinter.mintsPaused)"),
  pauseFailed: z
    .boolean()
    .describe(
      "The guardian's transaction this reading called for (stopping new mints on a shortfall, or resuming them) " +
        "failed; the reading and its alert stand, and the next reading tries again",
    ),
});

const reservesSchema = readingSchema
  .extend({
    object: z.literal("reserves"),
    history: z.array(readingSchema).describe("Earlier readings, newest first"),
  })
  .meta({ id: "Reserves" });

const EXAMPLE = {
  readAt: "2026-03-09T08:00:00.000Z",
  custody: { held: "51", heldZat: "5100000000", inFlight: "0", inFlightZat: "0", zcashHeight: 2710000 },
  chain: {
    expected: "50",
    expectedZat: "5000000000",
    depositedZat: "5400000000",
    paidOutZat: "400000000",
    blockNumber: 1204,
  },
  difference: "1",
  differenceZat: "100000000",
  toleranceZat: "100000",
  status: "ok" as const,
  mintsPaused: false,
  pauseFailed: false,
};

export function reservesRoutes(reserves: ReservesWatch | undefined): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/reserves",
      operationId: "getReserves",
      summary:
        "Custody's ZEC, read from its own Zcash node, against what the chain says it holds, with when and at which " +
        "blocks each side was read, and the readings before (public: anyone may check the backing)",
      tag: "Ledger",
      auth: false,
      query: z.object({
        history: z.coerce.number().int().min(0).max(500).default(48).describe("How many earlier readings to include"),
      }),
      responses: {
        200: {
          description: "The newest reading and its history",
          schema: reservesSchema,
          example: { object: "reserves", ...EXAMPLE, history: [] },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ query }) => {
        // Read on the watch's schedule, never per request: a public endpoint must not make the node work.
        const readings = reserves ? await reserves.store.recent(query.history + 1) : [];
        const [latest, ...history] = readings;
        if (!latest) throw domainErrors.unavailable("The reserves reading (none taken yet)", 60);
        return {
          status: 200,
          body: { object: "reserves", ...presentReading(latest), history: history.map(presentReading) },
        };
      },
    }),
  ];
}
