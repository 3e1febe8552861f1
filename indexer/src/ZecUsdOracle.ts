import { ponder } from "ponder:registry";
import { priceUpdate } from "ponder:schema";
import { updateCollateral } from "./lib/collateral";

ponder.on("ZecUsdOracle:AnswerUpdated", async ({ event, context }) => {
  const { current, roundId, updatedAt } = event.args;
  await context.db.insert(priceUpdate).values({
    roundId,
    price: current,
    updatedAt,
    blockNumber: event.block.number,
    txHash: event.transaction.hash,
  });
  await updateCollateral(context, event.block.number, () => ({ price: current, priceUpdatedAt: updatedAt }));
});
