// `npm start`: the whole stack on one machine with embedded defaults. Today
// that is a local Hardhat chain with the contracts deployed; the indexer and
// the relay API join it as they land.
import { hardhatAccount, LOCAL_ROLES } from "./lib/accounts.ts";
import { startHardhatNode } from "./lib/hardhat-node.ts";
import { deploy, resolveAccounts } from "./deploy.ts";

const port = Number(process.env.CHAIN_PORT ?? 8545);
const node = await startHardhatNode(port);
console.log(`chain:    ${node.rpcUrl} (chain id 31337, Hardhat development accounts)`);

const { deployer, roles } = resolveAccounts({}, true);
const deployment = await deploy({ network: "localhost", rpcUrl: node.rpcUrl, deployer, roles });
console.log("deployed: deployments/localhost.json");
for (const [name, record] of Object.entries(deployment.contracts))
  console.log(`  ${name.padEnd(20)} ${record.address}`);
console.log(`attestor: ${roles.attestor} (Hardhat account #${LOCAL_ROLES.attestor})`);
console.log(`relayer:  ${hardhatAccount(LOCAL_ROLES.relayer).address} (Hardhat account #${LOCAL_ROLES.relayer})`);
console.log("Ctrl-C stops the chain.");

const stop = async () => {
  await node.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
