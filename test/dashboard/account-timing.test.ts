// Sign-in and sign-up take as long whether or not the address has an account:
// a stopwatch must not tell what the answer's words do not. Up to n = 50 of each,
// interleaved in random order (a burst of load hits both sides alike), each
// from its own client address (no limit is met), compared by the ratio of
// medians. A hash skipped on one side would make that ratio about 10 or more
// (scrypt is ~100 ms, the rest a few ms); the bound leaves room for a loaded machine.
// Sampling stops early, after 20, 30 or 40 pairs, only when the medians already
// agree well within the bound: a side that skips the hash never does, and a
// machine whose load blurs the first pairs is sampled all 50 times and held to
// the bound, as before. Run alone at the end of the suite, most runs stop at 20.
import { randomInt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApi, openStorage, startApi } from "../api/helpers.ts";
import { TestMailbox } from "../helpers/mailbox.ts";
import { FormClient } from "./client.ts";

const N = 50;
const MAX_MEDIAN_RATIO = 1.3;
/** An early stop: from this many pairs on, every ten pairs, when the ratio is already under EARLY_RATIO. */
const EARLY_PAIRS = 20;
const EARLY_RATIO = 1.1;
const PASSWORD = "correct horse battery";
let counter = 0;
const email = () => `timing${String(++counter).padStart(3, "0")}-${Date.now()}@example.com`;
const freshAddress = () => `10.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(1, 255)}`;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

describe("account timing: the same whether or not the address has an account", () => {
  let api: RunningApi;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  let mailbox: TestMailbox;

  beforeAll(async () => {
    mailbox = await TestMailbox.start();
    storage = await openStorage("postgres");
    api = await startApi(storage.db, { SMTP_URL: mailbox.url, TRUST_PROXY: "loopback" });
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    await mailbox?.close();
  });

  /** The time of one form post (its form fetched beforehand, untimed), and its status. */
  const timed = async (path: string, fields: Record<string, string>) => {
    const ip = freshAddress();
    const client = new FormClient(api.url);
    const form = await client.request(path, { headers: { "x-forwarded-for": ip } });
    const start = performance.now();
    const page = await client.post(path, { _csrf: FormClient.csrf(form.html), ...fields }, { "x-forwarded-for": ip });
    return { ms: performance.now() - start, status: page.status };
  };

  /** Up to N samples of each side, in pairs whose order a coin decides (fewer when they agree early). */
  const interleaved = async (a: (i: number) => Promise<{ ms: number; status: number }>, b: typeof a) => {
    const samples = { a: [] as number[], b: [] as number[], statuses: new Set<string>() };
    const medians = () => {
      const [ma, mb] = [median(samples.a), median(samples.b)];
      return { ma, mb, ratio: Math.max(ma, mb) / Math.min(ma, mb) };
    };
    for (let i = 0; i < N; i++) {
      const order = randomInt(2) ? (["a", "b"] as const) : (["b", "a"] as const);
      for (const side of order) {
        const { ms, status } = await (side === "a" ? a : b)(i);
        samples[side].push(ms);
        samples.statuses.add(`${side} ${status}`);
      }
      const pairs = i + 1;
      if (pairs >= EARLY_PAIRS && pairs % 10 === 0 && medians().ratio < EARLY_RATIO) break;
    }
    return { ...medians(), n: samples.a.length, statuses: [...samples.statuses].sort() };
  };

  const existing: string[] = [];

  it(`sign-up: a new and a taken address, up to ${N} each`, async () => {
    existing.push(email());
    expect((await timed("/dashboard/signup", { email: existing[0]!, password: PASSWORD })).status).toBe(200);
    // Each taken address is the new one of the pair before: both sides mail, one a link, one a warning.
    const result = await interleaved(
      async () => {
        const address = email();
        const sample = await timed("/dashboard/signup", { email: address, password: PASSWORD });
        existing.push(address);
        return sample;
      },
      (i) => timed("/dashboard/signup", { email: existing[i]!, password: PASSWORD }),
    );
    console.log(
      `sign-up medians of ${result.n}: new ${result.ma.toFixed(1)} ms, taken ${result.mb.toFixed(1)} ms, ratio ${result.ratio.toFixed(3)}`,
    );
    expect(result.statuses).toEqual(["a 200", "b 200"]);
    expect(result.ratio).toBeLessThan(MAX_MEDIAN_RATIO);
  });

  it(`sign-in: a wrong password for an account and an unknown address, up to ${N} each`, async () => {
    const result = await interleaved(
      async (i) => {
        // Sign-up stopped early: the accounts this needs beyond its pairs are made here, untimed.
        while (existing.length <= i) {
          const address = email();
          expect((await timed("/dashboard/signup", { email: address, password: PASSWORD })).status).toBe(200);
          existing.push(address);
        }
        return timed("/dashboard/signin", { email: existing[i]!, password: "not the password at all" });
      },
      () => timed("/dashboard/signin", { email: email(), password: "not the password at all" }),
    );
    console.log(
      `sign-in medians of ${result.n}: account ${result.ma.toFixed(1)} ms, unknown ${result.mb.toFixed(1)} ms, ratio ${result.ratio.toFixed(3)}`,
    );
    expect(result.statuses).toEqual(["a 401", "b 401"]);
    expect(result.ratio).toBeLessThan(MAX_MEDIAN_RATIO);
  });
});
