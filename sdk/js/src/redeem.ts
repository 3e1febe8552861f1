import type { Address, Hex } from "viem";

/** What a holder signs so that a relay can redeem for them (`Redemptions.redeemWithPermit`). */
export interface RedeemMessage {
  owner: Address;
  amount: bigint;
  /**
   * The least ZEC (zatoshi, after the fee) the owner accepts: a relay that sends the permit after the
   * price fell or once redemptions pay pro rata meets `ZatOutBelowMinimum`, and nothing is burned.
   * Usually the quote less a slippage allowance.
   */
  minZatOut: bigint;
  /** The withdraw address sealed to custody's key for this owner (`sealAddress`). */
  sealedAddress: Hex;
  nonce: bigint;
  deadline: bigint;
}

/**
 * The EIP-712 typed data of a redemption, for `signTypedData` and
 * `verifyTypedData`. It covers the sealed Zcash address (EIP-712 signs a
 * `bytes` field's keccak256), which an EIP-2612 permit would not.
 */
export function redeemTypedData(domain: { chainId: number; verifyingContract: Address }, message: RedeemMessage) {
  return {
    domain: { name: "ZSD Redemptions", version: "1", ...domain },
    types: {
      Redeem: [
        { name: "owner", type: "address" },
        { name: "amount", type: "uint256" },
        { name: "minZatOut", type: "uint256" },
        { name: "sealedAddress", type: "bytes" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Redeem",
    message,
  } as const;
}

/**
 * What a failed payout's owner signs so that a relay can redirect its held ZEC
 * (`Redemptions.redirectWithSig`): to another shielded address (sealedAddress,
 * sealed for the payout's owner, noteCommitment 0) or into a note (sealedAddress
 * "0x", its commitment).
 * The nonce is the owner's on Redemptions, shared with redemptions' permits.
 */
export interface RedirectMessage {
  id: bigint;
  sealedAddress: Hex;
  noteCommitment: bigint;
  nonce: bigint;
  deadline: bigint;
}

/** The EIP-712 typed data of a redirect of a failed payout, for `signTypedData` and `verifyTypedData`. */
export function redirectTypedData(domain: { chainId: number; verifyingContract: Address }, message: RedirectMessage) {
  return {
    domain: { name: "ZSD Redemptions", version: "1", ...domain },
    types: {
      Redirect: [
        { name: "id", type: "uint256" },
        { name: "sealedAddress", type: "bytes" },
        { name: "noteCommitment", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Redirect",
    message,
  } as const;
}
