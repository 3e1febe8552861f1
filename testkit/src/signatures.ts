import { type Address, type HDAccount, parseSignature } from "viem";
import { type RedeemMessage, redeemTypedData } from "@zsd/sdk";

export async function signRedeem(
  account: HDAccount,
  domain: { chainId: number; verifyingContract: Address },
  message: RedeemMessage,
) {
  const signature = await account.signTypedData(redeemTypedData(domain, message));
  const { r, s, v } = parseSignature(signature);
  return { r, s, v: Number(v) };
}

export async function signPermit(
  account: HDAccount,
  domain: { name: string; chainId: number; verifyingContract: Address },
  message: { owner: Address; spender: Address; value: bigint; nonce: bigint; deadline: bigint },
) {
  const signature = await account.signTypedData({
    domain: { version: "1", ...domain },
    types: {
      Permit: [
        { name: "owner", type: "address" },
        { name: "spender", type: "address" },
        { name: "value", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Permit",
    message,
  });
  const { r, s, v } = parseSignature(signature);
  return { r, s, v: Number(v) };
}
