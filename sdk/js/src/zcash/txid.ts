// Zcash transaction ids in their two byte orders. A txid is a double-SHA-256
// style hash that Zcash (like Bitcoin) shows byte-reversed: zcashd's RPC,
// wallets and explorers print the reversed hex without 0x (the display form),
// while the hash's own byte order (the internal form) is what the contracts
// keep as bytes32 (Redemptions.completePayout). The two are easy to mix
// up: a 0x-prefixed internal txid pasted into an explorer finds nothing.

const DISPLAY = /^[0-9a-f]{64}$/;
const INTERNAL = /^0x[0-9a-f]{64}$/;

/** Hex with its bytes in the reverse order. */
const reverseBytes = (hex: string) => (hex.match(/../g) ?? []).reverse().join("");

/** The display form (as zcashd and explorers print it) of an internal txid (bytes32, 0x…). */
export function zcashTxIdForDisplay(internal: string): string {
  const hex = internal.toLowerCase();
  if (!INTERNAL.test(hex)) throw new Error(`not a bytes32 Zcash txid: ${internal}`);
  return reverseBytes(hex.slice(2));
}

/** The internal txid (bytes32, 0x…) of one in display form (as zcashd and explorers print it). */
export function zcashTxIdFromDisplay(display: string): `0x${string}` {
  const hex = display.toLowerCase();
  if (!DISPLAY.test(hex)) throw new Error(`not a Zcash txid (64 hex digits, as zcashd prints it): ${display}`);
  return `0x${reverseBytes(hex)}`;
}
