import { describe, expect, it } from "vitest";
import { WEI_PER_ZSD, ZAT_PER_ZEC, formatPrice, formatZec, parseZec, parseZsd, usdValueOfZat } from "@zsd/sdk/units";

describe("units", () => {
  it("values zatoshi in USD with ZSD's 18 decimals: 1 ZEC at $50 is 50 ZSD", () => {
    expect(usdValueOfZat(ZAT_PER_ZEC, 50_00000000n)).toBe(50n * WEI_PER_ZSD);
    expect(usdValueOfZat(1n, 1n)).toBe(100n);
  });

  it("parses and formats ZSD, ZEC and prices", () => {
    expect(parseZsd("100.5")).toBe(100_500_000_000_000_000_000n);
    expect(parseZec("1.5")).toBe(150_000_000n);
    expect(formatZec(1n)).toBe("0.00000001");
    expect(formatPrice(50_25000000n)).toBe("50.25");
  });

  it("refuses more decimals than the unit has instead of rounding", () => {
    // viem's parseUnits rounds: 1.999999999 ZEC would become 2 ZEC, and a sub-wei ZSD amount one wei.
    expect(() => parseZec("1.999999999")).toThrow(/at most 8 decimals/);
    expect(() => parseZec("0.000000009")).toThrow(/at most 8 decimals/);
    expect(() => parseZsd("1.0000000000000000005")).toThrow(/at most 18 decimals/);
    expect(parseZec("1.50000000")).toBe(150_000_000n);
    expect(parseZsd("0.000000000000000001")).toBe(1n);
  });
});
