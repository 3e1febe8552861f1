// A wallet that mints and redeems against the contracts itself, with viem and
// no relay: it pays its own gas and no fee. Only the deposit (a shielded
// payment to custody, simulated by the sandbox) and the ZEC payout need the
// operator.
//
//   ZSD_API_KEY=sk_test_… ZSD_PRIVATE_KEY=0x… npx tsx examples/js/wallet-without-relay.ts
//
// DEPLOYMENT_FILE (default deployments/localhost.json) and RPC_URL (default
// http://127.0.0.1:8545) say where the contracts are.
import { readFileSync } from "node:fs";
import { type Hex, createPublicClient, createWalletClient, getContract, http, parseEventLogs, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, redemptionsAbi, sealAddress, stableMinterAbi, stableTokenAbi } from "@zsd/sdk";
import { loadDeployment, zsdChain } from "@zsd/sdk/deployment";
import {
  DepositTree,
  createNote,
  depositLeaf,
  mintRequest,
  noteCommitment,
  positionOwner,
  proveCollateral,
  registryLeaves,
  releaseProver,
  toSolidityProof,
} from "@zsd/sdk/notes";
import { Zsd } from "@zsd/sdk/client";

const deployment = loadDeployment(process.env.DEPLOYMENT_FILE ?? "deployments/localhost.json", [
  "StableToken",
  "CollateralRegistry",
  "StableMinter",
  "Redemptions",
]);
const rpcUrl = process.env.RPC_URL ?? "http://127.0.0.1:8545";
const chain = zsdChain(deployment, rpcUrl);
const account = privateKeyToAccount(process.env.ZSD_PRIVATE_KEY as Hex);
const client = {
  public: createPublicClient({ chain, transport: http(rpcUrl) }),
  wallet: createWalletClient({ account, chain, transport: http(rpcUrl) }),
};
const at = (name: keyof typeof deployment.contracts) => deployment.contracts[name].address as Hex;
const registry = getContract({ address: at("CollateralRegistry"), abi: collateralRegistryAbi, client });
const minter = getContract({ address: at("StableMinter"), abi: stableMinterAbi, client });
const redemptions = getContract({ address: at("Redemptions"), abi: redemptionsAbi, client });
const token = getContract({ address: at("StableToken"), abi: stableTokenAbi, client });
const mined = (hash: Hex) => client.public.waitForTransactionReceipt({ hash });

// 1. The deposit: in the sandbox, custody simulates the shielded payment and records it on-chain.
const note = createNote();
const amountZat = 400_000_000n;
await new Zsd(process.env.ZSD_API_KEY, { baseUrl: process.env.ZSD_BASE_URL }).sandbox.depositNote(note, "4");

// 2. The tree from the registry's events (every deposit and every note the minter added, one by
// one or in batches, in index order, so nothing says which is ours).
const events = await client.public.getContractEvents({
  address: registry.address,
  abi: collateralRegistryAbi,
  fromBlock: BigInt(deployment.contracts.CollateralRegistry.startBlock),
});
const tree = new DepositTree(registryLeaves(events));
if (tree.root !== (await registry.read.root())) throw new Error("the rebuilt tree does not have the registry's root");

// 3. Prove and mint from the wallet itself: no relayer, no fee.
const binding = {
  chainId: BigInt(deployment.chainId),
  minter: minter.address,
  recipient: account.address,
  relayer: zeroAddress,
  fee: 0n,
  mintAmount: 50n * 10n ** 18n,
  // The position's owner: derived from the note, so the note alone can close it later.
  owner: positionOwner(note),
};
const proved = await proveCollateral(
  {
    note,
    amountZat,
    path: tree.path({ leaf: depositLeaf(amountZat, noteCommitment(note)) }),
    collateralFloorZat: 300_000_000n,
    binding,
  },
  { wasm: readFileSync("circuits/build/collateral.wasm"), zkey: readFileSync("circuits/build/collateral.zkey") },
);
await mined(await minter.write.mint([toSolidityProof(proved.proof), mintRequest(proved.publicSignals, binding)]));
console.log(`minted 50 ZSD; balance ${await token.read.balanceOf([account.address])}`);

// 4. Redeem from the wallet: the burn is on-chain; custody pays the ZEC and marks it completed. The
// address goes sealed to custody's key, as governance set it on Redemptions, for this wallet as owner:
// the chain shows only ciphertext.
const withdrawAddress = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const keyId = await redemptions.read.currentSealKeyId();
const [publicKey] = await redemptions.read.sealKey([keyId]);
const sealedAddress = sealAddress(
  { keyId, publicKey },
  { chainId: deployment.chainId, redemptions: redemptions.address, owner: account.address },
  withdrawAddress,
  "testnet",
);
const receipt = await mined(await redemptions.write.redeem([20n * 10n ** 18n, sealedAddress]));
const [requested] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutRequested" });
const id = requested!.args.id;
for (let i = 0; ; i++) {
  const redemption = await redemptions.read.getPayout([id]);
  if (redemption.status === 2) break;
  if (i > 600) throw new Error(`redemption ${id} was not paid`);
  await new Promise((resolve) => setTimeout(resolve, 200));
}
console.log(`redemption ${id} paid in ZEC`);
await releaseProver();
process.exit(0);
