import { z } from "zod";
import { decimalAmount, prefixedId } from "../../formats.ts";
import {
  collateralProof,
  evmAddress as address,
  fieldElement,
  holdSchema,
  sealedAddress,
  zsdDecimal,
} from "../../schemas.ts";

const zecAmount = decimalAmount({ unit: "ZEC", integerDigits: 11, decimals: 8, example: "0.5" });
const signed = {
  deadline: z
    .number()
    .int()
    .positive()
    .max(2 ** 48)
    .describe("The signature's deadline, in unix seconds (chain time)"),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte signature, 0x and 130 hex digits")
    .transform((s) => s as `0x${string}`)
    .describe("The signer's EIP-712 signature of the action (GET /v1/positions/terms)"),
};

export const positionIdParams = z.object({
  id: z.string().regex(/^[1-9]\d{0,19}$/, "a position id: a positive integer"),
});
const actionId = prefixedId("pact", 20, "an action id");
export const actionParams = positionIdParams.extend({ actionId });
export const actionIdParams = z.object({ actionId });
export const withdrawalParams = z.object({
  id: prefixedId("wdr", 20, "a withdrawal id"),
});
export const termsQuery = z.strictObject({ signer: address.describe("Who signs: the owner, payer or liquidator") });

export const destination = z
  .union([
    z.strictObject({
      sealedAddress: sealedAddress.describe(
        "A shielded Zcash address (custody pays it), sealed to the seal key of GET /v1/relay for the payout's " +
          "owner: the position's owner, or the liquidator for a liquidation",
      ),
    }),
    z.strictObject({ noteCommitment: fieldElement }),
  ])
  .describe(
    "Where the ZEC goes: a sealed shielded Zcash address (custody pays it) or a new note " +
      "Poseidon(amountZat, noteCommitment) in the deposit tree, for a later private mint (the SDK's noteCommitment " +
      "of a fresh note)",
  );

export const repayBody = z.strictObject({
  amount: zsdDecimal.describe(
    "The most ZSD to burn against the debt (the signed `maxAmount`): when a redemption has shrunk the debt below " +
      "it by the time the call lands, the whole debt is repaid and no more",
  ),
  payer: address.describe("Whose ZSD is burned: any holder, who signs"),
  ...signed,
});
export const withdrawBody = z.strictObject({
  amount: zecAmount.describe("ZEC to take out; the position must stay at or above the minimum ratio"),
  destination,
  ...signed,
});
const maxDebt = zsdDecimal.describe(
  "The most ZSD the signer burns (the signed `maxDebt`): a redistribution onto the position raises the debt; above " +
    "it the call reverts DebtAboveMaximum and moves nothing",
);
export const closeBody = z.strictObject({
  maxDebt,
  minZec: zecAmount.describe(
    "The least ZEC released (the signed `minZatOut`): a redemption lowers the collateral; under it the call reverts " +
      "ZatOutBelowMinimum and moves nothing",
  ),
  destination,
  ...signed,
});
export const liquidateBody = z.strictObject({
  liquidator: address.describe("Whose ZSD repays the debt: the liquidator, who signs and takes the collateral"),
  maxDebt,
  minSeizedZec: zecAmount.describe(
    "The least ZEC taken (the signed `minSeizedZat`); under it the call reverts ZatOutBelowMinimum",
  ),
  minSeizedValue: zsdDecimal.describe(
    "The least the ZEC taken is worth, in ZSD at the liquidation's price (the signed `minSeizedValue`; 0 for none; " +
      "the debt seen is break-even): a price fall takes more ZEC worth less; under it the call reverts " +
      "SeizedValueBelowMinimum",
  ),
  destination,
  ...signed,
});

export const topUpBody = z.strictObject(collateralProof);
export const withdrawalBody = z.strictObject({
  ...collateralProof,
  sealedAddress: sealedAddress.describe(
    "Where the note's ZEC is paid: the shielded address sealed to the seal key of GET /v1/relay for `owner`; the " +
      "proof binds this sealed address (its keccak256) and the owner",
  ),
  owner: address.describe(
    "The payout's owner, bound by the proof with the address: who may redirect the ZEC if custody cannot pay it " +
      "(the SDK passes positionOwner(note), the key it derives from the note)",
  ),
});

const status = z.enum(["queued", "submitted", "confirmed", "failed"]);
const common = {
  status,
  txHash: z.string().nullable(),
  blockNumber: z.number().int().nullable(),
  payoutId: z.string().nullable().describe("The Redemptions record custody pays, when ZEC goes to a Zcash address"),
  failureCode: z.string().nullable().describe("Why it failed: a contract's refusal in snake case, nonce_used, …"),
  failureReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const positionSchema = z
  .object({
    object: z.literal("position"),
    id: z.string(),
    owner: z.string().describe("The address the mint's proof bound: it signs the owner's actions"),
    status: z.enum(["open", "liquidated", "closed"]),
    collateral: z.string().describe("ZEC backing the position now (after redemptions)"),
    debt: z.string().describe("ZSD owed now (after redemptions)"),
    collateralValueUsd: z.string(),
    collateralRatio: z.string().nullable().describe("Collateral value over debt (1.5 = 150%); null without debt"),
    liquidationPrice: z.string().nullable().describe("The ZEC/USD price under which it may be liquidated"),
    liquidatable: z.boolean(),
    minCollateralRatio: z.string(),
    liquidationRatio: z.string(),
    price: z.string().describe("The oracle's ZEC/USD price these figures use"),
    priceStale: z
      .boolean()
      .describe("No trusted price (the feeds are too old, broken or disagreeing): actions that need one revert"),
  })
  .meta({ id: "Position" });

export const positionActionSchema = z
  .object({
    object: z.literal("position_action"),
    actionId: z.string(),
    positionId: z.string(),
    action: z.enum(["repay", "withdraw", "close", "liquidate", "top_up"]),
    signer: z.string().nullable(),
    amount: z.string().nullable().describe("ZSD repaid, or ZEC withdrawn or added"),
    destination: z
      .union([
        z
          .object({ zcashAddress: z.string() })
          .describe("The shielded address paid, as custody opened it (shown to the action's account only)"),
        z.object({ noteCommitment: z.string() }),
      ])
      .nullable(),
    released: z.string().nullable().describe("ZEC that left the position, once confirmed"),
    noteSequence: z
      .string()
      .nullable()
      .describe(
        "The new note's place in the registry's leaf queue, when released into a note (GET /v1/deposits/pending " +
          "lists what waits); it is spendable once inserted, usually within seconds",
      ),
    hold: holdSchema
      .nullable()
      .describe(
        "While compliance holds the action (a rule, a screener, required screening): who, since when, under which " +
          "alert. The relay sends nothing of it, nor the signer's later actions, until it is released",
      ),
    ...common,
  })
  .meta({ id: "PositionAction" });

export const withdrawalSchema = z
  .object({
    object: z.literal("withdrawal"),
    withdrawalId: z.string(),
    amount: z.string().describe("ZEC paid out: the floor the proof spends (the rest stays as a change note)"),
    zcashAddress: z.string().describe("The shielded address paid, as custody opened it from the sealed address"),
    owner: z.string().nullable().describe("Who may redirect the payout if custody cannot pay it"),
    nullifierHash: z.string(),
    ...common,
  })
  .meta({ id: "Withdrawal" });

const typeField = z.object({ name: z.string(), type: z.string() });
export const positionTermsSchema = z
  .object({
    object: z.literal("position_terms"),
    signer: z.string(),
    nonce: z.string().describe("The nonce to sign at (after the signer's actions still being relayed)"),
    chainTime: z.number().int(),
    suggestedDeadline: z.number().int(),
    domain: z.object({
      name: z.string(),
      version: z.string(),
      chainId: z.number().int(),
      verifyingContract: z.string(),
    }),
    types: z.record(z.string(), z.array(typeField)).describe("Repay, WithdrawCollateral, Close and Liquidate"),
    bounds: z
      .object(
        Object.fromEntries(
          (["repay", "withdraw", "close", "liquidate"] as const).map((action) => [
            action,
            z.record(z.string(), z.string()).describe(`The bounds of a ${action}: typed-data field to what it says`),
          ]),
        ) as Record<"repay" | "withdraw" | "close" | "liquidate", z.ZodRecord<z.ZodString, z.ZodString>>,
      )
      .describe(
        "The bounds each action's signature carries, by typed-data field, saying which request field names it and " +
          "what it guards against: a relay can send the signature only within them (a breach reverts and moves nothing)",
      ),
  })
  .meta({ id: "PositionTerms" });
