// The guides' walkthroughs run: every curl and every `zsd` command in them is
// run against a local stack (chain, indexer, relay API, worker, sandbox
// custody) with its <placeholders> filled from earlier answers, and each
// answer is checked against the line under it: `# → STATUS {…}` (a curl),
// `# → {…}` (a command printing JSON), or `# → text` (a command's first line;
// `zsd: …`, the error it exits 1 with). A placeholder is the field of that name
// of the nearest answer above it, or the text it stands for in a `# → text`
// line, or one the page's own words define: nothing is filled from what only
// the test knows. A GET whose answer is still on its way (a mint being
// confirmed) is asked again until it matches. The numbers the comments give
// (the floor, the change, the time to confirm) are checked against what the
// stack did. The same stack runs the positions guide's commands, the compliance
// guide's webhook receiver (its code, started as the page says) and the custody
// guide's payouts tool; the deploy guide's commands run against a local node of
// another chain id, standing in for the public testnet.
import { spawn } from "node:child_process";
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseProver } from "@zsd/sdk/notes";
import { createTestDatabase } from "@zsd/testkit";
import { hardhatAccount, hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { SANDBOX_PAYOUT_RETRIES, SANDBOX_REFUSED_ADDRESS } from "../../api/src/sandbox/refused-address.ts";
import { freePort, startHardhatNode } from "../../scripts/lib/hardhat-node.ts";
import { type RunningIndexer, startIndexer } from "../../scripts/lib/indexer-process.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { docPages, readDoc, section } from "../helpers/docs.ts";
import { type System, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";
import { type RelayApi, eventually, openStorage, startRelayApi } from "../api/helpers.ts";

/** The walkthroughs, by page and heading, in the order a reader follows them. */
const WALKTHROUGHS = [
  { page: "guide/curl.md", heading: "A mint, end to end (sandbox)" },
  { page: "guide/curl.md", heading: "A redemption, end to end (sandbox)" },
  { page: "guide/held-mint.md", heading: "A mint held and released, its position closed (sandbox)" },
];
/** The walkthroughs of the zsd CLI, whose commands answer in words. */
const GOVERNANCE = { page: "guide/governance.md", heading: "Governance on the sandbox" };
const REDIRECT = { page: "guide/redirect.md", heading: "Try it in the sandbox" };
const POSITIONS = { page: "guide/positions.md", heading: "Try it in the sandbox" };
/** A receiver started from the page's code, an agent registered at it, a test event. */
const COMPLIANCE = { page: "guide/compliance.md", heading: "Try it in the sandbox" };
/** The operator's payouts tool on payouts held for review. */
const PAYOUTS = { page: "guide/custody.md", heading: "Payouts" };
/** Every walkthrough of the CLI, the receiver and the tools: each is run below. */
const CLI_WALKTHROUGHS = [REDIRECT, POSITIONS, COMPLIANCE, PAYOUTS, GOVERNANCE];
/** Every curl line of every page: each must be a walkthrough's step. */
const CURLS = docPages().reduce((n, page) => n + (readDoc(page).match(/^curl /gm)?.length ?? 0), 0);
const { alice } = accounts;
const CLI = join(ROOT, "sdk", "js", "bin", "zsd.js");

interface Step {
  command: string;
  /** The HTTP status a curl answers; null for a command (which must exit 0). */
  expectedStatus: number | null;
  expected: unknown;
  /** A command's answer in words (its first line), when it does not print JSON. */
  text?: string;
  /** A program of the page started in the background (`NAME=value npx tsx file.ts &`): it answers nothing. */
  background?: boolean;
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
      if (end === -1) throw new Error(`a quote never closed: ${command}`);
      word = (word ?? "") + command.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = command.indexOf('"', i + 1);
      if (end === -1) throw new Error(`a quote never closed: ${command}`);
      word =
        (word ?? "") +
        command
          .slice(i + 1, end)
          .replaceAll("$ZSD_API_KEY", key)
          .replaceAll("$KEY", key);
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

/** The lines the walkthroughs run: requests, the CLI's commands, the payouts tool, what they export for them. */
const RUN = /^(curl |npx zsd |zsd |npm run payouts -- |export )/;
/** A program of the page the reader starts in the background: its environment, and the file its code is saved as. */
const BACKGROUND = /^((?:[A-Z_]+=\S+ )*)npx tsx (\S+\.ts) &$/;

function steps(walkthrough: { page: string; heading: string }): Step[] {
  const lines = block(walkthrough).split("\n");
  const found: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "" || line.startsWith("#")) continue;
    if (BACKGROUND.test(line)) {
      found.push({ command: line, expectedStatus: null, expected: undefined, background: true });
      continue;
    }
    // Nothing in a walkthrough goes unrun: a line is a comment or a command the test knows.
    if (!RUN.test(line)) throw new Error(`a walkthrough line the test does not run: ${line}`);
    // A command runs on while a line ends with a backslash or a quote is open; an export's comment is no part of it.
    let command = line.startsWith("export ") ? line.replace(/\s+#.*$/, "") : line;
    while (command.endsWith("\\") || (command.match(/'/g)?.length ?? 0) % 2 === 1) {
      if (i + 1 >= lines.length) throw new Error(`a walkthrough command with a quote never closed: ${line}`);
      command += `\n${lines[++i]}`;
    }
    if (command.startsWith("export ")) {
      found.push({ command, expectedStatus: null, expected: undefined });
      continue;
    }
    const curl = command.startsWith("curl ");
    const said = /^# → (.*)$/.exec(lines[++i] ?? "");
    const answer = /^(?:(\d{3}) )?(\{.*)$/.exec(said?.[1] ?? "");
    if (!said || (curl && answer?.[1] === undefined) || (!curl && answer?.[1] !== undefined)) {
      throw new Error(`no "# → STATUS {…}" (curl) or "# → {…}" / "# → text" (zsd) line under: ${command}`);
    }
    if (!answer) {
      found.push({ command, expectedStatus: null, expected: undefined, text: said[1]! });
      continue;
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

/** The placeholders of a text: `<name>`, `<field.of.an.answer>`, `<a fresh UUID>`. */
const placeholders = (text: string) => [...text.matchAll(/<([^<>\s][^<>]*)>/g)].map((m) => m[1]!);

/** Keys of an answer, nested ones too: where its fields can fill a later placeholder. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (value !== null && typeof value === "object")
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysOf(inner, into);
    }
  return into;
}

/**
 * The placeholders of a walkthrough none of its earlier answers gives: each must be one its page's
 * words define (`<name>` in the text around the blocks), never one only the test can fill.
 */
function undefinedPlaceholders(walkthrough: { page: string; heading: string }): string[] {
  const prose = readDoc(walkthrough.page).replace(/```[\s\S]*?```/g, "");
  const given = new Set<string>();
  const undefinedOnes: string[] = [];
  for (const step of steps(walkthrough)) {
    for (const name of placeholders(step.command)) {
      const root = name.split(".")[0]!;
      if (name === "a fresh UUID" || given.has(root) || prose.includes(`\`<${name}>\``)) continue;
      undefinedOnes.push(`<${name}> in: ${step.command.split("\n")[0]}`);
    }
    for (const key of keysOf(step.expected)) given.add(key);
    for (const name of placeholders(step.text ?? "")) given.add(name);
  }
  return undefinedOnes;
}

/**
 * A command's `# → text` line as a pattern of its whole line: "…" any text, a known placeholder its value, an
 * unknown one the word it stands for (captured under its name).
 */
function linePattern(text: string, known: Record<string, string>): RegExp {
  const seen = new Set<string>();
  const source = text
    .split(/(…|<[A-Za-z]\w*>)/)
    .map((part) => {
      if (part === "…") return ".*?";
      const name = /^<([A-Za-z]\w*)>$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (known[name] !== undefined) return known[name]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (seen.has(name)) return `\\k<${name}>`;
      seen.add(name);
      return `(?<${name}>\\S+?)`;
    })
    .join("");
  return new RegExp(`^${source}$`);
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
  let api: RelayApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let dir: string;
  /** While the compliance walkthrough runs: the port its receiver listens on. */
  let receiverPort: number | undefined;
  /** Programs the walkthroughs started in the background, stopped at the end. */
  const started: RunningCli[] = [];

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
    // npm start's payout settings: a payment custody's node refuses is held for its owner within seconds.
    api = await startRelayApi(s, storage.db, {
      MINT_WAIT_MS: "20000",
      INDEXER_URL: `http://127.0.0.1:${port}`,
      ...SANDBOX_PAYOUT_RETRIES,
    });
    api.worker!.start();
    indexer = await ready;
  });
  afterAll(async () => {
    for (const program of started) program.stop();
    await api?.close();
    await indexer?.stop();
    await indexerDb?.drop();
    await storage?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await releaseProver();
  });

  /**
   * A curl line run as curl would send it; a GET whose answer is not yet the page's is asked again, as a
   * reader would, until it is.
   */
  async function curl(argv: string[], expected: unknown): Promise<{ status: number; answer: Record<string, unknown> }> {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    let url = "";
    let method: string | undefined;
    for (let i = 1; i < argv.length; i++) {
      if (argv[i] === "-s") continue;
      if (argv[i] === "-X") method = argv[++i];
      else if (argv[i] === "-H") {
        const [name, ...value] = argv[++i]!.split(":");
        headers[name!.trim()] = value.join(":").trim();
      } else if (argv[i] === "-d") {
        const data = argv[++i]!;
        // curl's -d @file sends the file (what a command wrote with > file).
        body = data.startsWith("@") ? readFileSync(join(dir, data.slice(1)), "utf8") : data;
        // The reader's receiver listens on 8080; the test's on a free port, as its API is not on 3000.
        if (receiverPort !== undefined)
          body = body.replaceAll("http://127.0.0.1:8080/", `http://127.0.0.1:${receiverPort}/`);
      } else url = argv[i]!.replace(/^localhost:3000/, api.url);
    }
    const send = () => fetch(url, { method: method ?? (body === undefined ? "GET" : "POST"), headers, body });
    let response = await send();
    let answer = (await response.json()) as Record<string, unknown>;
    for (
      let i = 0;
      method === undefined && body === undefined && i < 200 && mismatches(expected, answer).length > 0;
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await send();
      answer = (await response.json()) as Record<string, unknown>;
    }
    return { status: response.status, answer };
  }

  it("has a request in every curl of the docs, and an answer under each", () => {
    expect(CURLS).toBeGreaterThan(0);
    const all = [...WALKTHROUGHS, ...CLI_WALKTHROUGHS].flatMap(steps);
    expect(all.filter((step) => step.command.startsWith("curl "))).toHaveLength(CURLS);
  });

  it("names where each placeholder comes from: an earlier answer, or the page's own words", () => {
    const [minted, redeemed, held] = WALKTHROUGHS;
    // The redemption walkthrough goes on from the mint's: one page, read in order.
    const chained = { page: minted!.page, heading: redeemed!.heading };
    expect(undefinedPlaceholders(minted!)).toEqual([]);
    const mintKeys = new Set(steps(minted!).flatMap((step) => [...keysOf(step.expected)]));
    expect(undefinedPlaceholders(chained).filter((found) => !mintKeys.has(/^<([^.>]+)/.exec(found)![1]!))).toEqual([]);
    for (const walkthrough of [held!, ...CLI_WALKTHROUGHS]) expect(undefinedPlaceholders(walkthrough)).toEqual([]);
  });

  // Every walkthrough in turn, CLI processes, proofs and mints included: 93 s on a loaded host (CI on
  // b7822d1), about a third of that quiet. Slow is not hung: 360 s, not vitest's 120 s.
  const everyStep = { timeout: 360_000 };
  it("runs each request and command as written and gets the answers the guides show", everyStep, async () => {
    // What the wallet side knows, as the page defines it: the mint's recipient is the sandbox's account #5.
    const intro = section(readDoc("guide/curl.md"), WALKTHROUGHS[0]!.heading);
    expect(intro).toContain(`\`${alice.address}\``);
    const known: Record<string, unknown> = { recipient: alice.address, recipientPrivateKey: hardhatPrivateKey(5) };
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
        // Each field fills the placeholder of its name below, the nearest answer's first.
        Object.assign(known, answer);
        return;
      }
      if (argv.some((word) => word.endsWith("/v1/mint")) && step.command.includes("proofId")) mintSentAt = Date.now();
      const { status, answer } = await curl(argv, step.expected);
      if (answer.object === "mint" && answer.status === "confirmed") confirmedAfter ??= Date.now() - mintSentAt;
      expect({ step: step.command, status }).toEqual({ step: step.command, status: step.expectedStatus });
      expect({ step: step.command, mismatches: mismatches(step.expected, answer) }).toEqual({
        step: step.command,
        mismatches: [],
      });
      if (answer.object === "redemption_terms") known.terms = answer;
      Object.assign(known, answer);
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
    expect(ran).toBe([...minted!, ...redeemed!, ...held!].filter((step) => step.command.startsWith("curl ")).length);

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

  /**
   * A walkthrough of the zsd CLI as the reader runs it: each `export` line sets the command's environment
   * (the key is the test's own), each `zsd` line runs the CLI and its answer is matched against the page's
   * `# → text`, each curl line is sent as curl sends it. `moveChain` acts for the chain's clock while a
   * command waits for it (npm start's chain mines a block a second while in use; this one mines on demand).
   */
  async function runCliWalkthrough(
    walkthrough: { page: string; heading: string },
    moveChain: (args: string[], running: RunningCli, known: Record<string, string>) => Promise<void> = async () => {},
    /** What the page's words say the reader brings (a txid the wallet shows). */
    given: Record<string, string> = {},
  ): Promise<{ known: Record<string, string>; curls: number; commands: number }> {
    const env: Record<string, string> = { ZSD_API_KEY: api.secret, ZSD_BASE_URL: api.url, ZSD_RPC_URL: s.rpcUrl };
    const known: Record<string, string> = { ...given };
    let curls = 0;
    let commands = 0;
    for (const step of steps(walkthrough)) {
      const line = step.command.replace(/\s+#.*$/, "");
      const filled = line.replace(/<(\w+)>/g, (_, name: string) => {
        if (known[name] === undefined) throw new Error(`nothing known for <${name}> in: ${line}`);
        return known[name]!;
      });
      const argv = words(filled, api.secret);
      if (argv[0] === "export") {
        const [name, value] = argv[1]!.split(/=(.*)/s);
        // The reader's key is theirs, the test's is in env; the installed CLI the block puts on the PATH is the one run.
        if (name === "PATH") {
          expect(value).toMatch(/^\$PWD\/node_modules\/\.bin:/);
          expect(existsSync(join(ROOT, "node_modules", ".bin", "zsd"))).toBe(true);
        } else if (name !== "ZSD_API_KEY") env[name!] = value!;
        continue;
      }
      if (step.background) {
        // The page's own code, saved under the repository's root as the reader saves it there (its packages are
        // the root's), started with the line's environment.
        const [, assignments, file] = BACKGROUND.exec(filled)!;
        const code = /```ts\n([\s\S]*?)```/.exec(readDoc(walkthrough.page))?.[1];
        if (code === undefined) throw new Error(`no ts block in docs/${walkthrough.page} to save as ${file}`);
        const saved = join(ROOT, "build", "walkthroughs", randomUUID());
        mkdirSync(saved, { recursive: true });
        writeFileSync(join(saved, file!), code);
        const programEnv = Object.fromEntries(
          assignments!
            .trim()
            .split(/\s+/)
            .filter(Boolean)
            .map((a) => a.split(/=(.*)/s)),
        );
        const program = run(process.execPath, ["--import", "tsx", join(saved, file!)], {
          ...programEnv,
          ...(receiverPort === undefined ? {} : { PORT: String(receiverPort) }),
        });
        started.push(program);
        void program.then(() => rmSync(saved, { recursive: true, force: true }));
        // The reader goes on once it runs: it answers HTTP (any status) on its port.
        const port = receiverPort ?? 8080;
        await eventually(
          async () =>
            program.ended() ||
            (await fetch(`http://127.0.0.1:${port}/`).then(
              () => true,
              () => false,
            )),
          (up) => up,
          `${file} listening on ${port}`,
          60_000,
        );
        expect({ file, ended: program.ended(), stderr: program.stderrSoFar() }).toEqual({
          file,
          ended: false,
          stderr: "",
        });
        continue;
      }
      if (argv[0] === "curl") {
        const { status, answer } = await curl(argv, step.expected);
        expect({ line, status, mismatches: mismatches(step.expected, answer) }).toEqual({
          line,
          status: step.expectedStatus,
          mismatches: [],
        });
        // Each field fills the placeholder of its name below, as in the curl walkthroughs.
        for (const [key, value] of Object.entries(answer))
          if (typeof value === "string" || typeof value === "number") known[key] = String(value);
        curls++;
        continue;
      }
      const payouts = argv[0] === "npm";
      const args = argv[0] === "npx" ? argv.slice(2) : argv.slice(1);
      // The payouts tool runs as the page has it, through npm, on the stack's database.
      const running = payouts
        ? run("npm", argv.slice(1), { DATABASE_URL: storage.url!, LOG_LEVEL: "silent" })
        : cli(args, env);
      await moveChain(args, running, known);
      const result = await running;
      // An answer in words is the first line printed; a `zsd: …` one is the error the command exits 1 with.
      const failing = step.text!.startsWith("zsd: ");
      const pattern = linePattern(step.text!, known);
      // npm's own lines (the scripts it runs, "> …") are not the tool's answer.
      const printed = result.stdout.split("\n").filter((l) => !payouts || (l !== "" && !l.startsWith("> ")));
      const lines = failing ? result.stderr.split("\n").filter((l) => l.startsWith("zsd: ")) : [printed[0] ?? ""];
      expect({ line, code: result.code, stderr: result.code === (failing ? 1 : 0) ? "" : result.stderr }).toEqual({
        line,
        code: failing ? 1 : 0,
        stderr: "",
      });
      const matched = lines.map((l) => pattern.exec(l)).find((m) => m !== null);
      expect({ line, answer: lines.join("\n"), matches: matched !== undefined }).toEqual({
        line,
        answer: lines.join("\n"),
        matches: true,
      });
      Object.assign(known, matched!.groups ?? {});
      commands++;
    }
    return { known, curls, commands };
  }

  it("redirects a payout custody refused with the commands the redirect guide shows", everyStep, async () => {
    // The guide names the sandbox's failing-payout address whole, and the wallet of the cheat sheet.
    expect(block(REDIRECT)).toContain(`--to ${SANDBOX_REFUSED_ADDRESS}`);
    expect(block(REDIRECT)).toContain(`export ZSD_PRIVATE_KEY=${hardhatPrivateKey(5)}`);
    const payable = /^zsd redirect <id> --to (\S+)/m.exec(block(REDIRECT))![1]!;
    const { known, commands } = await runCliWalkthrough(REDIRECT);
    expect(commands).toBe(5);
    const redemption = (await (await api.call(`/v1/redemptions/${known.id}`)).json()) as {
      status: string;
      redemptionId: string;
      redirect: { newPayoutId: string; payoutStatus: string; zcashTxId: string } | null;
    };
    // Held after three refusals by custody's node (npm start's retries), redirected, and the new payout paid.
    expect(redemption).toMatchObject({ status: "redirected", redirect: { payoutStatus: "paid" } });
    const [row] = await storage.db.query<{ status: string; attempts: number; last_error: string }>(
      "SELECT status, attempts, last_error FROM payouts WHERE redemption_id = $1",
      [redemption.redemptionId],
    );
    expect(row).toMatchObject({ status: "redirected", attempts: Number(SANDBOX_PAYOUT_RETRIES.PAYOUT_MAX_ATTEMPTS) });
    expect(row!.last_error).toContain(SANDBOX_REFUSED_ADDRESS);
    expect((await s.read.redemptions.read.getPayout([BigInt(redemption.redemptionId)])).status).toBe(4);
    const zcash = api.zcash.simulator.ledger;
    expect(zcash.notesOf(SANDBOX_REFUSED_ADDRESS)).toEqual([]);
    const due = (await s.read.redemptions.read.getPayout([BigInt(redemption.redirect!.newPayoutId)])).zatDue;
    expect(zcash.notesOf(payable).map((n) => n.amountZat)).toContain(due);

    // --to note, the guide's other way: the held ZEC becomes a fresh note, told before anything is sent.
    const wallet = { ZSD_API_KEY: api.secret, ZSD_BASE_URL: api.url, ZSD_PRIVATE_KEY: hardhatPrivateKey(5) };
    const refused = await cli(["redeem", "--amount", "1", "--to", SANDBOX_REFUSED_ADDRESS], wallet);
    expect(refused.code).toBe(1);
    const id = /^its ZEC is held for you: zsd redirect (red_\w{20}) --to ZADDR\|note$/m.exec(refused.stderr)?.[1];
    expect(id, refused.stderr).toBeDefined();
    const intoNote = await cli(["redirect", id!, "--to", "note", "--json"], wallet);
    expect([intoNote.code, intoNote.stderr]).toEqual([0, expect.stringMatching(/^new note, for the released ZEC/m)]);
    const told = /^new note, for the released ZEC \(keep it secret\): (zsdnote1\w+)$/m.exec(intoNote.stderr)![1]!;
    expect(JSON.parse(intoNote.stdout)).toMatchObject({
      object: "payout_redirect",
      status: "confirmed",
      note: told,
      noteSequence: expect.stringMatching(/^\d+$/),
      zecHeld: "0.0199",
    });
  });

  it(
    "opens, tops up, repays, draws on and closes a position with the commands the positions guide shows",
    everyStep,
    async () => {
      // The wallet of the cheat sheet repays; the owner's key is the note's, which zsd derives.
      expect(block(POSITIONS)).toContain(`export ZSD_PRIVATE_KEY=${hardhatPrivateKey(5)}`);
      const payable = /--to (ztestsapling\w+)/.exec(block(POSITIONS))![1]!;
      const zcash = api.zcash.simulator.ledger;
      const paidBefore = zcash.notesOf(payable).length;
      const { known, commands } = await runCliWalkthrough(POSITIONS);
      expect(commands).toBe(11);
      const position = (await (await api.call(`/v1/positions/${known.positionId}`)).json()) as Record<string, unknown>;
      expect(position).toMatchObject({ status: "closed", debt: "0" });
      // The ZEC taken out and the ZEC the close released, each paid to the address as its own payout.
      const paid = await eventually(
        async () =>
          zcash
            .notesOf(payable)
            .slice(paidBefore)
            .map((n) => n.amountZat),
        (amounts) => amounts.length >= 2,
        "the withdrawal's and the close's payouts paid",
        60_000,
      );
      expect(paid.sort((a, b) => (a < b ? -1 : 1))).toEqual([50_000_000n, 360_000_000n]);
    },
  );

  it("delivers a test event to the compliance guide's receiver, which verifies its signature", everyStep, async () => {
    // The register request the page shows first is the one its walkthrough sends (the webhook aside).
    const shown = /```text\nPOST \/v1\/agents\/register\n(\{.*\})\n→ 201 (\{.*\})/.exec(readDoc(COMPLIANCE.page));
    expect(shown).not.toBeNull();
    const register = steps(COMPLIANCE).find((step) => step.command.includes("/v1/agents/register"))!;
    const argv = words(register.command, api.secret);
    const sent = JSON.parse(argv[argv.indexOf("-d") + 1]!) as Record<string, unknown>;
    expect({ ...sent, webhookUrl: "" }).toEqual({ ...(JSON.parse(shown![1]!) as object), webhookUrl: "" });
    expect(expectedJson(shown![2]!)).toEqual(register.expected);

    receiverPort = await freePort();
    // npm start runs the webhook worker beside the API; this stack starts it for this test, the one that needs it.
    api.webhooks.start();
    try {
      const receiversBefore = started.length;
      const { known, curls } = await runCliWalkthrough(COMPLIANCE);
      expect(curls).toBe(2);
      expect(started).toHaveLength(receiversBefore + 1);
      const receiver = started.at(-1)!;
      // The receiver prints the event's type and id once it verified the signature, and answers 204.
      const said = await eventually(
        async () => ({ out: receiver.stdoutSoFar(), err: receiver.stderrSoFar(), ended: receiver.ended() }),
        ({ out, ended }) => ended || out.includes(`ping ${known.eventId}`),
        "the receiver's line",
        60_000,
      );
      expect(said).toMatchObject({ ended: false, out: expect.stringContaining(`ping ${known.eventId}\n`) });
      // The worker records the 204 after the receiver has printed its line: on a busy machine, a moment after.
      const delivery = await eventually(
        async () => {
          const deliveries = (await (await api.call(`/v1/agents/${known.agentId}/deliveries`)).json()) as {
            data: { eventId: string; status: string; lastResponseStatus: number | null }[];
          };
          return deliveries.data.find((d) => d.eventId === known.eventId);
        },
        (found) => found !== undefined && found.status !== "pending",
        "the delivery's outcome recorded",
        30_000,
      );
      expect(delivery).toMatchObject({
        status: "succeeded",
        lastResponseStatus: 204,
      });
      receiver.stop();
    } finally {
      receiverPort = undefined;
    }
  });

  it("settles payouts held for review with the payouts tool as the custody guide runs it", everyStep, async () => {
    const sim = api.zcash.simulator;
    const payable = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
    const statusOf = async (id: bigint) =>
      (
        await storage.db.query<{ status: string }>("SELECT status FROM payouts WHERE redemption_id = $1", [String(id)])
      )[0]?.status;
    // Nothing else in flight: each fault below meets its own payout.
    const quiet = () =>
      eventually(
        async () =>
          (
            await storage.db.query<{ n: string | number }>(
              "SELECT count(*) AS n FROM payouts WHERE status IN ('pending', 'sending', 'sent', 'settling', 'failing')",
            )
          )[0]!.n,
        (n) => Number(n) === 0,
        "no payout in flight",
        60_000,
      );
    const held = async (fault: () => void) => {
      await quiet();
      fault();
      await s.receipt(await s.as(alice).redemptions.write.redeem([1n * ZSD, s.seal(payable, alice.address)]));
      const id = await s.read.redemptions.read.payoutCount();
      await eventually(
        () => statusOf(id),
        (status) => status === "review",
        `payout ${id} in review`,
        60_000,
      );
      return id;
    };
    // The wallet took the payment, but its answer was lost; then one whose operation failed once built.
    const lost = await held(() => (sim.knobs.dropNextSendAnswer = true));
    const failed = await held(() => (sim.knobs.failNextSend = "SendTransaction: Transaction commit failed"));

    // The operator finds the lost payment in the wallet: the operation whose memo names the redemption, once the
    // wallet reports it done (zcashd's z_getoperationstatus, asked until it says "success").
    const { ZCASHD_RPC_URL, ZCASHD_RPC_USER, ZCASHD_RPC_PASSWORD } = api.zcash.env;
    type Operation = { status: string; params: { amounts: { memo?: string }[] }; result?: { txid: string } };
    const operations = async () => {
      const answer = await fetch(ZCASHD_RPC_URL!, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${ZCASHD_RPC_USER}:${ZCASHD_RPC_PASSWORD}`).toString("base64")}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ jsonrpc: "1.0", id: 1, method: "z_getoperationstatus", params: [] }),
      });
      return ((await answer.json()) as { result: Operation[] }).result;
    };
    // A memo is 512 bytes, its text padded with zeros.
    const memo = (o: Operation) =>
      Buffer.from(o.params.amounts[0]?.memo ?? "", "hex")
        .toString()
        .replace(/\0+$/, "");
    const paidBy = await eventually(
      async () => (await operations()).find((o) => memo(o) === `zsd-redemption:${lost}`),
      (o) => o?.status === "success",
      `the wallet's operation for payout ${lost}`,
      30_000,
    );
    const txid = paidBy!.result!.txid;
    expect(txid).toMatch(/^[0-9a-f]{64}$/);

    // <txid> is the page's: the payment's txid as the wallet prints it.
    expect(readDoc(PAYOUTS.page)).toContain("`<txid>` is the payment's Zcash txid as the wallet prints it");
    const { known, commands } = await runCliWalkthrough(PAYOUTS, async () => {}, { txid });
    expect(commands).toBe(4);
    // N and M as the list named them, the lost payout first.
    expect([known.N, known.M]).toEqual([String(lost), String(failed)]);
    // Settled on-chain with the wallet's txid; the other sent again, paid and settled.
    expect(
      await eventually(
        () => statusOf(lost),
        (status) => status === "completed",
        "the paid one settled",
        60_000,
      ),
    ).toBe("completed");
    expect(
      await eventually(
        () => statusOf(failed),
        (status) => status === "completed",
        "the other paid",
        60_000,
      ),
    ).toBe("completed");
    expect((await s.payoutCompleted(lost))!.zcashTxId).toBe(`0x${Buffer.from(txid, "hex").reverse().toString("hex")}`);
  });

  it(
    "changes a parameter with the governance commands the guide shows: proposed, voted, queued, executed",
    everyStep,
    async () => {
      const g = s.read.governor;
      const holdsOn = async (running: RunningCli, pattern: RegExp, what: string) => {
        // Up to a minute: a loaded machine starts the CLI slowly. A CLI that ended instead is reported below.
        const told = await eventually(
          async () => ({ text: running.stderrSoFar(), ended: running.ended() }),
          ({ text, ended }) => ended || pattern.test(text),
          what,
          60_000,
        );
        expect(told).toMatchObject({ ended: false, text: expect.stringMatching(pattern) });
      };
      const before = await s.read.positions.read.minCollateralRatioBps();
      const { known, curls, commands } = await runCliWalkthrough(GOVERNANCE, async (args, running, known) => {
        const [, sub] = args;
        if (!["vote", "queue", "execute"].includes(sub!)) return;
        const id = BigInt(known.proposalId!);
        const env = { ZSD_API_KEY: api.secret, ZSD_BASE_URL: api.url, ZSD_PRIVATE_KEY: hardhatPrivateKey(0) };
        if (sub === "vote") {
          // Voting opens a block after the snapshot. The vote is cast at once, while the proposal is pending: the
          // CLI says so and waits until blocks are mined.
          await holdsOn(running, /^proposal \d+ is pending: /m, "the CLI waiting for voting to open");
          expect(await g.read.state([id])).toBe(0); // Pending
          // --no-wait: refused at once, as the API refuses it, and nothing is relayed.
          const hasty = await cli(["governance", "vote", String(id), "against", "--no-wait"], env);
          expect(hasty.code).toBe(1);
          expect(hasty.stderr).toMatch(/^zsd: .*is pending; votes are taken while it is active.*proposal_not_active/m);
          await s.mineBlocks(2);
          return;
        }
        if (sub === "queue") {
          // Voting lasts 20 blocks: the CLI says when it ends and waits; the blocks are mined here.
          await holdsOn(
            running,
            /^proposal \d+ is active: voting ends after block \d+.*; waiting up to 600 s/m,
            "the CLI waiting for voting to end",
          );
          const hasty = await cli(["governance", "queue", String(id), "--no-wait"], env);
          expect([hasty.code, hasty.stderr]).toEqual([1, expect.stringMatching(/^zsd: .*proposal_not_succeeded/m)]);
          const end = await g.read.proposalDeadline([id]);
          await s.mineBlocks(Number(end - (await s.publicClient.getBlockNumber())) + 1);
          return;
        }
        // The timelock's minute: the CLI says until when and waits; the chain's clock is moved on here.
        await holdsOn(
          running,
          /^proposal \d+ is queued in the timelock until \S+; waiting up to 600 s/m,
          "the CLI waiting for the eta",
        );
        const hasty = await cli(["governance", "execute", String(id), "--no-wait"], env);
        expect([hasty.code, hasty.stderr]).toEqual([1, expect.stringMatching(/^zsd: .*proposal_not_ready/m)]);
        expect(await s.read.positions.read.minCollateralRatioBps()).toBe(before);
        await s.increaseTime(Number(await s.read.timelock.read.getMinDelay()) + 1);
      });
      expect([curls, commands]).toEqual([2, 6]);
      // Counted on-chain (the holder's whole supply, for), executed: the parameter changed, as the relay's terms said.
      const id = BigInt(known.proposalId!);
      const [against, forVotes, abstain] = await g.read.proposalVotes([id]);
      expect({ against, forVotes, abstain }).toEqual({ against: 0n, forVotes: 1_000_000n * 10n ** 18n, abstain: 0n });
      expect(await g.read.state([id])).toBe(7); // Executed
      expect(before).toBe(15_000n);
      expect(await s.read.positions.read.minCollateralRatioBps()).toBe(16_000n);
    },
  );
});

describe("the deploy guide's commands", () => {
  const DEPLOYING = { page: "guide/deploying.md", heading: "Deploying to a testnet" };
  /** Sepolia's chain id: a local node answering it takes the script's path for a public network. */
  const TESTNET_CHAIN_ID = 11_155_111;

  // A public testnet cannot be reached from the suite (nor paid for): a local Hardhat node with Sepolia's chain id
  // stands in, at the --rpc-url the page leaves to the reader. Everything else runs as written: .env copied from
  // .env.example and filled in with what the page lists, the compile, the deploy, which writes the manifest.
  it(
    "deploys with .env filled in as the page lists it, to a node of a public network's chain id",
    { timeout: 300_000 },
    async () => {
      const lines = block(DEPLOYING)
        .split("\n")
        .map((line) => line.replace(/\s+#.*$/, ""))
        .filter((line) => line !== "");
      expect(lines).toEqual([
        "cp .env.example .env",
        "npm run compile",
        "npm run deploy -- --network sepolia --rpc-url https://…",
      ]);
      // What the page says the script needs outside a local chain: every variable the test fills in.
      const needed = section(readDoc(DEPLOYING.page), DEPLOYING.heading);
      const listed = [
        ...needed
          .slice(needed.indexOf("Outside a local chain"))
          .split("\n\n")[1]!
          .matchAll(/`([A-Z_]+)`/g),
      ].map((m) => m[1]!);
      const x25519 = generateKeyPairSync("x25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32);
      const values: Record<string, string> = {
        DEPLOYER_PRIVATE_KEY: hardhatPrivateKey(12),
        CUSTODY_ACCOUNT_ADDRESS: hardhatAccount(13).address,
        ATTESTOR_ADDRESSES: [14, 15, 16].map((i) => hardhatAccount(i).address).join(","),
        ATTESTOR_THRESHOLD: "2",
        GUARDIAN_ADDRESS: hardhatAccount(17).address,
        ORACLE_UPDATER_ADDRESS: hardhatAccount(18).address,
        SECONDARY_ORACLE_UPDATER_ADDRESS: hardhatAccount(19).address,
        PAUSER_ADDRESS: hardhatAccount(11).address,
        GOVERNANCE_HOLDER_ADDRESS: hardhatAccount(10).address,
        SEAL_KEY_ID: "7",
        SEAL_PUBLIC_KEY: `0x${x25519.toString("hex")}`,
      };
      expect(listed.sort()).toEqual(Object.keys(values).sort());

      // The reader's .env and a manifest of that name are put back afterwards.
      const envFile = join(ROOT, ".env");
      const manifestFile = join(ROOT, "deployments", "sepolia.json");
      const kept = [envFile, manifestFile].map((file) => [file, existsSync(file) ? readFileSync(file) : null] as const);
      const node = await startHardhatNode(undefined, { chainId: TESTNET_CHAIN_ID });
      // None of the page's variables from the suite's own environment: the .env the page fills in gives them.
      const env = Object.fromEntries(Object.keys(values).map((name) => [name, undefined])) as Record<string, never>;
      const shell = async (line: string) => {
        const [command, ...args] = line.replace("https://…", node.rpcUrl).split(" ");
        const ran = await run(command!, args, env);
        expect({ line, code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({
          line,
          code: 0,
          stderr: "",
        });
        return ran.stdout;
      };
      try {
        await shell(lines[0]!);
        // "then fill it in": each variable's line of the copy gets its value.
        let filled = readFileSync(envFile, "utf8");
        for (const [name, value] of Object.entries(values)) {
          expect(filled, `.env.example has ${name}`).toMatch(new RegExp(`^${name}=$`, "m"));
          filled = filled.replace(new RegExp(`^${name}=$`, "m"), `${name}=${value}`);
        }
        writeFileSync(envFile, filled);
        await shell(lines[1]!);
        const deployed = await shell(lines[2]!);
        expect(deployed).toContain(`deployed to sepolia (chain ${TESTNET_CHAIN_ID}): deployments/sepolia.json`);
        const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as {
          chainId: number;
          deployer: string;
          roles: Record<string, unknown>;
          sealKey: { keyId: number; publicKey: string };
        };
        expect(manifest).toMatchObject({
          chainId: TESTNET_CHAIN_ID,
          deployer: hardhatAccount(12).address,
          roles: {
            custody: values.CUSTODY_ACCOUNT_ADDRESS,
            attestors: values.ATTESTOR_ADDRESSES!.split(","),
            attestorThreshold: 2,
            guardian: values.GUARDIAN_ADDRESS,
            oracleUpdater: values.ORACLE_UPDATER_ADDRESS,
            secondaryOracleUpdater: values.SECONDARY_ORACLE_UPDATER_ADDRESS,
            pauser: values.PAUSER_ADDRESS,
            governanceHolder: values.GOVERNANCE_HOLDER_ADDRESS,
          },
          sealKey: { keyId: 7, publicKey: values.SEAL_PUBLIC_KEY },
        });
      } finally {
        await node.stop();
        for (const [file, content] of kept) {
          if (content === null) rmSync(file, { force: true });
          else writeFileSync(file, content);
        }
      }
    },
  );
});

type RunningCli = ReturnType<typeof cli>;

/** The built CLI, as `zsd` (the installed one, or npx's) runs it, for the CLI walkthroughs. */
function cli(args: string[], env: Record<string, string>) {
  return run(process.execPath, [CLI, ...args], env);
}

/** A command of a walkthrough run from the repository's root, with more environment. */
function run(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
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
  return Object.assign(done, {
    stdoutSoFar: () => stdout,
    stderrSoFar: () => stderr,
    ended: () => ended,
    stop: () => void (ended || child.kill("SIGTERM")),
  });
}
