import { ponder } from "ponder:registry";
import { account, supply } from "ponder:schema";
import { zeroAddress } from "viem";

ponder.on("StableToken:Transfer", async ({ event, context }) => {
  const { from, to, value } = event.args;
  const block = event.block.number;
  let holders = 0;

  if (from !== zeroAddress) {
    const row = await context.db
      .update(account, { address: from })
      .set((r) => ({ balance: r.balance - value, updatedAtBlock: block }));
    if (value > 0n && row.balance === 0n) holders -= 1;
  }
  if (to !== zeroAddress) {
    const previous = (await context.db.find(account, { address: to }))?.balance ?? 0n;
    const balance = previous + value;
    await context.db
      .insert(account)
      .values({ address: to, balance, updatedAtBlock: block })
      .onConflictDoUpdate({ balance, updatedAtBlock: block });
    if (value > 0n && previous === 0n) holders += 1;
  }

  const minted = from === zeroAddress ? value : 0n;
  const burned = to === zeroAddress ? value : 0n;
  await context.db
    .insert(supply)
    .values({ id: "ZSD", minted, burned, holders, updatedAtBlock: block })
    .onConflictDoUpdate((r) => ({
      minted: r.minted + minted,
      burned: r.burned + burned,
      holders: r.holders + holders,
      updatedAtBlock: block,
    }));
});
