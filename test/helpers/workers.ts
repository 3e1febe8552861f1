// How many test files run at once. A file spends much of its time waiting (on blocks, polls, child
// processes starting) and the rest proving: with two at a time a fifth of the two cores sat idle, so
// three share them. Each worker gets a Hardhat node of its own.
export const TEST_WORKERS = Number(process.env.TEST_WORKERS ?? 3);
