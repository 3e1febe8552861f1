// The on-chain data page (docs/reference/on-chain-data.md) against the code: every
// event of every contract, every argument of the ZSD contracts' state-changing
// functions and every webhook's fields has a row saying why it is public, with
// exactly the fields the ABI or the schema has. A new public field fails here
// until the table says why. No event or argument may carry a Zcash address in
// clear text: withdraw addresses are sealed to custody's key.
import { describe, expect, it } from "vitest";
import type { Abi, AbiParameter } from "viem";
import * as abis from "../sdk/js/src/generated/abis.ts";
import { EVENT_PAYLOADS } from "../api/src/http/resources/agents/events.ts";
import { readDoc } from "./helpers/docs.ts";

interface Row {
  names: string[];
  item: string;
  fields: string[];
  why: string;
}

/** The cells of each row of the page's table whose header's first cell is `first`. */
function cellsOf(first: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of readDoc("reference/on-chain-data.md").split("\n")) {
    if (!line.startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim().replaceAll("\\", ""));
    if (cells[0] === first) inTable = true;
    else if (inTable && !/^-+$/.test(cells[0]!)) rows.push(cells);
  }
  return rows;
}

const list = (cell: string) => (cell === "(none)" ? [] : cell.split(",").map((f) => f.trim()));

/** A row of the events or the calldata table: contracts, item, fields, why (bold taken off). */
function table(first: "Contracts" | "Contract"): Row[] {
  return cellsOf(first).map(([names, item, fields, why]) => ({
    names: list(names!),
    item: item!,
    fields: list(fields!),
    why: (why ?? "").replaceAll("**", ""),
  }));
}

/** StableMinter for stableMinterAbi. */
const contractName = (exportName: string) => exportName.replace(/Abi$/, "").replace(/^./, (c) => c.toUpperCase());

const CONTRACTS = Object.entries(abis).map(([name, abi]) => ({ name: contractName(name), abi: abi as Abi }));
/** The contracts of this project whose calldata the table lists (the tokens and governor are OpenZeppelin's). */
const CALLDATA_OF = [
  "StableMinter",
  "PositionManager",
  "Redemptions",
  "CollateralRegistry",
  "ZecUsdOracle",
  "PriceFeed",
];

/** A function's arguments, a tuple's fields as tuple.field (a tuple in a tuple as tuple.inner.field). */
const flatten = (inputs: readonly AbiParameter[]): string[] =>
  inputs.flatMap((input) =>
    "components" in input && input.components
      ? flatten(input.components).map((field) => `${input.name}.${field}`)
      : [input.name!],
  );

/** Every (contract, item) the table says, each once. */
function byItem(rows: Row[]) {
  const found = new Map<string, Row>();
  for (const row of rows)
    for (const name of row.names) {
      const key = `${name}.${row.item}`;
      expect(found.has(key), `${key} has two rows`).toBe(false);
      found.set(key, row);
    }
  return found;
}

/** A field named for a Zcash address in clear text. */
const PLAINTEXT_ADDRESS = /withdrawAddress|zcashAddress|zcash_address|payoutAddress/i;

describe("the on-chain data page: what the chain shows", () => {
  it("says why each field of every contract event is public, indexed topics marked", () => {
    const rows = byItem(table("Contracts"));
    expect(rows.size).toBeGreaterThan(40);
    const expected = new Set<string>();
    for (const { name, abi } of CONTRACTS)
      for (const item of abi)
        if (item.type === "event") {
          const key = `${name}.${item.name}`;
          expected.add(key);
          const row = rows.get(key);
          expect(row, `no row for the event ${key}`).toBeDefined();
          expect(row!.fields, `the fields of ${key}`).toEqual(
            item.inputs.map((input) => `${input.name}${input.indexed ? "*" : ""}`),
          );
          expect(row!.why, `why ${key} is public`).not.toBe("");
        }
    expect([...rows.keys()].filter((key) => !expected.has(key))).toEqual([]);
  });

  it("says why each argument of the ZSD contracts' state-changing functions is public", () => {
    const rows = byItem(table("Contract"));
    const expected = new Set<string>();
    for (const { name, abi } of CONTRACTS.filter((c) => CALLDATA_OF.includes(c.name)))
      for (const item of abi)
        if (item.type === "function" && item.stateMutability !== "view" && item.stateMutability !== "pure") {
          const key = `${name}.${item.name}`;
          expected.add(key);
          const row = rows.get(key);
          expect(row, `no row for the calldata of ${key}`).toBeDefined();
          expect(row!.fields, `the arguments of ${key}`).toEqual(flatten(item.inputs));
          expect(row!.why, `why ${key}'s arguments are public`).not.toBe("");
        }
    expect(expected.size).toBeGreaterThan(30);
    expect([...rows.keys()].filter((key) => !expected.has(key))).toEqual([]);
  });

  it("has no Zcash address in clear in any event or argument, and no deposit's own amount; a sealed one says so", () => {
    for (const { name, abi } of CONTRACTS)
      for (const item of abi)
        if (item.type === "event" || item.type === "function")
          for (const field of flatten(item.inputs))
            expect(field, `${name}.${item.name} carries ${field}`).not.toMatch(PLAINTEXT_ADDRESS);
    const sealed = [...table("Contracts"), ...table("Contract")].filter((row) =>
      row.fields.some((f) => /sealedAddress$/.test(f)),
    );
    // Every payout request: PayoutRequested, redeem ×2, redirect ×2, requestPayout, withdrawNote,
    // spendBatch, and the minter's eight releases (redistributeMany's one payout among them).
    expect(sealed.length).toBe(16);
    for (const row of sealed) expect(row.why, `${row.names.join(", ")}.${row.item}`).toMatch(/seal/);
    // A deposit enters the tree by its leaf, with its batch's total only; nothing is left to mark.
    const registry = CONTRACTS.find((c) => c.name === "CollateralRegistry")!.abi;
    const depositItems = registry.filter(
      (i) => (i.type === "event" || i.type === "function") && /deposit/i.test(i.name),
    );
    expect(depositItems.map((i) => ("name" in i ? i.name : "")).sort()).toEqual([
      "DepositsRecorded",
      "depositBatchCount",
      "recordDeposits",
      "totalDepositedZat",
    ]);
    const leaks = [...table("Contracts"), ...table("Contract")].filter((r) => /leak/i.test(r.why));
    expect(leaks).toEqual([]);
  });

  it("lists each webhook's fields and whom it goes to", () => {
    const rows = byItem(
      cellsOf("Event").map(([item, fields, to]) => ({
        names: ["webhook"],
        item: item!,
        fields: list(fields!),
        why: to!,
      })),
    );
    for (const [type, schema] of Object.entries(EVENT_PAYLOADS)) {
      const row = rows.get(`webhook.${type}`);
      expect(row, `no row for the webhook ${type}`).toBeDefined();
      expect(row!.fields, `the fields of ${type}`).toEqual(Object.keys(schema.shape));
      expect(row!.why, `whom ${type} goes to`).not.toBe("");
    }
    expect(rows.size).toBe(Object.keys(EVENT_PAYLOADS).length);
  });
});
