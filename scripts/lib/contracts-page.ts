// The contracts page (docs/reference/contracts.md), made from what solc says of each deployed
// contract in the Hardhat artifacts: its ABI, its NatSpec (the userdoc and devdoc of its metadata)
// and, from the sources' ASTs, which of its members this repository declares. Those are documented
// in full; what a contract only inherits from OpenZeppelin is named, with a pointer to its docs.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { toEventSelector, toFunctionSelector } from "viem";
import type { ContractName } from "@zsd/sdk/deployment";
import { ARTIFACTS_DIR } from "./paths.ts";
import { CONTRACTS, INSTANCE_OF } from "./artifacts.ts";
import { generatedHeader } from "./docs-pages.ts";

interface AbiParameter {
  name: string;
  type: string;
  internalType?: string;
  components?: AbiParameter[];
  indexed?: boolean;
}

interface AbiItem {
  type: "function" | "event" | "error" | "constructor" | "fallback" | "receive";
  name?: string;
  inputs?: AbiParameter[];
  outputs?: AbiParameter[];
  stateMutability?: string;
}

interface Doc {
  notice?: string;
  details?: string;
  params?: Record<string, string>;
  returns?: Record<string, string>;
  return?: string;
}

interface Metadata {
  output: {
    userdoc: {
      notice?: string;
      methods?: Record<string, Doc>;
      events?: Record<string, Doc>;
      errors?: Record<string, Doc[]>;
    };
    devdoc: {
      title?: string;
      details?: string;
      methods?: Record<string, Doc>;
      events?: Record<string, Doc>;
      errors?: Record<string, Doc[]>;
      stateVariables?: Record<string, Doc>;
    };
  };
}

interface AstNode {
  nodeType: string;
  functionSelector?: string;
  eventSelector?: string;
  errorSelector?: string;
  name?: string;
  nodes?: AstNode[];
  [key: string]: unknown;
}

interface BuildInfo {
  output: {
    contracts: Record<string, Record<string, { abi: AbiItem[]; metadata: string }>>;
    sources: Record<string, { ast: AstNode }>;
  };
}

/** A parameter's ABI type as a signature spells it: tuples as their components. */
function canonical(p: AbiParameter): string {
  if (!p.type.startsWith("tuple")) return p.type;
  return `(${(p.components ?? []).map(canonical).join(",")})${p.type.slice("tuple".length)}`;
}

const signature = (item: AbiItem) => `${item.name}(${(item.inputs ?? []).map(canonical).join(",")})`;

/** A parameter as its source declares it: `IStableMinter.MintRequest request`, `uint256[] positionIds`. */
function declared(p: AbiParameter): string {
  const type = (p.internalType ?? p.type).replace(/^(struct|contract|enum) /, "");
  return p.name ? `${type} ${p.name}` : type;
}

/** Prose from NatSpec, safe in VitePress's Markdown: no HTML, no Vue interpolation, on one line. */
function prose(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith("`") ? part : part.replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("{{", "{ {"),
    )
    .join("")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Every selector declared in this repository's own sources (contracts/, mocks aside): functions and
 * the getters of public variables, events and errors, as the AST gives them (hex, no 0x).
 */
function ownSelectors(infos: BuildInfo[]): Set<string> {
  const own = new Set<string>();
  const walk = (node: AstNode) => {
    for (const key of ["functionSelector", "eventSelector", "errorSelector"] as const) {
      const selector = node[key];
      if (typeof selector === "string") own.add(selector);
    }
    for (const child of node.nodes ?? []) walk(child);
  };
  for (const info of infos)
    for (const [path, { ast }] of Object.entries(info.output.sources))
      if (path.startsWith("contracts/") && !path.startsWith("contracts/mocks/")) walk(ast);
  return own;
}

interface Compiled {
  abi: AbiItem[];
  metadata: Metadata;
  info: BuildInfo;
}

const buildInfos = new Map<string, BuildInfo>();

function compiled(name: ContractName): Compiled {
  const source = CONTRACTS[name];
  const artifact = INSTANCE_OF[name] ?? name;
  const dir = join(ARTIFACTS_DIR, source);
  const debug = JSON.parse(readFileSync(join(dir, `${artifact}.dbg.json`), "utf8")) as { buildInfo: string };
  const path = join(dir, debug.buildInfo);
  let info = buildInfos.get(path);
  if (!info) {
    info = JSON.parse(readFileSync(path, "utf8")) as BuildInfo;
    buildInfos.set(path, info);
  }
  const output = info.output.contracts[source]?.[artifact];
  if (!output) throw new Error(`${artifact} is not in ${path}: run npm run compile`);
  return { abi: output.abi, metadata: JSON.parse(output.metadata) as Metadata, info };
}

/** The contracts a deployment holds, each once; linked libraries aside (nobody calls them). */
const DOCUMENTED = (Object.keys(CONTRACTS) as ContractName[]).filter(
  (name) => !INSTANCE_OF[name] && name !== "PoseidonT3" && name !== "RatioBuckets",
);

/** The doc of one member: its user notice, developer details, parameters and return values. */
function memberDoc(user: Doc | undefined, dev: Doc | undefined, item: AbiItem): string[] {
  const lines: string[] = [];
  if (user?.notice) lines.push(prose(user.notice), "");
  if (dev?.details) lines.push(prose(dev.details), "");
  const params = (item.inputs ?? []).filter((p) => p.name && dev?.params?.[p.name]);
  const returns = Object.entries(dev?.returns ?? {});
  if (dev?.return) returns.push(["", dev.return]);
  for (const p of params) lines.push(`- \`${p.name}\`: ${prose(dev!.params![p.name]!)}`);
  for (const [name, text] of returns)
    lines.push(`- returns${/^_\d+$/.test(name) || !name ? "" : ` \`${name}\``}: ${prose(text)}`);
  if (params.length || returns.length) lines.push("");
  return lines;
}

function code(text: string): string[] {
  return ["```solidity", text, "```", ""];
}

function functionText(item: AbiItem): string {
  const inputs = (item.inputs ?? []).map(declared);
  const outputs = (item.outputs ?? []).map(declared);
  const mutability = item.stateMutability === "nonpayable" ? "" : ` ${item.stateMutability}`;
  const head = `function ${item.name}(`;
  const args = inputs.join(", ");
  const tail = `)${mutability}${outputs.length ? ` returns (${outputs.join(", ")})` : ""}`;
  // One parameter a line when the whole would be long: the block stays readable on a phone.
  return `${head}${args}${tail}`.length <= 80 || inputs.length < 2
    ? `${head}${args}${tail}`
    : `${head}\n${inputs.map((p) => `    ${p}`).join(",\n")}\n${tail}`;
}

function contractSection(name: ContractName, own: Set<string>): string[] {
  const { abi, metadata } = compiled(name);
  const user = metadata.output.userdoc;
  const dev = metadata.output.devdoc;
  const instances = (Object.keys(INSTANCE_OF) as ContractName[]).filter((n) => INSTANCE_OF[n] === name);
  const lines = [`## ${name}`, ""];
  lines.push(
    `\`${CONTRACTS[name]}\`${instances.length ? `; also deployed as ${instances.map((n) => `\`${n}\``).join(", ")}` : ""}.`,
    "",
  );
  if (dev.title) lines.push(`**${prose(dev.title)}**`, "");
  if (user.notice) lines.push(prose(user.notice), "");
  if (dev.details) lines.push(prose(dev.details), "");

  // Declared here when a source of contracts/ declares its selector (an interface of ours counts).
  const isOwn = (item: AbiItem) =>
    own.has((item.type === "event" ? toEventSelector : toFunctionSelector)(signature(item)).slice(2));
  const inherited: string[] = [];
  const ownFunctions = abi.filter((item) => {
    if (item.type !== "function") return false;
    if (!isOwn(item)) inherited.push(item.name!);
    return isOwn(item);
  });
  const sorted = (items: AbiItem[]) => [...items].sort((a, b) => signature(a).localeCompare(signature(b)));
  const reads = sorted(ownFunctions.filter((i) => i.stateMutability === "view" || i.stateMutability === "pure"));
  const calls = sorted(ownFunctions.filter((i) => !reads.includes(i)));
  for (const [title, items] of [
    ["Calls", calls],
    ["Reads", reads],
  ] as const) {
    if (items.length === 0) continue;
    lines.push(`### ${name}: ${title.toLowerCase()}`, "");
    for (const item of items) {
      const sig = signature(item);
      const variable = (item.inputs ?? []).length === 0 ? dev.stateVariables?.[item.name!] : undefined;
      lines.push(`#### \`${item.name}\``, "");
      lines.push(...code(functionText(item)));
      lines.push(...memberDoc(user.methods?.[sig], dev.methods?.[sig] ?? variable, item));
    }
  }
  const events = sorted(abi.filter((i) => i.type === "event" && isOwn(i)));
  if (events.length) {
    lines.push(`### ${name}: events`, "");
    for (const item of events) {
      const sig = signature(item);
      const params = (item.inputs ?? []).map(
        (p) => `${declared(p).replace(/ (\w+)$/, p.indexed ? " indexed $1" : " $1")}`,
      );
      lines.push(`#### \`${item.name}\``, "");
      lines.push(...code(`event ${item.name}(${params.join(", ")})`));
      lines.push(...memberDoc(user.events?.[sig], dev.events?.[sig], item));
    }
  }
  const errors = sorted(abi.filter((i) => i.type === "error" && isOwn(i)));
  if (errors.length) {
    lines.push(`### ${name}: errors`, "");
    for (const item of errors) {
      const sig = signature(item);
      lines.push(
        `- \`${sig}\`: ${memberDoc(user.errors?.[sig]?.[0], dev.errors?.[sig]?.[0], item).filter(Boolean).join(" ") || "—"}`,
      );
    }
    lines.push("");
  }
  if (inherited.length)
    lines.push(
      `Inherited from OpenZeppelin Contracts 5 (documented there): ${[...new Set(inherited)]
        .sort()
        .map((n) => `\`${n}\``)
        .join(", ")}.`,
      "",
    );
  return lines;
}

/** The page's Markdown, before Prettier. Needs `npm run compile`'s artifacts. */
export function contractsPage(): string {
  const infos = DOCUMENTED.map((name) => compiled(name).info);
  const own = ownSelectors([...new Set(infos)]);
  return [
    generatedHeader("scripts/codegen-docs.ts", "the contracts' NatSpec in the Hardhat artifacts"),
    "# Contracts",
    "",
    "Every contract a deployment holds, as its NatSpec says it (`npm run compile` writes the artifacts, " +
      "`npm run codegen:docs` this page; `test/docs/contracts-page.test.ts` fails when it is stale). Calls " +
      "change state; reads do not. What a contract only inherits from OpenZeppelin is named at the end of its " +
      "section. What the chain shows of each call, and why it is public: [on-chain data](./on-chain-data.md).",
    "",
    ...DOCUMENTED.flatMap((name) => contractSection(name, own)),
  ].join("\n");
}
