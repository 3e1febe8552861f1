import { inject } from "vitest";

/** The Hardhat node of this vitest worker (global-setup starts one per worker). */
export function workerRpcUrl(): string {
  const urls = inject("rpcUrls");
  // VITEST_POOL_ID numbers the workers from 1 and stays within 1..maxWorkers
  // (a worker's process runs many files; vitest.config.ts sets isolate: false).
  const id = Number(process.env.VITEST_POOL_ID ?? "1");
  const url = urls[(id - 1) % urls.length];
  if (!url) throw new Error(`no Hardhat node for vitest worker ${id}`);
  return url;
}
