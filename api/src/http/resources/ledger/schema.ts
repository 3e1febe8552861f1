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
    split: z
      .object({
        inPositionsZec: decimal("ZEC backing positions with debt: what redemptions draw on"),
        claimableZec: decimal("ZEC of positions without debt (repaid, liquidated surplus), not yet released"),
        unmintedZec: decimal("ZEC of deposit notes no mint has spent: never paid to a redeemer"),
        pendingPayoutZec: decimal("ZEC due to redemptions and released collateral, not yet paid"),
        positionsValueUsd: decimal("What inPositionsZec is worth at the oracle price"),
        systemRatio: decimal("Positions' collateral value over the supply (1.5 = 150%)").nullable(),
        systemFloorRatio: decimal("Under it, only mints that keep the ratio are taken (recovery mode)"),
        recoveryMode: z.boolean(),
        keeperRewardFloorZec: decimal(
          "The least ZEC whoever liquidates or redistributes a position is paid (governed): what keeps keepers acting on small positions",
        ),
      })
      .nullable()
      .describe("Where the ZEC is, read from the contracts now (null when this server has no deployment)"),
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

export const leavesQuery = z.strictObject({
  from: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(0)
    .describe("The first leaf index of the page"),
  limit: z.coerce.number().int().min(1).max(5000).default(1000).describe("At most this many leaves"),
});

export const leavesSchema = z
  .object({
    object: z.literal("deposit_leaves"),
    data: z
      .array(
        z.object({
          index: z.number().int(),
          leaf: z.string().describe("Poseidon(amountZat, noteCommitment)"),
          amountZat: z
            .string()
            .describe(
              "A released note's amount (public on-chain); for a deposit of your account, its amount; else 0 (private: deposits go on-chain by leaf, change is private)",
            ),
          noteCommitment: z
            .string()
            .describe(
              "For a deposit of your account, its note commitment, by which your wallet finds its leaf among all the leaves it reads; else 0",
            ),
        }),
      )
      .describe("Every recorded deposit's leaf, in tree order"),
    root: z
      .string()
      .nullable()
      .describe(
        "The registry's root right after the page's last leaf: a rebuilt tree must have this root. Null on an empty page, and when the page ends inside a batch of leaves that entered the tree together (the registry had no root there)",
      ),
    next: z.number().int().nullable().describe("The `from` of the next page; null on the last"),
    ...asOf,
  })
  .meta({ id: "DepositLeaves" });

export const pendingLeavesSchema = z
  .object({
    object: z.literal("pending_leaves"),
    data: z
      .array(
        z.object({
          sequence: z.number().int().min(0).describe("The leaf's place among every leaf ever queued, from 0"),
          leaf: z.string().describe("Poseidon(amountZat, noteCommitment) of a change note: amount private"),
          queuedAt: z.iso.datetime().describe("When the spend that made it was mined"),
        }),
      )
      .max(1024)
      .describe(
        "Every change leaf queued and not yet in the tree, oldest first (1024 at most): no path yet, so not spendable until a later insertion (anyone may send one) adds it to the deposit leaves",
      ),
    queuedCount: z.number().int().min(0).describe("How many leaves were ever queued: the next leaf's sequence"),
    ...asOf,
  })
  .meta({ id: "PendingLeaves" });
