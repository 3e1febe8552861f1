// Sign-up takes an address only when mail transport would: RFC 5322's
// addr-spec as RFC 5321 carries it (a dot-atom or quoted local part of at most
// 64 octets, a domain of letter-digit-hyphen labels with a dot, 254 octets in
// all). An account at any other address could never be verified. The form
// says the rules, and a refusal says which one failed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIL_ADDRESS_RULES, mailAddressProblem } from "../../../api/src/adapters/mail/address.ts";
import { FormClient } from "../../dashboard/client.ts";
import { type RunningApi, openStorage, startApi } from "../helpers.ts";

const PASSWORD = "correct horse battery staple";

const DELIVERABLE = [
  "dev@example.com",
  "first.last+tag@mail.example.co.uk",
  "o'brien@example.ie",
  "a!#$%&'*+-/=?^_`{|}~z@example.com",
  '"john doe"@example.com',
  '"quoted \\"inner\\" text"@example.com',
  "x@xn--bcher-kva.example",
  "user@sub-domain.example-1.org",
  `${"l".repeat(64)}@example.com`,
  `a@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.${"g".repeat(60)}`,
];

const UNDELIVERABLE: [string, RegExp][] = [
  // The probe's: a quote that opens no quoted string, then markup.
  ['"><svg/onload=alert(1)>x@x.io', /characters mail does not carry/],
  ["<script>@example.com", /characters mail does not carry/],
  ["two..dots@example.com", /two dots in a row/],
  [".lead@example.com", /characters mail does not carry/],
  ["trail.@example.com", /characters mail does not carry/],
  ["sp ace@example.com", /characters mail does not carry/],
  ['"unterminated@example.com', /characters mail does not carry/],
  ["a@b@example.com", /characters mail does not carry/],
  ["noat.example.com", /needs an @/],
  ["@example.com", /needs a name/],
  ["nodot@localhost", /needs a dot/],
  ["a@-bad.example", /letters, digits and hyphens/],
  ["a@bad-.example", /letters, digits and hyphens/],
  ["a@under_score.example", /letters, digits and hyphens/],
  ["a@empty..label", /letters, digits and hyphens/],
  ["a@example.com.", /letters, digits and hyphens/],
  [`a@${"d".repeat(64)}.com`, /letters, digits and hyphens/],
  ["a@[127.0.0.1]", /address literal/],
  ["a@10.0.0.1", /end in a name/],
  ["caf\u00e9@example.com", /ASCII/],
  ["a@b\u00fccher.example", /ASCII/],
  [`${"l".repeat(65)}@example.com`, /at most 64/],
  [`a@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.${"g".repeat(61)}`, /at most 254/],
  ["", /Enter an email/],
];

describe("sign-up addresses mail can reach", () => {
  it("takes the forms of RFC 5321/5322 and refuses the rest, saying why", () => {
    for (const address of DELIVERABLE) expect(mailAddressProblem(address), address).toBeUndefined();
    for (const [address, why] of UNDELIVERABLE) expect(mailAddressProblem(address), address).toMatch(why);
  });

  describe("through the dashboard's sign-up form", () => {
    let storage: Awaited<ReturnType<typeof openStorage>>;
    let api: RunningApi;
    beforeAll(async () => {
      storage = await openStorage("postgres");
      api = await startApi(storage.db);
    });
    afterAll(async () => {
      await api?.close();
      await storage?.close();
    });
    const accounts = async () =>
      Number((await api.db.query<{ n: string }>("SELECT count(*) AS n FROM accounts"))[0]!.n);

    it("shows the rules on the form", async () => {
      const form = await new FormClient(api.url).get("/dashboard/signup");
      expect(form.html).toContain("An address mail can reach");
      expect(form.html).toContain('aria-describedby="email-rules"');
    });

    it("refuses an address no server takes with a 400 page saying why, and makes no account", async () => {
      const before = await accounts();
      for (const [address, why] of UNDELIVERABLE.slice(0, 12)) {
        const page = await new FormClient(api.url).signUp(address, PASSWORD);
        expect(page.status, address).toBe(400);
        // The page escapes what it echoes: the words are compared as HTML-escaped text.
        const shown = page.html
          .replace(/&#39;/g, "'")
          .replace(/&#x27;/g, "'")
          .replace(/&quot;/g, '"');
        expect(shown, address).toMatch(why);
        expect(shown, address).toContain(MAIL_ADDRESS_RULES.slice(0, 40));
        expect(page.html, address).not.toContain("<svg/onload");
      }
      expect(await accounts()).toBe(before);
    });

    it("takes a dot-atom and a quoted local part", async () => {
      const before = await accounts();
      const stamp = Date.now();
      for (const address of [`dev.${stamp}+x@example.com`, `"dev ${stamp}"@example.com`]) {
        const page = await new FormClient(api.url).signUp(address, PASSWORD);
        expect(page.status, `${address}: ${page.html.slice(0, 200)}`).toBe(200);
      }
      expect(await accounts()).toBe(before + 2);
    });
  });
});
