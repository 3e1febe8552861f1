// The zsd CLI as `npm ci` builds it (sdk/js/dist): it starts without compiling
// TypeScript or loading the SDK for --help, and refuses bad flags before any
// request or proof. The API here only counts requests: every case must leave
// it untouched. client-e2e.test.ts runs the same CLI against the real stack.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNote, decodeNote, encodeNote, positionOwner, positionOwnerKey } from "@zsd/sdk/notes";
import { hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

const SDK = join(ROOT, "sdk", "js");
const BUILT = join(SDK, "dist", "zsd.js");
const ZADDR = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const RECIPIENT = "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc";

function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe("the zsd CLI, built", () => {
  let server: Server;
  let requests = 0;
  let baseUrl: string;

  beforeAll(async () => {
    // What `npm ci` runs (the workspace's prepare script).
    const built = await run([join(SDK, "scripts", "build.mjs")]);
    expect(built.stderr).toBe("");
    expect(built.code).toBe(0);
    server = createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers --help from the built JavaScript, directly and through bin/zsd.js", async () => {
    for (const entry of [BUILT, join(SDK, "bin", "zsd.js")]) {
      const help = await run([entry, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^usage: zsd <command>/);
      expect(help.stdout).toContain("mint --note N --amount ZSD --recipient 0x");
      // The signed bounds, by flag.
      expect(help.stdout).toContain("close --note N --to ZADDR|note [--max-debt ZSD] [--min-zec ZEC]");
      expect(help.stdout).toContain(
        "liquidate --to ZADDR|note [--max-debt ZSD] [--min-seized-zec ZEC] [--min-seized-value ZSD]",
      );
      expect(help.stdout).toContain("redeem --amount ZSD --to ZADDR [--min-zec ZEC]");
    }
    // The entry checks flags with node:util alone; the client, viem and the prover load with the commands.
    const entry = readFileSync(BUILT, "utf8");
    expect(entry).not.toMatch(/from\s*"(viem|snarkjs|@noble|poseidon-lite)/);
    expect(entry).toMatch(/import\("\.\/zsd-commands\.js"\)/);
    expect(readFileSync(join(SDK, "bin", "zsd.js"), "utf8")).not.toMatch(/tsx/);
  });

  const note = encodeNote(createNote());
  const signer = { ZSD_PRIVATE_KEY: hardhatPrivateKey(6) };

  it("derives a note's position owner offline, from ZSD_NOTE or --note, the key only with --json", async () => {
    const before = requests;
    const expected = { address: positionOwner(decodeNote(note)), privateKey: positionOwnerKey(decodeNote(note)) };
    const fromEnv = await run([BUILT, "note", "owner", "--json"], { ZSD_NOTE: note, ZSD_BASE_URL: baseUrl });
    expect(fromEnv.code).toBe(0);
    expect(JSON.parse(fromEnv.stdout)).toEqual(expected);
    const fromFlag = await run([BUILT, "note", "owner", "--note", note, "--json"]);
    expect(JSON.parse(fromFlag.stdout)).toEqual(expected);
    // A note that is not this one derives another owner.
    const other = await run([BUILT, "note", "owner", "--json"], { ZSD_NOTE: encodeNote(createNote()) });
    expect(JSON.parse(other.stdout).address).not.toBe(expected.address);
    // On a terminal: the address, and a word on the key rather than the key.
    const human = await run([BUILT, "note", "owner"], { ZSD_NOTE: note });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`position owner: ${expected.address}`);
    expect(human.stdout).toMatch(/as secret as the note/);
    expect(human.stdout).not.toContain(expected.privateKey.slice(2));
    expect(requests).toBe(before);
  });
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    [
      "a word for an amount",
      ["mint", "--note", note, "--amount", "abc", "--recipient", RECIPIENT],
      {},
      /--amount must be a ZSD amount in plain decimal digits/,
    ],
    [
      "a negative amount",
      ["mint", "--note", note, "--amount=-1", "--recipient", RECIPIENT],
      {},
      /--amount must be positive/,
    ],
    [
      "a zero amount",
      ["prove", "--note", note, "--amount", "0", "--recipient", RECIPIENT],
      {},
      /--amount must be above 0/,
    ],
    [
      "a short recipient",
      ["prove", "--note", note, "--amount", "5", "--recipient", "0x1234"],
      {},
      /--recipient must be an address, 0x followed by 40/,
    ],
    ["a missing note", ["mint", "--amount", "5", "--recipient", RECIPIENT], {}, /--note is required/],
    [
      "a mistyped note",
      ["mint", "--note", "zsdnote1bbb", "--amount", "5", "--recipient", RECIPIENT],
      {},
      /--note must be a note as `zsd note new` prints it/,
    ],
    [
      "too many ZEC decimals",
      ["deposit", "--note", note, "--amount", "1.123456789"],
      {},
      /ZEC amounts have at most 8 decimals/,
    ],
    [
      "a floor that is no amount",
      ["mint", "--note", note, "--amount", "5", "--recipient", RECIPIENT, "--floor", "1e3"],
      {},
      /--floor must be a ZEC amount/,
    ],
    ["a redemption of letters", ["redeem", "--amount", "ten", "--to", ZADDR], signer, /--amount must be a ZSD amount/],
    [
      "a transparent address",
      ["redeem", "--amount", "5", "--to", "tmEZhbWHTpdKMw5it8YDspUXSMGQyFwovpU"],
      signer,
      /shielded Zcash address .* not a transparent one/,
    ],
    [
      "an address with a bad checksum",
      ["redeem", "--amount", "5", "--to", `${ZADDR.slice(0, -1)}q`],
      signer,
      /--to: .*checksum/i,
    ],
    ["a redemption without a signer", ["redeem", "--amount", "5", "--to", ZADDR], {}, /ZSD_PRIVATE_KEY .* is required/],
    [
      "a malformed private key",
      ["position", "3", "repay", "--amount", "5"],
      { ZSD_PRIVATE_KEY: "0xabc" },
      /ZSD_PRIVATE_KEY must be 0x followed by 64/,
    ],
    ["a position id of letters", ["position", "abc"], {}, /a position id is a whole number/],
    ["an unknown position action", ["position", "3", "sell"], {}, /unknown position action sell/],
    ["a liquidation without --to", ["position", "3", "liquidate"], signer, /--to is required/],
    [
      "a liquidation without a signer",
      ["position", "3", "liquidate", "--to", ZADDR],
      {},
      /ZSD_PRIVATE_KEY .* is required/,
    ],
    [
      "a negative signed bound",
      ["position", "3", "close", "--note", note, "--to", "note", "--max-debt=-1"],
      {},
      /--max-debt must be positive/,
    ],
    [
      "a liquidation's ZEC bound past 8 decimals",
      ["position", "3", "liquidate", "--to", ZADDR, "--min-seized-zec", "0.123456789"],
      signer,
      /--min-seized-zec ZEC amounts have at most 8 decimals/,
    ],
    [
      "a liquidation's value bound of letters",
      ["position", "3", "liquidate", "--to", ZADDR, "--min-seized-value", "all"],
      signer,
      /--min-seized-value must be a ZSD amount/,
    ],
    [
      "a redemption's minimum of letters",
      ["redeem", "--amount", "5", "--to", ZADDR, "--min-zec", "lots"],
      signer,
      /--min-zec must be a ZEC amount/,
    ],
    [
      "a bound on a command whose signature carries none",
      ["position", "3", "repay", "--amount", "5", "--min-zec", "1"],
      signer,
      /--min-zec is a signed bound of position close and redeem, not of position repay/,
    ],
    ["a note owner without a note", ["note", "owner"], { ZSD_NOTE: "" }, /--note is required/],
    ["a mistyped note's owner", ["note", "owner", "--note", "zsdnote1bbb"], {}, /--note must be a note/],
    ["an unknown note command", ["note", "old"], {}, /zsd note new\|owner/],
    [
      "a withdrawal wait that is not a number of seconds",
      ["withdraw", "--note", note, "--to", ZADDR, "--wait", "2m"],
      {},
      /--wait must be a whole number of seconds/,
    ],
    ["a zero withdrawal", ["withdraw", "--note", note, "--to", ZADDR, "--amount", "0"], {}, /--amount must be above 0/],
    [
      "--to note where an address is needed",
      ["withdraw", "--note", note, "--to", "note"],
      {},
      /--to must be a shielded Zcash address/,
    ],
    [
      "a mint id of the wrong shape",
      ["status", "mint_nope"],
      {},
      /mint_, red_, pact_, prf_ or wdr_ followed by 20 letters and digits/,
    ],
    [
      "a position action id of the wrong shape",
      ["status", "pact_4Rt8vN2k"],
      {},
      /mint_, red_, pact_, prf_ or wdr_ followed by 20 letters and digits, e\.g\. mint_\w+ \(got pact_4Rt8vN2k\)/,
    ],
    [
      "a wait for voting that is not a number of seconds",
      ["governance", "vote", "42", "for", "--wait", "1m"],
      signer,
      /--wait must be a whole number of seconds, e\.g\. 60 \(got 1m\)/,
    ],
    [
      "--wait and --no-wait together",
      ["governance", "vote", "42", "for", "--wait", "60", "--no-wait"],
      signer,
      /--wait and --no-wait contradict each other/,
    ],
    [
      "--no-wait on a command that never waits for voting",
      ["ledger", "--no-wait"],
      {},
      /--no-wait is for zsd governance vote/,
    ],
    [
      "a vote that is neither for, against nor abstain",
      ["governance", "vote", "42", "yes"],
      signer,
      /a vote is for, against or abstain/,
    ],
    [
      "a proposal id of letters",
      ["governance", "vote", "abc", "for"],
      signer,
      /a proposal id is the governor's decimal/,
    ],
    ["a vote without a signer", ["governance", "vote", "42", "for"], {}, /ZSD_PRIVATE_KEY .* is required/],
    ["a proposal without a call", ["governance", "propose", "--title", "t"], signer, /--call is required/],
    [
      "a call of a contract that is not ours",
      ["governance", "propose", "--title", "t", "--call", "Vault.drain()"],
      signer,
      /--call names one of StableToken, .*StableMinter/,
    ],
    [
      "a call that is no call",
      ["governance", "propose", "--title", "t", "--call", "StableMinter.setMinCollateralRatio"],
      signer,
      /--call is Contract.function\(arguments\)/,
    ],
    ["a delegatee that is no address", ["governance", "delegate", "--delegatee", "bob"], signer, /--delegatee must be/],
    ["an unknown governance command", ["governance", "elect"], {}, /unknown governance command elect/],
    ["a queue without a proposal", ["governance", "queue"], {}, /zsd governance queue <proposalId>/],
    [
      "an execute of a proposal id of letters",
      ["governance", "execute", "abc"],
      {},
      /a proposal id is the governor's decimal number/,
    ],
    ["a queue of two proposals", ["governance", "queue", "42", "43"], {}, /zsd governance queue: unexpected 43/],
    [
      "an execute that waits and does not",
      ["governance", "execute", "42", "--wait", "60", "--no-wait"],
      {},
      /--wait and --no-wait contradict each other/,
    ],
    ["a redirect without a payout", ["redirect", "--to", "note"], signer, /zsd redirect <red_… \| payoutId>/],
    [
      "a redirect of a mint",
      ["redirect", "mint_4Hn8pQ2rT6vX1zB3cD5f", "--to", "note"],
      signer,
      /a redemption's id \(red_ followed by 20 letters and digits\) or an on-chain payoutId/,
    ],
    ["a redirect without --to", ["redirect", "red_4Hn8pQ2rT6vX1zB3cD5f"], signer, /--to is required/],
    [
      "a redirect without the owner's key",
      ["redirect", "red_4Hn8pQ2rT6vX1zB3cD5f", "--to", "note"],
      {},
      /ZSD_PRIVATE_KEY .* is required/,
    ],
    [
      "a redirect to a transparent address",
      ["redirect", "12", "--to", "tmBsTi2xWTjUdEXnuTceL7fecEQKeWaPDJd"],
      signer,
      /--to must be a shielded Zcash address .*, not a transparent one/,
    ],
    [
      "a minimum anonymity that is no number",
      ["mint", "--note", note, "--amount", "5", "--recipient", RECIPIENT],
      { ZSD_MIN_ANONYMITY: "twenty" },
      /ZSD_MIN_ANONYMITY must be a whole number of deposits/,
    ],
    [
      "a redeem sub-command that is not sign",
      ["redeem", "sing", "--amount", "5", "--to", "ztestsapling1x"],
      signer,
      /zsd redeem \[sign\] --amount ZSD --to ZADDR/,
    ],
    [
      "a signed redemption without a signer",
      ["redeem", "sign", "--amount", "5"],
      {},
      /--to is required|ZSD_PRIVATE_KEY/,
    ],
    ["an unknown flag", ["mint", "--amout", "5"], {}, /Unknown option '--amout'/],
    ["an unknown command", ["mnit"], {}, /unknown command mnit/],
    [
      "a base address that is none",
      ["ledger", "--base-url", "localhost:3000"],
      {},
      /--base-url .* must be an http\(s\) address/,
    ],
  ];

  it.each(cases)("refuses %s at once, with no request made", async (_what, args, env, message) => {
    const before = requests;
    const result = await run([BUILT, ...args], { ZSD_API_KEY: "sk_test_offline", ZSD_BASE_URL: baseUrl, ...env });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/^zsd: /);
    // The mistake stays on screen: a pointer to the usage follows it, not the usage's fifty lines.
    expect(result.stderr).toMatch(/^zsd: .*\n\(zsd --help lists every command and its flags\)\n$/);
    expect(result.code).toBe(2);
    expect(requests).toBe(before);
  });
});
