// How the relay packs queued mints into mintBatch transactions: a fixed gas
// budget per item, every batch under the per-transaction cap.
import { describe, expect, it } from "vitest";
import { TX_GAS_CAP } from "../../api/src/adapters/gas.ts";
import { mintBatchGas, packBatches } from "../../api/src/relay/mint-batch.ts";

const withChange = (n: number) => Array.from({ length: n }, (_, i) => ({ change_leaf: String(i + 1), i }));
const withoutChange = (n: number) => Array.from({ length: n }, (_, i) => ({ change_leaf: "0", i }));

describe("mint batches", () => {
  it("gives an item with a change leaf a whole full-depth insertion on top of its own budget", () => {
    expect(mintBatchGas(withoutChange(1))).toBe(750_000n);
    expect(mintBatchGas(withChange(1))).toBe(1_350_000n);
    // The default batch of 16, every item with change, fits one transaction.
    expect(mintBatchGas(withChange(16))).toBe(14_850_000n);
    expect(mintBatchGas(withChange(16))).toBeLessThanOrEqual(TX_GAS_CAP);
  });

  it("splits in order at the batch size, and before the gas cap", () => {
    expect(packBatches(withoutChange(40), 16).map((b) => b.length)).toEqual([16, 16, 8]);
    expect(packBatches(withoutChange(32), 32).map((b) => b.length)).toEqual([32]);
    // With change, 18 fit under 2^24 (16.65M), the 19th does not.
    const packed = packBatches(withChange(32), 32);
    expect(packed.map((b) => b.length)).toEqual([18, 14]);
    for (const batch of packed) expect(mintBatchGas(batch)).toBeLessThanOrEqual(TX_GAS_CAP);
    expect(packed.flat().map((item) => item.i)).toEqual([...Array(32).keys()]);
    expect(packBatches([], 16)).toEqual([]);
  });
});
