import type { TestProject } from "vitest/node";
import { startHardhatNode } from "../../scripts/lib/hardhat-node.ts";

declare module "vitest" {
  export interface ProvidedContext {
    rpcUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const node = await startHardhatNode();
  project.provide("rpcUrl", node.rpcUrl);
  return async () => {
    await node.stop();
  };
}
