// The keeper's queued redistributions (each a redistribute(id, to) row, its
// own sealed envelope) carried together by one StableMinter.redistributeMany:
// one transaction and one payout for every position under 100% a keeper pass
// found. The batch pays to its first row's envelope; the others' are never
// used (custody pays an envelope once, so none is ever sent twice). The
// position relay (./position-relay.ts) says which rows join.
import { type Hex, decodeFunctionData, encodeFunctionData } from "viem";
import { stableMinterAbi } from "@zsd/sdk";

/** The position and destination of a redistribute call. */
function redistributionOf(call: Hex) {
  const decoded = decodeFunctionData({ abi: stableMinterAbi, data: call });
  if (decoded.functionName !== "redistribute") throw new TypeError(`${decoded.functionName} is not a redistribution`);
  const [positionId, to] = decoded.args;
  return { positionId, to };
}

/** The redistributeMany call carrying each of `calls` (redistribute calldata), paid to the first's destination. */
export function redistributeManyCall(calls: readonly Hex[]): Hex {
  const items = calls.map(redistributionOf);
  if (items.length === 0) throw new TypeError("an empty batch");
  return encodeFunctionData({
    abi: stableMinterAbi,
    functionName: "redistributeMany",
    args: [items.map((item) => item.positionId), items[0]!.to],
  });
}

/** Whether `input` is a redistributeMany naming `positionId`: it may have cleared it. */
export function redistributionBatchCarries(input: Hex, positionId: bigint): boolean {
  try {
    const batch = decodeFunctionData({ abi: stableMinterAbi, data: input });
    return batch.functionName === "redistributeMany" && batch.args[0].includes(positionId);
  } catch {
    return false;
  }
}
