// The database's clock, for a timestamp written inside a row's JSON that must
// agree with the columns its transaction stamps (now() is the transaction's
// start, the same for every statement in it). Knows no table.
import type { Queryable } from "./index.ts";

export async function transactionNow(tx: Queryable): Promise<Date | string> {
  const [{ now }] = (await tx.query<{ now: Date | string }>("SELECT now() AS now")) as [{ now: Date | string }];
  return now;
}
