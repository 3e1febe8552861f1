// The deployment manifest loader and the chain definition, without a chain.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_CHAIN_ID, loadDeployment, zsdChain } from "@zsd/sdk/deployment";

const dir = mkdtempSync(join(tmpdir(), "zsd-deployment-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function manifest(content: unknown): string {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const record = { address: "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707", startBlock: 6 };

describe("deployment manifest", () => {
  it("loads what the caller needs and says what is missing or malformed", () => {
    const file = manifest({ chainId: LOCAL_CHAIN_ID, contracts: { StableMinter: record, StableToken: record } });
    expect(loadDeployment(file, ["StableMinter"]).contracts.StableMinter).toEqual(record);

    expect(() => loadDeployment(join(dir, "absent.json"), ["StableMinter"])).toThrow(
      /cannot read the deployment manifest .*absent\.json: run the deploy script first/,
    );
    expect(() => loadDeployment(manifest("{"), ["StableMinter"])).toThrow(/not a deployment manifest \(not JSON\)/);
    expect(() => loadDeployment(manifest({ contracts: {} }), [])).toThrow(/no chainId/);
    expect(() => loadDeployment(file, ["StableMinter", "Redemptions", "CollateralRegistry"])).toThrow(
      /no address and start block for Redemptions, CollateralRegistry\)$/,
    );
    const bad = manifest({ chainId: 1, contracts: { StableMinter: { address: "0x12", startBlock: 1 } } });
    expect(() => loadDeployment(bad, ["StableMinter"])).toThrow(/for StableMinter/);
  });

  it("defines the viem chain of a deployment", () => {
    const chain = zsdChain({ chainId: 5, network: "sepolia" }, "http://node:8545");
    expect(chain).toMatchObject({ id: 5, name: "sepolia", rpcUrls: { default: { http: ["http://node:8545"] } } });
    expect(zsdChain({ chainId: LOCAL_CHAIN_ID }, "http://127.0.0.1:8545").name).toBe("zsd");
  });
});
