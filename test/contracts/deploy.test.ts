import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createPublicClient, http } from "viem";
import { describe, expect, it } from "vitest";
import { redemptionsAbi } from "@zsd/sdk/abis";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import { type DeployedSystem, deploy, resolveSealKey } from "../../scripts/deploy.ts";
import { DEPLOYMENTS_DIR } from "../../scripts/lib/paths.ts";
import { accounts } from "../helpers/fixtures.ts";
import { workerRpcUrl } from "../helpers/node-url.ts";

const roles = {
  custody: accounts.custody.address,
  attestors: accounts.attestors.map((a) => a.address),
  attestorThreshold: 2,
  oracleUpdater: accounts.oracleUpdater.address,
  secondaryOracleUpdater: accounts.secondaryOracleUpdater.address,
  pauser: accounts.pauser.address,
  guardian: accounts.guardian.address,
  governanceHolder: accounts.deployer.address,
};

describe("deploy", () => {
  it("writes deployments/<network>.json with chain id, addresses, start blocks and the seal key", async () => {
    const rpcUrl = workerRpcUrl();
    const network = `test-${process.pid}`;
    const path = join(DEPLOYMENTS_DIR, `${network}.json`);
    try {
      const returned = await deploy({
        network,
        rpcUrl,
        deployer: accounts.deployer,
        roles,
      });
      expect(existsSync(path)).toBe(true);
      const written = JSON.parse(readFileSync(path, "utf8")) as DeployedSystem;
      expect(written).toEqual(JSON.parse(JSON.stringify(returned)));
      expect(written.chainId).toBe(31337);
      // A local chain gets the public development key unless told otherwise.
      expect(written.sealKey).toEqual({ keyId: DEV_SEAL_KEY.keyId, publicKey: DEV_SEAL_KEY.publicKey });
      const client = createPublicClient({ transport: http(rpcUrl) });
      const head = Number(await client.getBlockNumber());
      for (const [name, record] of Object.entries(written.contracts)) {
        expect(await client.getCode({ address: record.address }), name).toMatch(/^0x[0-9a-f]{20,}/);
        expect(record.startBlock).toBeGreaterThan(0);
        expect(record.startBlock).toBeLessThanOrEqual(head);
      }
    } finally {
      rmSync(path, { force: true });
    }
  });

  it("deploys Redemptions with the seal key it is given, and requires one outside a local chain", async () => {
    const rpcUrl = workerRpcUrl();
    const sealKey = { keyId: 7, publicKey: `0x${"5a".repeat(32)}` as const };
    const deployment = await deploy({
      network: `test-${process.pid}-key`,
      rpcUrl,
      deployer: accounts.deployer,
      roles,
      sealKey,
      write: false,
    });
    expect(deployment.sealKey).toEqual(sealKey);
    const client = createPublicClient({ transport: http(rpcUrl) });
    const redemptions = { address: deployment.contracts.Redemptions.address, abi: redemptionsAbi } as const;
    expect(await client.readContract({ ...redemptions, functionName: "currentSealKeyId" })).toBe(7);
    expect(await client.readContract({ ...redemptions, functionName: "sealKey", args: [7] })).toEqual([
      sealKey.publicKey,
      0n,
    ]);
    expect(() => resolveSealKey(undefined, false)).toThrow(/seal key .* is required outside a local chain/);
    expect(() => resolveSealKey({ keyId: 0, publicKey: sealKey.publicKey }, true)).toThrow(/uint32 above 0/);
    expect(() => resolveSealKey({ keyId: 1, publicKey: `0x${"00".repeat(32)}` }, true)).toThrow(/non-zero/);
    expect(() => resolveSealKey({ keyId: 1, publicKey: "0x1234" }, true)).toThrow(/32-byte/);
  });
});
