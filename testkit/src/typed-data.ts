// The EIP-712 messages of the sealed-address contracts (issue 23): the address
// is `bytes sealedAddress`, which EIP-712 encodes as its keccak256, so a
// signature covers exactly one ciphertext. The SDK's builders still name a
// plaintext address until its side of the change lands; these follow the
// contracts' typehashes and are what the contract tests sign.
import type { Address, Hex } from "viem";

interface Domain {
  chainId: number;
  verifyingContract: Address;
}

/** Where released collateral goes: a sealed address (noteCommitment 0) or a note (sealedAddress "0x"). */
export interface SealedDestination {
  sealedAddress: Hex;
  noteCommitment: bigint;
}

const redemptionsDomain = (domain: Domain) => ({ name: "ZSD Redemptions", version: "1", ...domain }) as const;
const minterDomain = (domain: Domain) => ({ name: "ZSD Minter", version: "1", ...domain }) as const;

export interface SealedRedeemMessage {
  owner: Address;
  amount: bigint;
  sealedAddress: Hex;
  nonce: bigint;
  deadline: bigint;
}

export function sealedRedeemTypedData(domain: Domain, message: SealedRedeemMessage) {
  return {
    domain: redemptionsDomain(domain),
    types: {
      Redeem: [
        { name: "owner", type: "address" },
        { name: "amount", type: "uint256" },
        { name: "sealedAddress", type: "bytes" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Redeem",
    message,
  } as const;
}

export function sealedRedirectTypedData(
  domain: Domain,
  message: { id: bigint; nonce: bigint; deadline: bigint } & SealedDestination,
) {
  return {
    domain: redemptionsDomain(domain),
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

export function sealedWithdrawCollateralTypedData(
  domain: Domain,
  message: { positionId: bigint; amountZat: bigint; nonce: bigint; deadline: bigint } & SealedDestination,
) {
  return {
    domain: minterDomain(domain),
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

export function sealedCloseTypedData(
  domain: Domain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & SealedDestination,
) {
  return { domain: minterDomain(domain), types: { Close: destinationTypes }, primaryType: "Close", message } as const;
}

export function sealedLiquidateTypedData(
  domain: Domain,
  message: { positionId: bigint; nonce: bigint; deadline: bigint } & SealedDestination,
) {
  return {
    domain: minterDomain(domain),
    types: { Liquidate: destinationTypes },
    primaryType: "Liquidate",
    message,
  } as const;
}
