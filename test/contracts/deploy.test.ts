import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createPublicClient, http } from "viem";
import { describe, expect, it } from "vitest";
import type { Deployment } from "@zsd/sdk/deployment";
import { deploy } from "../../scripts/deploy.ts";
import { DEPLOYMENTS_DIR } from "../../scripts/lib/paths.ts";
import { accounts } from "../helpers/fixtures.ts";
import { workerRpcUrl } from "../helpers/node-url.ts";

describe("deploy", () => {
  it("writes deployments/<network>.json with chain id, addresses and start blocks", async () => {
    const rpcUrl = workerRpcUrl();
    const network = `test-${process.pid}`;
    const path = join(DEPLOYMENTS_DIR, `${network}.json`);
    try {
      const returned = await deploy({
        network,
        rpcUrl,
        deployer: accounts.deployer,
        roles: {
          attestor: accounts.attestor.address,
          oracleUpdater: accounts.oracleUpdater.address,
          pauser: accounts.pauser.address,
          governanceHolder: accounts.deployer.address,
        },
      });
      expect(existsSync(path)).toBe(true);
      const written = JSON.parse(readFileSync(path, "utf8")) as Deployment;
      expect(written).toEqual(JSON.parse(JSON.stringify(returned)));
      expect(written.chainId).toBe(31337);
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
});
