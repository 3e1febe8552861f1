import { z } from "zod";
import {
  evmAddress as address,
  fieldElement,
  holdSchema,
  sealedAddress,
  zsdDecimal,
  zsdNumber,
} from "../../schemas.ts";
import { decimalAmount, prefixedId } from "../../formats.ts";

const zecAmount = decimalAmount({ unit: "ZEC", integerDigits: 11, decimals: 8, example: "1.99" });

const permit = z
  .strictObject({
    deadline: z.union([z.number().int().positive(), z.string().regex(/^\d{1,20}$/)]),
    minZec: zecAmount
      .optional()
      .describe(
        "The least ZEC paid, after the fee, that the owner signed for (`minZatOut`; 0 when absent): usually the " +
          "quote less a slippage allowance. Sent after the price rose or once redemptions pay pro rata, the permit " +
          "reverts ZatOutBelowMinimum and nothing is burned",
      ),
    v: z.number().int().min(27).max(28),
    r: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    s: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  })
  .describe(
    "The owner's EIP-712 Redeem(owner, amount, minZatOut, bytes sealedAddress, nonce, deadline) signature for the Redemptions " +
      "contract (EIP-712 signs the sealed address's keccak256)",
  );

/** A clear shielded address, as a caller names it: what it is, the domain checks (network, form, checksum). */
const clearAddress = z.string().min(1).max(1024);

export const redeemBody = z
  .strictObject({
    amount: z.union([zsdNumber, zsdDecimal]).describe("ZSD to burn, as a number or a decimal string"),
    withdrawAddress: clearAddress
      .optional()
      .describe(
        "The shielded Zcash address (Sapling or Unified, of this environment's network, in lower case) that receives " +
          "the ZEC, in the clear: the API seals it for `owner` to the bytes GET /v1/redemptions/terms answered for " +
          "this address (`sealedAddress` there), which are what the permit signs and the chain carries",
      ),
    sealedAddress: sealedAddress
      .optional()
      .describe(
        "The shielded Zcash address (Sapling or Unified, of this environment's network, in lower case) sealed to the " +
          "seal key of GET /v1/relay for `owner`: the chain and the request log see only this",
      ),
    owner: address.describe("The holder whose tokens are burned"),
    permit,
  })
  .refine((b) => (b.withdrawAddress === undefined) !== (b.sealedAddress === undefined), {
    message: "exactly one of withdrawAddress (in the clear) and sealedAddress (sealed by the caller)",
    path: ["withdrawAddress"],
  })
  .describe(
    "The owner's signed redemption, naming the address in the clear (withdrawAddress) or sealed (sealedAddress)",
  );

export const redemptionIdParams = z.object({
  id: prefixedId("red", 20, "a redemption id"),
});

const redirectDestination = z.union([
  z
    .object({ withdrawAddress: z.string() })
    .describe("The shielded address the held ZEC goes to, as custody opened it (to the account that asked only)"),
  z
    .object({ sealedAddress: z.string() })
    .describe("The sealed address, as the chain shows it: to an account other than the one that asked"),
  z.object({ noteCommitment: z.string() }),
]);
const redirectStatus = z.enum(["queued", "submitted", "confirmed", "failed"]);
const newPayoutStatus = z
  .enum(["paying", "paid", "held", "redirected", "in_review"])
  .nullable()
  .describe("The new payout's state, when redirected to an address (null into a note: the note is the ZEC)");

const redirectNoteSequence = z
  .string()
  .nullable()
  .describe(
    "The new note's place in the registry's leaf queue, when redirected into a note (GET /v1/deposits/pending " +
      "lists what waits); it is spendable once inserted, usually within seconds",
  );

const redirectOfRedemption = z.object({
  redirectId: z.string(),
  status: redirectStatus,
  destination: redirectDestination,
  txHash: z.string().nullable(),
  newPayoutId: z.string().nullable().describe("The new on-chain payout, when redirected to an address"),
  noteSequence: redirectNoteSequence,
  payoutStatus: newPayoutStatus,
  zcashTxId: z
    .string()
    .nullable()
    .describe("The Zcash transaction that paid the new payout, as zcashd and explorers show it (byte-reversed, no 0x)"),
  failureCode: z.string().nullable(),
  failureReason: z.string().nullable(),
});

export const payoutRefParams = z.object({
  id: z
    .string()
    .regex(
      /^(red_[0-9A-Za-z]{20}|[1-9]\d{0,19})$/,
      "a redemption id (red_…) or an on-chain payout id (a position's or a note withdrawal's payoutId)",
    ),
});

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
    .describe(
      "The payout owner's EIP-712 Redirect(uint256 id, bytes sealedAddress, uint256 noteCommitment, uint256 nonce, " +
        'uint256 deadline) on the Redemptions domain ("ZSD Redemptions", "1"), at the owner\'s nonce ' +
        '(GET /v1/redemptions/terms); sealedAddress is empty ("0x") for a note, noteCommitment 0 for an address',
    ),
};

export const redirectBody = z
  .union([
    z.strictObject({
      sealedAddress: sealedAddress.describe(
        "The shielded address to pay the held ZEC to, sealed to the seal key of GET /v1/relay for the payout's owner",
      ),
      ...signed,
    }),
    z.strictObject({
      noteCommitment: fieldElement.describe(
        "A fresh note's commitment: the held ZEC becomes a new note Poseidon(zatDue, noteCommitment) in the deposit tree",
      ),
      ...signed,
    }),
  ])
  .describe("Exactly one destination: sealedAddress or noteCommitment");

export const payoutRedirectSchema = z
  .object({
    object: z.literal("payout_redirect"),
    redirectId: z.string(),
    payoutId: z.string().describe("The failed on-chain payout whose held ZEC is redirected"),
    owner: z.string().describe("The payout's owner, who signed"),
    destination: redirectDestination,
    status: redirectStatus,
    txHash: z.string().nullable(),
    blockNumber: z.number().int().nullable(),
    newPayoutId: z.string().nullable().describe("The new on-chain payout, when redirected to an address"),
    noteSequence: redirectNoteSequence,
    payoutStatus: newPayoutStatus,
    zcashTxId: z
      .string()
      .nullable()
      .describe(
        "The Zcash transaction that paid the new payout, as zcashd and explorers show it (byte-reversed, no 0x)",
      ),
    zecHeld: z.string().nullable().describe("The ZEC redirected"),
    failureCode: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "PayoutRedirect" });

export const redemptionSchema = z
  .object({
    object: z.literal("redemption"),
    id: z.string(),
    status: z
      .enum(["requested", "burned", "paid", "failed", "redirected"])
      .describe(
        "requested → burned → paid | failed; failed after the burn means custody could not pay: the ZEC is held for " +
          "the owner (zecHeld) until redirected (POST /v1/redemptions/{id}/redirect), then redirected",
      ),
    owner: z.string(),
    amount: z.string(),
    withdrawAddress: z
      .string()
      .describe("The shielded address the ZEC is paid to, as custody opened it from the sealed address"),
    redemptionId: z.string().nullable().describe("The on-chain redemption id once burned"),
    zecDue: z.string().nullable(),
    txHash: z.string().nullable(),
    zcashTxId: z
      .string()
      .nullable()
      .describe("The Zcash transaction that paid the ZEC, as zcashd and explorers show it (byte-reversed, no 0x)"),
    zecHeld: z
      .string()
      .nullable()
      .describe(
        "Custody could not pay: this ZEC is held on-chain for the owner, who redirects it to another shielded " +
          "address or into a note (no ZSD is returned)",
      ),
    redirect: redirectOfRedemption
      .nullable()
      .describe("Where the owner redirected the held ZEC, and how that is going (null until redirected)"),
    settlementTxHash: z
      .string()
      .nullable()
      .describe("The attestor's transaction that marked the redemption paid, or failed (its ZEC held), on-chain"),
    failureCode: z
      .string()
      .nullable()
      .describe(
        "Why the redemption failed or is held up, as a stable code: a contract's refusal in snake case " +
          "(signature_expired, invalid_signature, erc20_insufficient_balance, insufficient_available_collateral, " +
          "price_frozen, enforced_pause, …), nonce_used (another redemption signed at the same owner nonce went " +
          "through), simulation_failed, transaction_reverted, payout_held (custody could not pay: the ZEC is held for " +
          "the owner to redirect), compliance_rejected, payout_failing, payout_in_review " +
          "or unclassified (failed before codes were recorded)",
      ),
    failureReason: z.string().nullable().describe("The failure in words, naming its cause and figures"),
    payout: z
      .object({
        stage: z
          .enum(["confirming", "paying", "settling"])
          .describe(
            "confirming: the burn waits for its blocks before custody pays (a reorganisation must not undo a paid " +
              "burn); paying: custody is sending the ZEC; settling: paid on Zcash (zcashTxId), being marked paid on-chain",
          ),
        confirmations: z
          .number()
          .int()
          .nullable()
          .describe("Blocks the burn has, its own included, up to confirmationsRequired (null when not known)"),
        confirmationsRequired: z
          .number()
          .int()
          .describe("Blocks a burn needs before custody pays it (this relay's PAYOUT_CONFIRMATIONS)"),
      })
      .nullable()
      .describe("While burned: what its payout waits for (null in every other state)"),
    hold: holdSchema
      .nullable()
      .describe(
        "While compliance holds the redemption (or the payout it was redirected to): who, since when, under which alert",
      ),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "Redemption" });

export const termsQuery = z.object({
  owner: address.describe("The ZSD holder who will sign"),
  withdrawAddress: clearAddress
    .optional()
    .describe(
      "The shielded address to be paid, in the clear: the terms then answer it sealed for the owner at their next " +
        "nonce (`sealedAddress`), the bytes to sign, and POST /v1/redeem takes the clear address with that signature",
    ),
});

export const termsSchema = z
  .object({
    object: z.literal("redemption_terms"),
    owner: z.string(),
    nonce: z.string().describe("The owner's next nonce on the Redemptions contract"),
    chainTime: z.number().int().describe("The chain's latest block time (deadlines are judged against it)"),
    suggestedDeadline: z.number().int().describe("chainTime + 1 hour"),
    withdrawAddress: z.string().optional().describe("The address asked for, as it is sealed (canonical form)"),
    sealedAddress: z
      .string()
      .optional()
      .describe(
        "When the terms were asked with a withdrawAddress: that address sealed to custody's current key for this " +
          "owner and nonce, the `sealedAddress` of the message to sign",
      ),
    typedData: z
      .object({
        domain: z.record(z.string(), z.unknown()),
        types: z.record(z.string(), z.unknown()),
        primaryType: z.string(),
      })
      .describe(
        "EIP-712 domain, types and primary type; the message is {owner, amount, minZatOut, sealedAddress, nonce, " +
          "deadline}, " +
          "sealedAddress (bytes) the address sealed to the seal key of GET /v1/relay for this owner",
      ),
    bounds: z
      .record(z.string(), z.string())
      .describe("The bound the permit carries, by typed-data field: which request field names it and what it guards"),
  })
  .meta({ id: "RedemptionTerms" });
