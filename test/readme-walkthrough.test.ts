// The README's walkthroughs run: every curl in them is sent to a local stack
// (chain, relay API, worker, sandbox custody) with its <placeholders> filled
// from earlier answers or the wallet's side, and each answer is checked
// against the `# → STATUS {…}` line under it. A GET whose answer is still on
// its way (a mint being confirmed) is asked again until it matches.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Hex, parseSignature } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNote, noteCommitment, publicSignalsToArray, releaseProver } from "@zsd/sdk/notes";
import { parseZsd } from "@zsd/sdk/units";
import { ROOT } from "../scripts/lib/paths.ts";
import { type System, ZEC, ZSD, accounts, deploySystem } from "./helpers/fixtures.ts";
import { type RunningApi, json, openStorage, startRelayApi } from "./api/helpers.ts";

const README = readFileSync(join(ROOT, "README.md"), "utf8");
const WALKTHROUGHS = ["### A mint, end to end (sandbox)", "### A redemption, end to end (sandbox)"];
const { alice } = accounts;

interface Step {
  command: string;
  expectedStatus: number;
  expected: unknown;
}

/** The first ```sh block under a heading. */
function block(heading: string): string {
  const after = README.split(heading)[1];
  if (after === undefined) throw new Error(`README has no "${heading}"`);
  return /```sh\n([\s\S]*?)```/.exec(after)![1]!;
}

/** Shell words of a command line, with single and double quotes, backslash-newlines and $KEY. */
function words(command: string, key: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "\\" && command[i + 1] === "\n") {
      i++;
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      word = (word ?? "") + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = command.indexOf('"', i + 1);
      word = (word ?? "") + command.slice(i + 1, end).replaceAll("$KEY", key);
      i = end;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** `{"a":"x…",…}` → JSON where "…" stands for any value of its kind and `…` for more keys. */
function expectedJson(text: string): unknown {
  return JSON.parse(text.replace(/\{…\}/g, "{}").replace(/,\s*…/g, ""));
}

function steps(heading: string): Step[] {
  const lines = block(heading).split("\n");
  const found: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith("curl ")) continue;
    // A command runs on while a line ends with a backslash or a quote is open.
    let command = lines[i]!;
    while (command.endsWith("\\") || (command.match(/'/g)?.length ?? 0) % 2 === 1) command += `\n${lines[++i]}`;
    const answer = /^# → (\d{3}) (.*)$/.exec(lines[++i] ?? "");
    if (!answer) throw new Error(`no "# → STATUS {…}" line under: ${command}`);
    let body = answer[2]!;
    while (/^#\s{5,}\S/.test(lines[i + 1] ?? "")) body += lines[++i]!.replace(/^#\s+/, "");
    found.push({ command, expectedStatus: Number(answer[1]), expected: expectedJson(body) });
  }
  return found;
}

/** Mismatches between an answer and the README's line, by path ("" when it matches). */
function mismatches(expected: unknown, actual: unknown, path = "$"): string[] {
  if (typeof expected === "string" && expected.includes("…")) {
    const prefix = expected.slice(0, expected.indexOf("…"));
    return typeof actual === "string" && actual.startsWith(prefix) ? [] : [`${path}: ${JSON.stringify(actual)}`];
  }
  if (typeof expected === "number")
    return typeof actual === "number" ? [] : [`${path}: ${JSON.stringify(actual)} is not a number`];
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object") return [`${path}: ${JSON.stringify(actual)} is not an object`];
    return Object.entries(expected).flatMap(([k, v]) =>
      mismatches(v, (actual as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return expected === actual ? [] : [`${path}: ${JSON.stringify(actual)}, README says ${JSON.stringify(expected)}`];
}

describe("the README's walkthroughs", () => {
  let s: System;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;

  beforeAll(async () => {
    s = await deploySystem();
    storage = await openStorage("pglite");
    api = await startRelayApi(s, storage.db, { MINT_WAIT_MS: "20000" });
    api.worker!.start();
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    await releaseProver();
  });

  it("has a request in every curl of the README, and an answer under each", () => {
    const all = README.match(/^curl /gm)?.length ?? 0;
    expect(all).toBeGreaterThan(0);
    expect(WALKTHROUGHS.flatMap(steps)).toHaveLength(all);
  });

  it("runs each request as written and gets the answers the README shows", async () => {
    // What the wallet side and earlier answers know, by placeholder name.
    const known: Record<string, unknown> = { recipient: alice.address, owner: alice.address };
    const note = createNote();
    known.noteCommitment = noteCommitment(note).toString();

    /** Values that need work first: a proof bound to the relay's terms, a second proof, a signature. */
    async function prepare(command: string) {
      if (command.includes("<proof>")) {
        const proved = await s.prove({
          note,
          amountZat: 4n * ZEC,
          mintAmount: 100n * ZSD,
          recipient: alice.address,
          relayer: known.relayer as Hex,
          fee: ZSD,
        });
        known.proof = proved.raw.proof;
        known.publicSignals = publicSignalsToArray(proved.raw.publicSignals);
        known.positionOwner = proved.binding.owner;
      }
      if (command.includes("collateralProof")) {
        // The spec's second shape, with a proof of its own: one proof mints once.
        const other = createNote();
        await api.call("/v1/sandbox/deposits", json({ amount: "4", noteCommitment: noteCommitment(other).toString() }));
        const proved = await s.prove({
          note: other,
          amountZat: 4n * ZEC,
          mintAmount: 100n * ZSD,
          recipient: alice.address,
        });
        const submitted = await api.call(
          "/v1/proofs/submit",
          json({
            proof: proved.raw.proof,
            publicSignals: publicSignalsToArray(proved.raw.publicSignals),
            owner: proved.binding.owner,
            mintAmount: "100",
            recipient: alice.address,
          }),
        );
        known.proofHash = ((await submitted.json()) as { proofHash: string }).proofHash;
      }
      if (command.includes("<v>")) {
        const terms = known.terms as { typedData: Record<string, unknown> };
        const body = command.slice(command.indexOf("{"));
        const message = {
          owner: alice.address,
          amount: parseZsd(/"amount": "([\d.]+)"/.exec(body)![1]!),
          withdrawAddress: /"withdrawAddress": "([^"]+)"/.exec(body)![1]!,
          nonce: BigInt(known.nonce as string),
          deadline: BigInt(known.suggestedDeadline as number),
        };
        const signature = await alice.signTypedData({ ...terms.typedData, message } as never);
        const { v, r, s: sigS } = parseSignature(signature);
        Object.assign(known, { v: Number(v), r, s: sigS });
      }
    }

    const fill = (text: string) =>
      text.replace(/<([^<>]+)>/g, (_, name: string) => {
        if (name === "a fresh UUID") return randomUUID();
        if (!(name in known)) throw new Error(`nothing known for <${name}>`);
        const value = known[name];
        return typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value);
      });

    let ran = 0;
    for (const step of WALKTHROUGHS.flatMap(steps)) {
      await prepare(step.command);
      const argv = words(fill(step.command), api.secret);
      const headers: Record<string, string> = {};
      let body: string | undefined;
      let url = "";
      for (let i = 1; i < argv.length; i++) {
        if (argv[i] === "-s") continue;
        if (argv[i] === "-H") {
          const [name, ...value] = argv[++i]!.split(":");
          headers[name!.trim()] = value.join(":").trim();
        } else if (argv[i] === "-d") body = argv[++i];
        else url = argv[i]!.replace(/^localhost:3000/, api.url);
      }
      const send = () => fetch(url, { method: body === undefined ? "GET" : "POST", headers, body });
      let response = await send();
      let answer = (await response.json()) as Record<string, unknown>;
      // A GET shows a state still moving on: asked again, as a reader would, until it is the README's.
      for (let i = 0; body === undefined && i < 200 && mismatches(step.expected, answer).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await send();
        answer = (await response.json()) as Record<string, unknown>;
      }
      expect({ step: step.command, status: response.status }).toEqual({
        step: step.command,
        status: step.expectedStatus,
      });
      expect({ step: step.command, mismatches: mismatches(step.expected, answer) }).toEqual({
        step: step.command,
        mismatches: [],
      });
      if (answer.object === "redemption_terms") known.terms = answer;
      // <owner> is the redeeming holder; a proof's or a position's owner is the note's derived address.
      const { owner: _owner, ...facts } = answer;
      Object.assign(known, facts);
      ran++;
    }
    expect(ran).toBe(README.match(/^curl /gm)!.length);
  });

  it("counts a vote made with the governance commands the README shows", async () => {
    const lines = block("### Governance on the sandbox").split("\n");
    const env: Record<string, string> = { ZSD_API_KEY: api.secret, ZSD_BASE_URL: api.url, ZSD_RPC_URL: s.rpcUrl };
    const known: Record<string, string> = {};
    let proposalId: bigint | undefined;
    let ran = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.replace(/\s+#.*$/, "");
      const exported = /^export (\w+)=(\S+)$/.exec(line);
      if (exported && exported[1] !== "ZSD_API_KEY") env[exported[1]!] = exported[2]!;
      if (!line.startsWith("npx zsd ")) continue;
      const expected = /^# → (.*)$/.exec(lines[i + 1] ?? "");
      if (!expected) throw new Error(`no "# → …" line under: ${line}`);
      const fill = (text: string) => text.replace(/<(\w+)>/g, (_, name: string) => known[name] ?? `<${name}>`);
      // Voting opens a block after the snapshot: npm start's chain mines one a second, this one on demand.
      if (line.includes(" vote ")) await s.mineBlocks(2);
      const result = await governanceCli(words(fill(line), api.secret).slice(2), env);
      expect({ line, code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({
        line,
        code: 0,
        stderr: "",
      });
      // "…" in the README stands for any text.
      const pattern = fill(expected[1]!)
        .split("…")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*?");
      expect(result.stdout.split("\n")[0]).toMatch(new RegExp(`^${pattern}$`));
      const proposed = /^proposal (\d+) /.exec(result.stdout);
      if (proposed) proposalId = BigInt((known.proposalId = proposed[1]!));
      ran++;
    }
    expect(ran).toBe(4);
    // Counted on-chain: the holder's whole supply, for.
    const [against, forVotes, abstain] = await s.read.governor.read.proposalVotes([proposalId!]);
    expect({ against, forVotes, abstain }).toEqual({ against: 0n, forVotes: 1_000_000n * 10n ** 18n, abstain: 0n });
  });
});

/** The built CLI, as `npx zsd` runs it, for the governance walkthrough. */
function governanceCli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "sdk", "js", "bin", "zsd.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
