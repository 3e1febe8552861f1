// The key table of docs/trust.md against the deployed contracts: every role any address holds,
// read from the grants and revocations since deployment, is one the table lists for that key,
// and every role the table lists is held. The deployer holds none. Permissions that are not roles
// (a contract naming another as its one caller, read from the `msg.sender` checks of the sources)
// are listed too, and each names the key the table says.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { type Abi, type Address, type Hex, keccak256, parseEventLogs, toHex, zeroAddress, zeroHash } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import * as abis from "@zsd/sdk/abis";
import { INSTANCE_OF } from "../../scripts/lib/artifacts.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { type System, deploySystem } from "../helpers/fixtures.ts";

/** The on-chain cells of the table under "## Every key", by key. */
function onChainCells(): Map<string, string> {
  const doc = readFileSync(join(ROOT, "docs", "trust.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Every key"));
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const key = /^`([A-Za-z]+)`$/.exec(cells[1] ?? "")?.[1];
    if (key) rows.set(key, cells[2] ?? "");
  }
  return rows;
}

/** Each key's `Contract.ROLE` items. */
function keyTable(): Map<string, string[]> {
  return new Map(
    [...onChainCells()].map(([key, cell]) => [key, [...cell.matchAll(/`([A-Za-z]+\.[A-Z_]+)`/g)].map((m) => m[1]!)]),
  );
}

/** Each `Contract.name()` item, and the key whose row lists it. */
function namedBy(): Map<string, string> {
  const named = new Map<string, string>();
  for (const [key, cell] of onChainCells()) {
    for (const [, item] of cell.matchAll(/`([A-Za-z]+\.[a-z][A-Za-z]*\(\))`/g)) {
      expect(named.has(item!), `${item} is listed twice`).toBe(false);
      named.set(item!, key);
    }
  }
  return named;
}

/** A deployed contract's ABI (a second instance of a contract has its contract's). */
function abiOf(contract: string): Abi | undefined {
  const name = INSTANCE_OF[contract as keyof typeof INSTANCE_OF] ?? contract;
  return (abis as Record<string, unknown>)[`${name[0]!.toLowerCase()}${name.slice(1)}Abi`] as Abi | undefined;
}
/** Deployed libraries: no ABI of theirs is generated, and they hold and grant no role. */
const LIBRARIES = ["PoseidonT3", "RatioBuckets"];

describe("the key table", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });

  it("lists exactly the roles the deployed contracts grant, by holder; the deployer holds none", async () => {
    const table = keyTable();
    expect(table.size).toBeGreaterThan(10);
    const { deployment } = s;
    const c = deployment.contracts as Record<string, { address: Address; startBlock: number }>;
    const roles = deployment.roles as unknown as Record<string, Address | Address[] | number>;
    // Who each key is on this deployment.
    const holders = new Map<string, string>();
    const name = (address: Address, key: string) => {
      if (!holders.has(address.toLowerCase())) holders.set(address.toLowerCase(), key);
    };
    name(deployment.deployer, "deployer");
    name(zeroAddress, "anyone");
    name(c.StableTimelock!.address, "timelock");
    name(c.StableGovernor!.address, "governor");
    for (const contract of ["StableMinter", "Redemptions", "PositionManager", "CollateralRegistry", "StableToken"])
      name(c[contract]!.address, contract);
    for (const [key, value] of Object.entries(roles)) if (typeof value === "string") name(value, key);

    // Every role any address holds now, from the grants and revocations of every contract with roles.
    const held = new Set<string>();
    for (const [contract, record] of Object.entries(c)) {
      const abi = abiOf(contract);
      if (LIBRARIES.includes(contract)) continue;
      expect(abi, `no ABI for the deployed ${contract}`).toBeDefined();
      if (!abi!.some((item) => item.type === "event" && item.name === "RoleGranted")) continue;
      const roleNames = new Map<Hex, string>([[zeroHash, "DEFAULT_ADMIN_ROLE"]]);
      for (const item of abi!)
        if (item.type === "function" && /_ROLE$/.test(item.name)) roleNames.set(keccak256(toHex(item.name)), item.name);
      const logs = await s.publicClient.getLogs({ address: record.address, fromBlock: BigInt(record.startBlock) });
      const now = new Map<string, boolean>();
      for (const event of parseEventLogs({ abi: abi!, logs, eventName: ["RoleGranted", "RoleRevoked"] as never })) {
        const { role, account } = (event as unknown as { args: { role: Hex; account: Address } }).args;
        const roleName = roleNames.get(role) ?? role;
        now.set(
          `${contract}.${roleName}|${account.toLowerCase()}`,
          (event as { eventName: string }).eventName === "RoleGranted",
        );
      }
      for (const [entry, isHeld] of now) {
        if (!isHeld) continue;
        const [item, account] = entry.split("|") as [string, string];
        const holder = holders.get(account);
        expect(holder, `${item} is held by ${account}, whom the table does not name`).toBeDefined();
        held.add(`${holder}: ${item}`);
      }
    }
    const listed = new Set([...table].flatMap(([key, items]) => items.map((item) => `${key}: ${item}`)));
    expect([...held].sort()).toEqual([...listed].sort());
    expect([...held].filter((h) => h.startsWith("deployer:"))).toEqual([]);
    // The attestor set is the registry's own list, not a role: the table's attestors are the deployed set.
    expect(table.get("attestors")).toEqual([]);
    expect(await s.read.registry.read.attestors()).toEqual(roles.attestors);
    expect(Number(await s.read.registry.read.attestorThreshold())).toBe(roles.attestorThreshold);
  });

  it("lists every contract that names another as its one caller, and the deployment names the key listed", async () => {
    // The sources' own gates: `msg.sender != x` makes x() (its getter, without the underscore) the one
    // caller of what it guards. A minter's redemptions contract, where it requests payouts, is set once
    // by the admin the same way, and whoever it names takes them.
    const gates = new Set(["StableMinter.redemptions()"]);
    for (const file of readdirSync(join(ROOT, "contracts")).filter((f) => f.endsWith(".sol"))) {
      const source = readFileSync(join(ROOT, "contracts", file), "utf8");
      for (const [, name] of source.matchAll(/msg\.sender != (_?[a-z][A-Za-z]*)\b/g)) {
        gates.add(`${file.replace(/\.sol$/, "")}.${name!.replace(/^_/, "")}()`);
      }
    }
    expect(gates).toEqual(
      new Set([
        "PositionManager.minter()",
        "PositionManager.redemptions()",
        "Redemptions.minter()",
        "StableMinter.redemptions()",
      ]),
    );
    const named = namedBy();
    expect([...named.keys()].sort()).toEqual([...gates].sort());
    const c = s.deployment.contracts as Record<string, { address: Address }>;
    for (const [item, key] of named) {
      const [contract, getter] = item.replace("()", "").split(".") as [string, string];
      const value = await s.publicClient.readContract({
        address: c[contract]!.address,
        abi: abiOf(contract)!,
        functionName: getter,
      });
      expect(value, `${item} names ${key}`).toBe(c[key]!.address);
    }
  });
});
