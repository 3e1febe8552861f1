import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { formatPrice, formatZec, parseZec } from "@zsd/sdk/units";
import { z } from "zod";
import { SNARK_SCALAR_FIELD } from "@zsd/sdk";
import type { Custody } from "../../../adapters/custody/index.ts";
import type { PriceFeedState, SandboxPriceFeed } from "../../../domain/price/sandbox-price.ts";
import { decimalAmount } from "../../formats.ts";
import { problems } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";

const FIELD_ELEMENT = /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/;

const depositBody = z.strictObject({
  amount: decimalAmount({ unit: "ZEC", integerDigits: 11, decimals: 8, example: "1.5" }).describe(
    "ZEC deposited to the custody address",
  ),
  noteCommitment: z
    .string()
    .regex(FIELD_ELEMENT, "a field element, decimal or 0x-hex")
    // zod runs this check even when the pattern failed: BigInt must only see what the pattern admits.
    .refine(
      (v) => !FIELD_ELEMENT.test(v) || (BigInt(v) > 0n && BigInt(v) < SNARK_SCALAR_FIELD),
      "must be above 0 and below the field modulus",
    )
    .describe("Poseidon(secret, nullifierSecret) from the depositor's note, as the shielded memo would carry it"),
});

const depositSchema = z
  .object({
    object: z.literal("deposit"),
    id: z.string().describe("GET /v1/deposits/{id} serves this deposit to your account"),
    leafIndex: z.number().int(),
    leaf: z.string(),
    root: z.string(),
    amount: z.string(),
    amountZat: z.string(),
    noteCommitment: z.string(),
    txHash: z.string(),
  })
  .meta({ id: "SandboxDeposit" });

const priceBody = z
  .strictObject({
    price: decimalAmount({ unit: "USD price", integerDigits: 12, decimals: 8, example: "42.5" })
      .optional()
      .describe("ZEC/USD to post now; the feeder keeps it (fixed) or walks from it"),
    mode: z
      .enum(["fixed", "walk", "paused"])
      .optional()
      .describe("fixed: repost the price; walk: a gentle random walk; paused: post nothing, so the price goes stale"),
  })
  .refine((b) => b.price !== undefined || b.mode !== undefined, "send a price, a mode or both");

const priceFeedSchema = z
  .object({
    object: z.literal("sandbox_price"),
    mode: z.enum(["fixed", "walk", "paused"]),
    price: z.string().describe("USD per ZEC"),
    lastPostedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "SandboxPrice" });

const EXAMPLE_FEED = {
  object: "sandbox_price" as const,
  mode: "fixed" as const,
  price: "42.5",
  lastPostedAt: "2026-03-02T10:10:00.000Z",
};

const presentFeed = (state: PriceFeedState) => ({
  object: "sandbox_price" as const,
  mode: state.mode,
  price: formatPrice(state.price),
  lastPostedAt: state.lastPostedAt?.toISOString() ?? null,
});

/** Sandbox only (production answers these paths with 404). */
export function sandboxRoutes(custody: Custody | undefined, priceFeed: SandboxPriceFeed | undefined): AnyRoute[] {
  const requireFeed = () => {
    if (!priceFeed) throw problems.upstreamUnavailable("The sandbox price feed (no ORACLE_UPDATER_PRIVATE_KEY)");
    return priceFeed;
  };
  return [
    route({
      method: "get",
      path: "/sandbox/price",
      operationId: "getSandboxPrice",
      summary: "Sandbox: the price feeder's state",
      tag: "Sandbox",
      auth: true,
      responses: { 200: { description: "The feeder", schema: priceFeedSchema, example: EXAMPLE_FEED } },
      problems: ["upstream_unavailable"],
      handler: async () => ({ status: 200, body: presentFeed(requireFeed().state) }),
    }),
    route({
      method: "post",
      path: "/sandbox/price",
      operationId: "setSandboxPrice",
      summary:
        "Sandbox: set the ZEC/USD price on both feeds, or how the feeder keeps them (pause it to try a stale price)",
      tag: "Sandbox",
      auth: true,
      body: priceBody,
      requestExamples: {
        set: { summary: "Post 42.5 USD and keep it", value: { price: "42.5", mode: "fixed" } },
        stale: { summary: "Stop posting, to try a stale price", value: { mode: "paused" } },
      },
      responses: {
        200: { description: "The feeder after the change", schema: priceFeedSchema, example: EXAMPLE_FEED },
      },
      problems: ["upstream_unavailable", "price_not_set"],
      handler: async ({ body }) => ({ status: 200, body: presentFeed(await requireFeed().set(body)) }),
    }),
    route({
      method: "post",
      path: "/sandbox/deposits",
      operationId: "simulateDeposit",
      summary: "Sandbox: simulate a shielded ZEC deposit; the attestor records it on-chain",
      tag: "Sandbox",
      auth: true,
      body: depositBody,
      requestExamples: {
        deposit: {
          summary: "5 ZEC with the note commitment of a note the SDK made",
          value: {
            amount: "5",
            noteCommitment: "14744269619966411208579211824598458697587494354926760081771325075741142829156",
          },
        },
      },
      responses: {
        201: {
          description: "The recorded deposit and its leaf index",
          schema: depositSchema,
          example: {
            object: "deposit",
            id: "dep_4Hn8pQ2rT6vX1zB3cD5f",
            leafIndex: 0,
            leaf: "9310212785467612390829371018263547581920384756102938475610293847561029",
            root: "2150831829738264937502917346018264739102837465019283746501928374650192837465",
            amount: "5.0",
            amountZat: "500000000",
            noteCommitment: "14744269619966411208579211824598458697587494354926760081771325075741142829156",
            txHash: "0x7d9f1b3d5f7a9c1e3a5c7e9a1c3e5a7c9e1a3c5e7a9c1e3a5c7e9a1c3e5a7c9e",
          },
        },
      },
      // Contract refusals of recordDeposits that the schema does not rule out.
      problems: [
        "upstream_unavailable",
        "deposit_already_recorded",
        "tree_full",
        "access_control_unauthorized_account",
      ],
      handler: async ({ body }, _req, res) => {
        if (!custody?.simulateDeposit) {
          throw problems.upstreamUnavailable("Sandbox custody (no deployment or attestor key configured)");
        }
        const amountZat = parseZec(body.amount);
        if (amountZat === 0n) throw problems.validation([{ field: "body.amount", message: "must be above 0" }]);
        const deposit = await custody.simulateDeposit(
          BigInt(body.noteCommitment),
          amountZat,
          (res.locals.apiKey as ApiKey).accountId,
        );
        return {
          status: 201,
          body: {
            object: "deposit",
            id: deposit.id,
            leafIndex: deposit.leafIndex,
            leaf: deposit.leaf.toString(),
            root: deposit.root.toString(),
            amount: formatZec(amountZat),
            amountZat: amountZat.toString(),
            // Answered in the form it was sent in: 0x-hex for hex, decimal for decimal.
            noteCommitment: body.noteCommitment.startsWith("0x")
              ? `0x${deposit.noteCommitment.toString(16).padStart(64, "0")}`
              : deposit.noteCommitment.toString(),
            txHash: deposit.txHash,
          },
        };
      },
    }),
  ];
}
