// How many test files run at once. Two keep the machine's two cores busy (the
// suite is bound by CPU: proofs, nodes, indexers); a third made every file
// slower and the run no shorter. Each worker gets a Hardhat node of its own.
export const TEST_WORKERS = Number(process.env.TEST_WORKERS ?? 2);
