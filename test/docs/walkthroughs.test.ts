// The guides' walkthroughs run: every curl and every `npx zsd` command in
// them is run against a local stack (chain, indexer, relay API, worker,
// sandbox custody) with its <placeholders> filled from earlier answers (a
// curl's or a command's JSON), and each answer is checked against the
// `# → STATUS {…}` (a curl) or `# → {…}` (a command) line under it. A GET
// whose answer is still on its way (a mint being confirmed) is asked again
// until it matches. The numbers the comments give (the floor, the change, the
// time to confirm) are checked against what the stack did.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseProver } from "@zsd/sdk/notes";
import { createTestDatabase } from "@zsd/testkit";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { freePort } from "../../scripts/lib/hardhat-node.ts";
import { type RunningIndexer, startIndexer } from "../../scripts/lib/indexer-process.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { docPages, readDoc, section } from "../helpers/docs.ts";
import { type System, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RunningApi, eventually, openStorage, startRelayApi } from "../api/helpers.ts";

/** The walkthroughs, by page and heading, in the order a reader follows them. */
const WALKTHROUGHS = [
  { page: "guide/curl.md", heading: "A mint, end to end (sandbox)" },
  { page: "guide/curl.md", heading: "A redemption, end to end (sandbox)" },
  { page: "guide/held-mint.md", heading: "A mint held and released, its position closed (sandbox)" },
];
const GOVERNANCE = { page: "guide/governance.md", heading: "Governance on the sandbox" };
/** Every curl line of every page: each must be a walkthrough's step. */
const CURLS = docPages().reduce((n, page) => n + (readDoc(page).match(/^curl /gm)?.length ?? 0), 0);
const { alice } = accounts;
const CLI = join(ROOT, "sdk", "js", "bin", "zsd.js");

interface Step {
  command: string;
  /** The HTTP status a curl answers; null for a command (which must exit 0). */
  expectedStatus: number | null;
  expected: unknown;
}

/** The first ```sh block under a page's heading. */
function block({ page, heading }: { page: string; heading: string }): string {
  const found = /```sh\n([\s\S]*?)```/.exec(section(readDoc(page), heading));
  if (!found) throw new Error(`no sh block under "${heading}" in docs/${page}`);
  return found[1]!;
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

/** `{"a":"x…",…}` → JSON where "…" stands for any value of its kind and `…` for more keys or items. */
function expectedJson(text: string): unknown {
  return JSON.parse(text.replace(/\{…\}/g, "{}").replace(/\[…\]/g, "[]").replace(/,\s*…/g, ""));
}

/** The lines the walkthroughs run: requests, the CLI's commands, and the key exported for it. */
const RUN = /^(curl |npx zsd |export )/;

function steps(walkthrough: { page: string; heading: string }): Step[] {
  const lines = block(walkthrough).split("\n");
  const found: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "" || line.startsWith("#")) continue;
    // Nothing in a walkthrough goes unrun: a line is a comment or a command the test knows.
    if (!RUN.test(line)) throw new Error(`a walkthrough line the test does not run: ${line}`);
    // A command runs on while a line ends with a backslash or a quote is open.
    let command = line;
    while (command.endsWith("\\") || (command.match(/'/g)?.length ?? 0) % 2 === 1) {
      if (i + 1 >= lines.length) throw new Error(`a walkthrough command with a quote never closed: ${line}`);
      command += `\n${lines[++i]}`;
    }
    if (command.startsWith("export ")) {
      found.push({ command, expectedStatus: null, expected: undefined });
      continue;
    }
    const answer = /^# → (?:(\d{3}) )?(\{.*)$/.exec(lines[++i] ?? "");
    if (!answer || (answer[1] === undefined) !== command.startsWith("npx ")) {
      throw new Error(`no "# → STATUS {…}" (curl) or "# → {…}" (npx zsd) line under: ${command}`);
    }
    let body = answer[2]!;
    while (/^#\s{5,}\S/.test(lines[i + 1] ?? "")) body += lines[++i]!.replace(/^#\s+/, "");
    found.push({
      command,
      expectedStatus: answer[1] === undefined ? null : Number(answer[1]),
      expected: expectedJson(body),
    });
  }
  return found;
}

/** Mismatches between an answer and the page's line, by path ("" when it matches). */
function mismatches(expected: unknown, actual: unknown, path = "$"): string[] {
  if (typeof expected === "string" && expected.includes("…")) {
    const prefix = expected.slice(0, expected.indexOf("…"));
    return typeof actual === "string" && actual.startsWith(prefix) ? [] : [`${path}: ${JSON.stringify(actual)}`];
  }
  if (typeof expected === "number")
    return typeof actual === "number" ? [] : [`${path}: ${JSON.stringify(actual)} is not a number`];
  if (Array.isArray(expected) && !Array.isArray(actual)) return [`${path}: ${JSON.stringify(actual)} is not an array`];
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object") return [`${path}: ${JSON.stringify(actual)} is not an object`];
    return Object.entries(expected).flatMap(([k, v]) =>
      mismatches(v, (actual as Record<string, unknown>)[k], `${path}.${k}`),
    );
  }
  return expected === actual ? [] : [`${path}: ${JSON.stringify(actual)}, the page says ${JSON.stringify(expected)}`];
}

/** A number the walkthrough's comments give, by the words around it. */
function said(pattern: RegExp): string {
  const text = WALKTHROUGHS.map(block).join("\n");
  const found = pattern.exec(text);
  if (!found) throw new Error(`the walkthrough no longer says ${pattern}`);
  return found[1]!;
}

describe("the guides' walkthroughs", () => {
  let s: System;
  let indexer: RunningIndexer;
  let indexerDb: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let dir: string;

  beforeAll(async () => {
    s = await deploySystem();
    dir = mkdtempSync(join(tmpdir(), "zsd-walkthrough-"));
    writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
    // zsd prove rebuilds the deposit tree from GET /v1/deposits/leaves, which the indexer serves. On
    // PostgreSQL it is ready in about half PGlite's time, and it starts while the API does.
    const port = await freePort();
    indexerDb = await createTestDatabase("zsd_walkthrough");
    const ready = startIndexer({
      rpcUrl: s.rpcUrl,
      deploymentFile: join(dir, "deployment.json"),
      databaseUrl: indexerDb.url,
      schema: "zsd_walkthrough",
      port,
    });
    storage = await openStorage("postgres");
    api = await startRelayApi(s, storage.db, { MINT_WAIT_MS: "20000", INDEXER_URL: `http://127.0.0.1:${port}` });
    api.worker!.start();
    indexer = await ready;
  });
  afterAll(async () => {
    await api?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  it("has a request in every curl of the docs, and an answer under each", () => {
    expect(CURLS).toBeGreaterThan(0);
    expect(WALKTHROUGHS.flatMap(steps).filter((step) => step.command.startsWith("curl "))).toHaveLength(CURLS);
  });

  // Every walkthrough in turn, CLI processes, proofs and mints included: 93 s on a loaded host (CI on
  // b7822d1), about a third of that quiet. Slow is not hung: 360 s, not vitest's 120 s.
  const everyStep = { timeout: 360_000 };
  it("runs each request and command as written and gets the answers the guides show", everyStep, async () => {
    // What the wallet side and earlier answers know, by placeholder name.
    const known: Record<string, unknown> = {
      recipient: alice.address,
      owner: alice.address,
      ownerPrivateKey: hardhatPrivateKey(5),
    };
    const env: Record<string, string> = { ZSD_BASE_URL: api.url };
    const stderr: Record<string, string> = {};

    /** Runs `npx zsd …` as the reader's shell would: in the directory its `> file` is written to. */
    async function zsd(argv: string[]): Promise<unknown> {
      const to = argv.indexOf(">");
      const args = to === -1 ? argv.slice(2) : argv.slice(2, to);
      const ran = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...env } });
        let out = "";
        let err = "";
        child.stdout.on("data", (d: Buffer) => (out += d));
        child.stderr.on("data", (d: Buffer) => (err += d));
        child.on("close", (code) => resolve({ code: code ?? -1, stdout: out, stderr: err }));
      });
      expect({ command: argv.join(" "), code: ran.code, stderr: ran.stderr }).toMatchObject({
        command: argv.join(" "),
        code: 0,
      });
      stderr[args[0]!] = ran.stderr;
      if (to !== -1) writeFileSync(join(dir, argv[to + 1]!), ran.stdout);
      return JSON.parse(ran.stdout);
    }

    const fill = (text: string) =>
      text.replace(/<([^<>]+)>/g, (_, name: string) => {
        if (name === "a fresh UUID") return randomUUID();
        // <hold.alertId>: a field of an object an earlier answer gave.
        const value = name
          .split(".")
          .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], known);
        if (value === undefined) throw new Error(`nothing known for <${name}>`);
        return typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value);
      });

    const [minted, redeemed, held] = WALKTHROUGHS.map(steps);
    const all = [...minted!, ...redeemed!];
    // Steps 1 and 2 (a note, its deposit, its proof submitted): the spec's shape runs them again for its proof.
    const first = all.findIndex((step) => step.command.startsWith("npx zsd note new"));
    const submitted = all.findIndex((step) => step.command.includes("/v1/proofs/submit"));
    expect(first).toBeGreaterThan(-1);
    expect(submitted).toBeGreaterThan(first);
    let mintSentAt = 0;
    let confirmedAfter: number | undefined;

    async function runStep(step: Step) {
      const argv = words(fill(step.command), api.secret);
      if (argv[0] === "export") {
        const [name, value] = argv[1]!.split("=");
        env[name!] = value === "$KEY" ? api.secret : value!;
        return;
      }
      if (argv[0] === "npx") {
        const answer = await zsd(argv);
        expect({ step: step.command, mismatches: mismatches(step.expected, answer) }).toEqual({
          step: step.command,
          mismatches: [],
        });
        const { owner: _owner, ...facts } = answer as Record<string, unknown>;
        Object.assign(known, facts);
        return;
      }
      const headers: Record<string, string> = {};
      let body: string | undefined;
      let url = "";
      for (let i = 1; i < argv.length; i++) {
        if (argv[i] === "-s") continue;
        if (argv[i] === "-H") {
          const [name, ...value] = argv[++i]!.split(":");
          headers[name!.trim()] = value.join(":").trim();
        } else if (argv[i] === "-d") {
          const data = argv[++i]!;
          // curl's -d @file sends the file (what a command wrote with > file).
          body = data.startsWith("@") ? readFileSync(join(dir, data.slice(1)), "utf8") : data;
        } else url = argv[i]!.replace(/^localhost:3000/, api.url);
      }
      const send = () => fetch(url, { method: body === undefined ? "GET" : "POST", headers, body });
      if (url.endsWith("/v1/mint") && body?.includes("proofId")) mintSentAt = Date.now();
      let response = await send();
      let answer = (await response.json()) as Record<string, unknown>;
      // A GET shows a state still moving on: asked again, as a reader would, until it is the page's.
      for (let i = 0; body === undefined && i < 200 && mismatches(step.expected, answer).length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await send();
        answer = (await response.json()) as Record<string, unknown>;
      }
      if (answer.object === "mint" && answer.status === "confirmed") confirmedAfter ??= Date.now() - mintSentAt;
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
    }

    let ran = 0;
    for (const step of all) {
      // The spec's shape mints with the proofHash of another proof: steps 1 and 2 again, as the guide says.
      if (step.command.includes("<proofHash>"))
        for (const again of all.slice(first, submitted + 1)) await runStep(again);
      await runStep(step);
      if (step.command.startsWith("curl ")) ran++;
    }
    // The mint walkthrough's figures, before the held mint's proof and the close answer anew.
    const { collateral } = known;
    const proved = stderr.prove;
    for (const step of held!) {
      await runStep(step);
      if (step.command.startsWith("curl ")) ran++;
    }
    expect(ran).toBe(CURLS);

    // The numbers the comments give: the floor zsd prove proved, the change it told of, the time to confirm.
    const floor = said(/a collateral floor of ([\d.]+) ZEC/);
    const change = said(/the other ([\d.]+) ZEC/i);
    expect(collateral).toBe(floor);
    expect(proved).toContain(`the other ${change} ZEC of the note`);
    expect(proved).toContain(`--note-amount ${change}`);
    expect(Number(floor) + Number(change)).toBe(Number(said(/deposits ([\d.]+) ZEC/)));
    const seconds = Number(said(/confirmed within (\d+) s/));
    expect(confirmedAfter).toBeDefined();
    expect(confirmedAfter!).toBeLessThan(seconds * 1000);
  });

  it("counts a vote made with the governance commands the guide shows", async () => {
    const lines = block(GOVERNANCE).split("\n");
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
      // Voting opens a block after the snapshot: npm start's chain mines one a second, this one on demand. The
      // vote is cast at once, while the proposal is pending: the CLI says so and waits until blocks are mined.
      const voting = line.includes(" vote ");
      const running = governanceCli(words(fill(line), api.secret).slice(2), env);
      if (voting) {
        // Up to a minute: a loaded machine starts the CLI slowly. A CLI that ended instead is reported below.
        const said = await eventually(
          async () => ({ text: running.stderrSoFar(), ended: running.ended() }),
          ({ text, ended }) => ended || /^proposal \d+ is pending: /m.test(text),
          "the CLI waiting for voting to open",
          60_000,
        );
        expect(said).toMatchObject({ ended: false, text: expect.stringMatching(/^proposal \d+ is pending: /m) });
        expect(await s.read.governor.read.state([proposalId!])).toBe(0); // Pending
        // --no-wait: refused at once, as the API refuses it, and nothing is relayed.
        const hasty = await governanceCli(["governance", "vote", String(proposalId), "against", "--no-wait"], env);
        expect(hasty.code).toBe(1);
        expect(hasty.stderr).toMatch(/^zsd: .*is pending; votes are taken while it is active.*proposal_not_active/m);
        await s.mineBlocks(2);
      }
      const result = await running;
      if (voting)
        expect(result.stderr).toMatch(
          // When it opens, once the indexer has the proposal (it trails the chain by a block or so).
          /^proposal \d+ is pending: (voting opens after block \d+ \(.*\)|voting has not opened yet); waiting up to 600 s/m,
        );
      expect({ line, code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({
        line,
        code: 0,
        stderr: "",
      });
      // "…" in the guide stands for any text.
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
  const child = spawn(process.execPath, [join(ROOT, "sdk", "js", "bin", "zsd.js"), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  let ended = false;
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => {
      ended = true;
      resolve({ code: code ?? -1, stdout, stderr });
    }),
  );
  // What it has said so far, while it runs (a command that waits says so on stderr).
  return Object.assign(done, { stderrSoFar: () => stderr, ended: () => ended });
}
