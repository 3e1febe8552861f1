// How many test files run at once. Most of a file's time is spent waiting (on
// blocks, polls, child processes starting), so two files share the machine's
// two cores well; each worker gets a Hardhat node of its own.
export const TEST_WORKERS = Number(process.env.TEST_WORKERS ?? 2);
