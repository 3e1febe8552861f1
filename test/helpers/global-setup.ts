import type { TestProject } from "vitest/node";
import { startHardhatNode } from "../../scripts/lib/hardhat-node.ts";
import { TEST_WORKERS } from "./workers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** One Hardhat node per vitest worker: files in one worker snapshot and revert their node. */
    rpcUrls: string[];
  }
}

export default async function setup(project: TestProject) {
  const nodes = await Promise.all(Array.from({ length: TEST_WORKERS }, () => startHardhatNode()));
  project.provide(
    "rpcUrls",
    nodes.map((node) => node.rpcUrl),
  );
  return async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
}
