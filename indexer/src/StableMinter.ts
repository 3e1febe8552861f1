import { ponder } from "ponder:registry";
import { mint } from "ponder:schema";

ponder.on("StableMinter:Minted", async ({ event, context }) => {
  const { nullifierHash, recipient, relayer, mintAmount, fee, collateralFloorZat, root } = event.args;
  await context.db.insert(mint).values({
    nullifierHash,
    recipient,
    relayer,
    amount: mintAmount,
    fee,
    collateralFloorZat,
    root,
    blockNumber: event.block.number,
    timestamp: event.block.timestamp,
    txHash: event.transaction.hash,
  });
});
