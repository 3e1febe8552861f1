import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIGURES, breaksTarget, read, worsening } from "../../bench/figures.ts";

const results = join(import.meta.dirname, "..", "..", "bench", "results");

describe("the benchmark table", () => {
  it("finds every figure and baseline it names in the committed results", () => {
    for (const figure of FIGURES) {
      const file = join(results, figure.file);
      expect(existsSync(file), figure.file).toBe(true);
      const data: unknown = JSON.parse(readFileSync(file, "utf8"));
      expect(read(data, figure.path), `${figure.file} ${figure.path}`).toBeTypeOf("number");
      if (figure.baseline?.path) expect(read(data, figure.baseline.path), figure.baseline.path).toBeTypeOf("number");
    }
  });

  it("calls a figure regressed only when it moved the wrong way past its tolerance", () => {
    const ratio = FIGURES.find((f) => f.id === "api.throughputRatio")!;
    const p99 = FIGURES.find((f) => f.id === "api.supplyP99")!;
    // The drop: 0.50 of bare Express to 0.34, and p99 from 13 ms to 28 ms.
    expect(worsening(ratio, 0.34, 0.5)).toBeGreaterThan(ratio.tolerance);
    expect(breaksTarget(ratio, 0.34)).toBe(true);
    expect(worsening(p99, 28, 13)).toBeGreaterThan(p99.tolerance);
    expect(breaksTarget(p99, 28)).toBe(true);
    // Better, or within tolerance: no regression.
    expect(worsening(ratio, 0.55, 0.5)).toBeLessThan(0);
    expect(worsening(ratio, 0.48, 0.5)).toBeLessThanOrEqual(ratio.tolerance);
    expect(breaksTarget(ratio, 0.5)).toBe(false);
    const gas = FIGURES.find((f) => f.id === "gas.mintTypical")!;
    expect(worsening(gas, 466_271 * 1.03, 466_271)).toBeGreaterThan(gas.tolerance);
    expect(worsening(gas, 466_271 * 1.01, 466_271)).toBeLessThan(gas.tolerance);
  });
});
