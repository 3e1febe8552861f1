// Queued note spends (top-ups and note withdrawals, each a proven call the
// API checked and simulated) carried together by one StableMinter.spendBatch:
// its proofs are checked with one pairing product, each item otherwise as its
// own call. The position relay (./position-relay.ts) says which rows join.
import { type Hex, decodeFunctionData, encodeFunctionData, zeroAddress } from "viem";
import { stableMinterAbi } from "@zsd/sdk";

/** The note a topUp or withdrawNote call spends: its public signals. */
export function spendOf(call: Hex) {
  const decoded = decodeFunctionData({ abi: stableMinterAbi, data: call });
  if (decoded.functionName !== "topUp" && decoded.functionName !== "withdrawNote") {
    throw new TypeError(`${decoded.functionName} is not a note spend`);
  }
  return decoded.args[1];
}

/**
 * Whether `input` is a spendBatch one of whose items is exactly `call` (its
 * proof, spend, and position or address and owner): the batch executed it.
 */
export function batchCarries(input: Hex, call: Hex): boolean {
  let batch;
  try {
    batch = decodeFunctionData({ abi: stableMinterAbi, data: input });
  } catch {
    return false;
  }
  if (batch.functionName !== "spendBatch") return false;
  const own = spendBatchCall([call]).toLowerCase();
  const [proofs, items] = batch.args;
  return items.some(
    (item, i) =>
      encodeFunctionData({ abi: stableMinterAbi, functionName: "spendBatch", args: [[proofs[i]!], [item]] }) === own,
  );
}

/** The spendBatch call carrying each of `calls` (topUp or withdrawNote calldata), in order. */
export function spendBatchCall(calls: readonly Hex[]): Hex {
  const proofs = [];
  const items = [];
  for (const data of calls) {
    const call = decodeFunctionData({ abi: stableMinterAbi, data });
    if (call.functionName === "topUp") {
      const [proof, spend, positionId, hint] = call.args;
      proofs.push(proof);
      items.push({ spend, positionId, sealedAddress: "0x" as Hex, owner: zeroAddress, hint });
    } else if (call.functionName === "withdrawNote") {
      const [proof, spend, sealedAddress, owner] = call.args;
      proofs.push(proof);
      items.push({ spend, positionId: 0n, sealedAddress, owner, hint: 0n });
    } else {
      throw new TypeError(`${call.functionName} is not a note spend`);
    }
  }
  return encodeFunctionData({ abi: stableMinterAbi, functionName: "spendBatch", args: [proofs, items] });
}
