// The indexer's settings (indexer/config.ts), validated without starting Ponder.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IndexerConfigError, loadIndexerConfig } from "../../indexer/config.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

describe("indexer configuration", () => {
  it("has defaults for a local chain", () => {
    const config = loadIndexerConfig({});
    expect(config).toEqual({
      DEPLOYMENT_FILE: join(ROOT, "deployments", "localhost.json"),
      DEPLOYMENT_NETWORK: "localhost",
      RPC_URL: "http://127.0.0.1:8545",
      POLLING_INTERVAL_MS: 100,
      RPC_MAX_REQUESTS_PER_SECOND: 1000,
      PGLITE_DIRECTORY: join(ROOT, "indexer", ".ponder", "pglite"),
    });
  });

  it("reads every variable", () => {
    const config = loadIndexerConfig({
      DEPLOYMENT_FILE: "/tmp/d.json",
      RPC_URL: "https://rpc.example/v1",
      RPC_WS_URL: "wss://rpc.example/ws",
      RPC_BACKENDS: "4",
      POLLING_INTERVAL_MS: "250",
      RPC_MAX_REQUESTS_PER_SECOND: "50",
      DATABASE_URL: "postgresql://u@db/zsd",
      PGLITE_DIRECTORY: "/tmp/pglite",
    });
    expect(config).toMatchObject({
      DEPLOYMENT_FILE: "/tmp/d.json",
      RPC_URL: "https://rpc.example/v1",
      RPC_WS_URL: "wss://rpc.example/ws",
      RPC_BACKENDS: 4,
      POLLING_INTERVAL_MS: 250,
      RPC_MAX_REQUESTS_PER_SECOND: 50,
      DATABASE_URL: "postgresql://u@db/zsd",
      PGLITE_DIRECTORY: "/tmp/pglite",
    });
  });

  it("picks the manifest of DEPLOYMENT_NETWORK", () => {
    expect(loadIndexerConfig({ DEPLOYMENT_NETWORK: "sepolia" }).DEPLOYMENT_FILE).toBe(
      join(ROOT, "deployments", "sepolia.json"),
    );
  });

  it("takes an empty variable as unset", () => {
    const empty = Object.fromEntries(
      [
        "DEPLOYMENT_FILE",
        "DEPLOYMENT_NETWORK",
        "RPC_URL",
        "RPC_WS_URL",
        "RPC_BACKENDS",
        "POLLING_INTERVAL_MS",
        "RPC_MAX_REQUESTS_PER_SECOND",
        "DATABASE_URL",
        "PGLITE_DIRECTORY",
      ].map((name) => [name, ""]),
    );
    expect(loadIndexerConfig(empty)).toEqual(loadIndexerConfig({}));
  });

  it("refuses bad values, naming every bad variable", () => {
    let error: unknown;
    try {
      loadIndexerConfig({
        POLLING_INTERVAL_MS: "abc",
        RPC_URL: "not-a-url",
        RPC_WS_URL: "http://127.0.0.1:8545",
        RPC_BACKENDS: "0",
        RPC_MAX_REQUESTS_PER_SECOND: "-1",
        DATABASE_URL: "mysql://db",
        DEPLOYMENT_NETWORK: "../etc",
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(IndexerConfigError);
    const message = (error as Error).message;
    for (const name of [
      "POLLING_INTERVAL_MS",
      "RPC_URL",
      "RPC_WS_URL",
      "RPC_BACKENDS",
      "RPC_MAX_REQUESTS_PER_SECOND",
      "DATABASE_URL",
      "DEPLOYMENT_NETWORK",
    ])
      expect(message).toMatch(new RegExp(`^  ${name}: `, "m"));
  });
});
