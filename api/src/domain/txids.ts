// What a holder is shown of a Zcash txid: the display form that zcashd,
// wallets and explorers print (byte-reversed, no 0x). The database and the
// chain keep the internal form (bytes32, 0x…), as Redemptions records it.
import { zcashTxIdForDisplay } from "@zsd/sdk/zcash";

export function displayTxId(internal: string | null | undefined): string | null {
  if (internal == null) return null;
  // A row an operator wrote by hand in another shape is shown as it is rather than refused.
  return /^0x[0-9a-fA-F]{64}$/.test(internal) ? zcashTxIdForDisplay(internal) : internal;
}
