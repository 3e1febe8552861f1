// Vitest-only helpers: the fixture on the shared node, revert assertions, snapshots.
import { type Hex, BaseError, ContractFunctionRevertedError, decodeErrorResult } from "viem";
import { expect } from "vitest";
import type { DeployParameters } from "../../scripts/deploy.ts";
import { ALL_ERRORS, type System, createSystem } from "@zsd/testkit";
import { workerRpcUrl } from "./node-url.ts";

export * from "@zsd/testkit";

/** The whole system, freshly deployed on this worker's node (global-setup starts them). */
export function deploySystem(parameters: Partial<DeployParameters> = {}): Promise<System> {
  return createSystem(workerRpcUrl(), parameters);
}

/** Asserts that `action` reverts with the custom error `errorName` (and `args` if given). */
export async function expectRevert(action: Promise<unknown>, errorName: string, args?: readonly unknown[]) {
  try {
    await action;
  } catch (error) {
    if (!(error instanceof BaseError)) throw error;
    const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
    // An error raised by another contract down the call (the token, say) is
    // decoded with the errors of every contract of the system.
    const decoded =
      reverted.data ?? (reverted.raw ? decodeErrorResult({ abi: ALL_ERRORS, data: reverted.raw }) : undefined);
    expect(decoded?.errorName, reverted.shortMessage).toBe(errorName);
    if (args) expect(decoded?.args).toEqual(args);
    return;
  }
  throw new Error(`expected a revert with ${errorName}, but the call succeeded`);
}

/**
 * Snapshot after the fixture, revert before each test: every test starts from
 * the freshly deployed system. Call from beforeEach.
 */
export function snapshots(system: () => System) {
  let id: Hex | undefined;
  return async () => {
    if (id) await system().revert(id);
    id = await system().snapshot();
  };
}
