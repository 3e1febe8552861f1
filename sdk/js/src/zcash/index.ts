export * from "./address.ts";
export { f4jumble, f4jumbleInverse } from "./f4jumble.ts";
export { zcashTxIdForDisplay, zcashTxIdFromDisplay } from "./txid.ts";
