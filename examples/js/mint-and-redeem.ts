// Mint and redeem in the sandbox with the JS SDK: no proof in your hands.
//
//   ZSD_API_KEY=sk_test_… ZSD_PRIVATE_KEY=0x… npx tsx examples/js/mint-and-redeem.ts
//
// ZSD_PRIVATE_KEY is the wallet that receives the ZSD and signs the
// redemption (any Hardhat development key works on the local chain).
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { Zsd } from "@zsd/sdk/client";

const zsd = new Zsd(process.env.ZSD_API_KEY, { baseUrl: process.env.ZSD_BASE_URL });
const wallet = privateKeyToAccount(process.env.ZSD_PRIVATE_KEY as Hex);

// 1. A note is the deposit's secret: whoever holds it can mint. Keep it (zsd.notes.encode) like a key.
const note = zsd.notes.create();
const deposit = await zsd.sandbox.depositNote(note, "4");
console.log(`deposited ${deposit.amount} ZEC (leaf ${deposit.leafIndex})`);

// 2. Mint: the SDK reads every deposit leaf, proves on this machine, submits, mints and waits.
const mint = await zsd.mint({
  note,
  amount: "100",
  recipient: wallet.address,
  onProgress: (step) => console.log(`  mint: ${JSON.stringify(step)}`),
});
console.log(`minted ${mint.amount} ZSD to ${mint.recipient} in ${mint.txHash}`);

// 3. Redeem: the wallet signs; the relay burns the ZSD and custody pays the ZEC. The SDK sends the address
// sealed to custody's key (GET /v1/relay): the chain and the relay's queue never see it in clear.
const redemption = await zsd.redeem({
  amount: "25",
  withdrawAddress: "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez",
  signer: wallet,
});
console.log(`redeemed ${redemption.amount} ZSD for ${redemption.zecDue} ZEC (Zcash tx ${redemption.zcashTxId})`);
process.exit(0);
