// Queued note spends (top-ups and note withdrawals, each a proven call the
// API checked and simulated) carried together by one StableMinter.spendBatch:
// its proofs are checked with one pairing product, each item otherwise as its
// own call. The position relay (./position-relay.ts) says which rows join.
import { type Hex, decodeFunctionData, encodeFunctionData, zeroAddress } from "viem";
import { stableMinterAbi } from "@zsd/sdk";

/** The spendBatch call carrying each of `calls` (topUp or withdrawNote calldata), in order. */
export function spendBatchCall(calls: readonly Hex[]): Hex {
  const proofs = [];
  const items = [];
  for (const data of calls) {
    const call = decodeFunctionData({ abi: stableMinterAbi, data });
    if (call.functionName === "topUp") {
      const [proof, spend, positionId] = call.args;
      proofs.push(proof);
      items.push({ spend, positionId, sealedAddress: "0x" as Hex, owner: zeroAddress });
    } else if (call.functionName === "withdrawNote") {
      const [proof, spend, sealedAddress, owner] = call.args;
      proofs.push(proof);
      items.push({ spend, positionId: 0n, sealedAddress, owner });
    } else {
      throw new TypeError(`${call.functionName} is not a note spend`);
    }
  }
  return encodeFunctionData({ abi: stableMinterAbi, functionName: "spendBatch", args: [proofs, items] });
}
