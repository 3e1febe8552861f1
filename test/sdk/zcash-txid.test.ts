// Zcash txids in both byte orders: zcashd, wallets and explorers print a txid
// byte-reversed without 0x (display form); the chain keeps the hash's own
// order as bytes32 (internal form).
import { describe, expect, it } from "vitest";
import { zcashTxIdForDisplay, zcashTxIdFromDisplay } from "@zsd/sdk/zcash";

const internal = `0x${Array.from({ length: 32 }, (_, i) => (i + 1).toString(16).padStart(2, "0")).join("")}`;
const display = Array.from({ length: 32 }, (_, i) => (32 - i).toString(16).padStart(2, "0")).join("");

describe("Zcash txids", () => {
  it("turns the chain's bytes32 into the form explorers show, and back", () => {
    expect(zcashTxIdForDisplay(internal)).toBe(display);
    expect(zcashTxIdFromDisplay(display)).toBe(internal);
    expect(zcashTxIdForDisplay(internal.toUpperCase().replace("0X", "0x"))).toBe(display);
    expect(zcashTxIdFromDisplay(display.toUpperCase())).toBe(internal);
  });

  it("refuses what is not a 32-byte txid in the form it expects", () => {
    expect(() => zcashTxIdForDisplay(display)).toThrow(/bytes32/);
    expect(() => zcashTxIdFromDisplay(internal)).toThrow(/64 hex digits/);
    expect(() => zcashTxIdFromDisplay("ab".repeat(31))).toThrow();
  });
});
