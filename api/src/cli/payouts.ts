// npm run payouts -- list [--status review]
// npm run payouts -- resolve --redemption 12 --paid <zcash txid>   (the wallet shows it paid)
// npm run payouts -- resolve --redemption 12 --unpaid              (the wallet shows it was not)
// (the database: see cli/database.ts)
import { parseArgs } from "node:util";
import { openToolDatabase } from "./database.ts";
import { listPayouts, resolveReview } from "../domain/payouts/store.ts";
import { displayTxId } from "../domain/txids.ts";
import { zcashTxIdFromDisplay } from "@zsd/sdk/zcash";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    status: { type: "string" },
    redemption: { type: "string" },
    paid: { type: "string" },
    unpaid: { type: "boolean" },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const { db } = await openToolDatabase();
try {
  switch (positionals[0]) {
    case "list": {
      const rows = await listPayouts(db, values.status);
      for (const p of rows) {
        console.log(
          `${p.redemption_id}  ${p.status}  ${p.zat_due} zat → ${p.withdraw_address ?? "(unreadable sealed address)"}  attempts ${p.attempts}` +
            `${p.operation_id ? `  op ${p.operation_id}` : ""}${p.zcash_txid ? `  txid ${displayTxId(p.zcash_txid)}` : ""}` +
            `${p.last_error ? `  (${p.last_error})` : ""}`,
        );
      }
      break;
    }
    case "resolve": {
      if (!values.redemption || !/^\d+$/.test(values.redemption)) fail("--redemption <on-chain id> is required");
      if (Boolean(values.paid) === Boolean(values.unpaid)) fail("give exactly one of --paid <txid> or --unpaid");
      let txid: `0x${string}` | undefined;
      if (values.paid) {
        // As the wallet shows it (display form, byte-reversed); the chain keeps the internal order.
        const hex = values.paid.replace(/^0x/, "").toLowerCase();
        if (!/^[0-9a-f]{64}$/.test(hex))
          fail("--paid takes the 32-byte Zcash txid in hex, as zcashd and explorers print it");
        txid = zcashTxIdFromDisplay(hex);
      }
      const done = await resolveReview(db, BigInt(values.redemption), txid ? { paid: txid } : { paid: false });
      if (!done) fail(`payout ${values.redemption} is not held for review`);
      console.log(
        txid
          ? `payout ${values.redemption}: paid, to be settled on-chain`
          : `payout ${values.redemption}: to be sent again`,
      );
      break;
    }
    default:
      fail("usage: payouts list [--status STATUS] | resolve --redemption ID (--paid TXID | --unpaid)");
  }
} finally {
  await db.close();
}
