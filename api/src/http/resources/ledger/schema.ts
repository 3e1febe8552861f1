import { z } from "zod";
import { ZSD_DECIMALS } from "@zsd/sdk/units";
import { evmAddress } from "../../schemas.ts";

const decimal = (description: string) =>
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/)
    .describe(description);

export const addressParams = z.object({ address: evmAddress });

/** How current a ledger answer is: the indexer's newest block and its age. */
const asOf = {
  asOfBlock: z.number().int().describe("The newest block the figures include"),
  asOfBlockTime: z.iso.datetime().describe("That block's timestamp"),
  asOfBlockAgeSeconds: z
    .number()
    .int()
    .min(0)
    .describe(
      "Seconds since that block: on a chain that makes blocks regularly, a large age means the figures are stale",
    ),
};

export const supplySchema = z
  .object({
    object: z.literal("supply"),
    symbol: z.literal("ZSD"),
    decimals: z.literal(ZSD_DECIMALS),
    circulating: decimal("Tokens in circulation (minted − burned)"),
    minted: decimal("All tokens ever minted"),
    burned: decimal("All tokens ever burned (redemptions, holder burns)"),
    holders: z.number().int(),
    ...asOf,
  })
  .meta({ id: "Supply" });

export const collateralSchema = z
  .object({
    object: z.literal("collateral"),
    asset: z.literal("ZEC"),
    depositedZec: decimal("ZEC ever recorded as deposited"),
    paidOutZec: decimal("ZEC paid out to completed redemptions"),
    outstandingZec: decimal("ZEC held in custody"),
    pendingRedemptionZec: decimal("ZEC promised to redemptions not yet paid"),
    valueUsd: decimal("USD value of the outstanding ZEC at the oracle price"),
    circulatingSupply: decimal("ZSD in circulation"),
    collateralRatio: decimal("Collateral value over circulating supply (1.5 = 150%)").nullable(),
    price: z.object({
      zecUsd: decimal("USD per ZEC"),
      updatedAt: z.iso.datetime().nullable(),
      ageSeconds: z.number().int().nullable(),
    }),
    ...asOf,
  })
  .meta({ id: "Collateral" });

export const pegSchema = z
  .object({
    object: z.literal("peg_price"),
    pegPrice: decimal("The peg target in USD"),
    zecUsd: decimal("USD per ZEC at the oracle"),
    updatedAt: z.iso.datetime(),
    ...asOf,
  })
  .meta({ id: "PegPrice" });

export const balancesSchema = z
  .object({
    object: z.literal("balances"),
    address: z.string(),
    balances: z.array(
      z.object({
        asset: z.literal("ZSD"),
        amount: decimal("Balance in ZSD"),
        decimals: z.literal(ZSD_DECIMALS),
        raw: decimal("Balance in base units"),
      }),
    ),
    ...asOf,
  })
  .meta({ id: "Balances" });
