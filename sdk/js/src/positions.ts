import type { Address, Hex } from "viem";

/** The minter's EIP-712 domain: `StableMinter` signs as "ZSD Minter", version 1. */
export interface MinterDomain {
  chainId: number;
  verifyingContract: Address;
}

/**
 * Where released collateral goes: a shielded Zcash address paid by custody,
 * sealed to custody's key for the payout's owner (the position's owner; the
 * liquidator for a liquidation), or a new note leaf `Poseidon(amount,
 * noteCommitment)` (then `sealedAddress` is "0x").
 */
export interface Destination {
  sealedAddress: Hex;
  noteCommitment: bigint;
}

const domainOf = (domain: MinterDomain) => ({ name: "ZSD Minter", version: "1", ...domain }) as const;

/** What a payer signs so that a relay can burn its ZSD against a position's debt (`repayWithSig`). */
export function repayTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; amount: bigint; payer: Address; nonce: bigint; deadline: bigint },
) {
  return {
    domain: domainOf(domain),
    types: {
      Repay: [
        { name: "positionId", type: "uint256" },
        { name: "amount", type: "uint256" },
        { name: "payer", type: "address" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Repay",
    message,
  } as const;
}

/** What the owner signs to take collateral out of a position (`withdrawCollateralWithSig`). */
export function withdrawCollateralTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; amountZat: bigint; nonce: bigint; deadline: bigint } & Destination,
) {
  return {
    domain: domainOf(domain),
    types: {
      WithdrawCollateral: [
        { name: "positionId", type: "uint256" },
        { name: "amountZat", type: "uint256" },
        { name: "sealedAddress", type: "bytes" },
        { name: "noteCommitment", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "WithdrawCollateral",
    message,
  } as const;
}

const destinationTypes = [
  { name: "positionId", type: "uint256" },
  { name: "sealedAddress", type: "bytes" },
  { name: "noteCommitment", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "deadline", type: "uint256" },
] as const;

/** What the owner signs to close a position (`closeWithSig`): the debt is burned from the owner. */
export function closeTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & Destination,
) {
  return { domain: domainOf(domain), types: { Close: destinationTypes }, primaryType: "Close", message } as const;
}

/** What a liquidator signs so that a relay can liquidate with its ZSD (`liquidateWithSig`). */
export function liquidateTypedData(
  domain: MinterDomain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & Destination,
) {
  return {
    domain: domainOf(domain),
    types: { Liquidate: destinationTypes },
    primaryType: "Liquidate",
    message,
  } as const;
}
