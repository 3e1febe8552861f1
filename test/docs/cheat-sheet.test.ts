// The sandbox cheat sheet (docs/guide/sandbox.md) against the code it sums up: every development
// account's address and key and part, every magic value the sandbox's code reacts to, npm start's
// payout settings and where its mail goes; and a reader finds it from the README, the docs' first
// page and the sidebar. A value the code changes and the sheet does not fails here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOCAL_ATTESTORS, LOCAL_ROLES, hardhatAccount, hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { SANDBOX_PAYOUT_RETRIES, SANDBOX_REFUSED_ADDRESS } from "../../api/src/sandbox/refused-address.ts";
import site, { SIDEBAR } from "../../docs/.vitepress/config.ts";
import { readDoc } from "../helpers/docs.ts";

const sheet = readDoc("guide/sandbox.md");
const source = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** The sheet's table rows that start with an account, by its index: the cells after it. */
function accountRows(): Map<number, string[]> {
  const rows = new Map<number, string[]>();
  for (const line of sheet.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    const index = /^#(\d+)/.exec(cells[1] ?? "")?.[1];
    if (index !== undefined) rows.set(Number(index), cells.slice(2, -1));
  }
  return rows;
}

describe("the sandbox cheat sheet", () => {
  it("gives the wallets' addresses and keys as the chain derives them, and every service's account", () => {
    const rows = accountRows();
    // The two a reader signs with: address and private key.
    for (const index of [0, 5]) {
      expect(rows.get(index)?.slice(0, 2), `account #${index}`).toEqual([
        `\`${hardhatAccount(index).address}\``,
        `\`${hardhatPrivateKey(index)}\``,
      ]);
    }
    // Every part npm start gives an account, with that account's address.
    for (const [role, index] of Object.entries(LOCAL_ROLES)) {
      if (role === "deployer") continue;
      expect(rows.get(index)?.[0], `${role} (#${index})`).toBe(`\`${hardhatAccount(index).address}\``);
    }
    const [firstAttestor] = LOCAL_ATTESTORS.accounts;
    expect(sheet).toContain(`#${firstAttestor}–#${LOCAL_ATTESTORS.accounts.at(-1)}`);
    expect(sheet).toContain(`\`${hardhatAccount(firstAttestor).address}\``);
    // The quick start's wallet is the one the sheet says holds the ZSD.
    expect(readDoc("guide/quick-start.md")).toContain(`--recipient ${hardhatAccount(5).address}`);
  });

  it("lists every magic value of the sandbox's code, the failing-payout address whole", () => {
    expect(sheet).toContain(`\`${SANDBOX_REFUSED_ADDRESS}\``);
    const rules = source("api/src/domain/compliance/rules.ts");
    const cents = [...rules.matchAll(/magicAt === (\d+)/g)].map((m) => m[1]!);
    expect(cents.sort()).toEqual(["13", "14", "15"]);
    for (const c of cents) expect(sheet).toContain(`an amount ending in \`.${c}\``);
    const suffixes = [...rules.matchAll(/magic && address\.endsWith\("(\w+)"\)/g)].map((m) => m[1]!);
    expect(suffixes).toEqual(["dead"]);
    for (const suffix of suffixes) expect(sheet).toContain(`ending in \`${suffix}\``);
    // npm start's payout settings, as the sheet tells them.
    expect(source("scripts/dev.ts")).toContain("SANDBOX_PAYOUT_RETRIES.PAYOUT_MAX_ATTEMPTS");
    expect(sheet).toContain(`\`PAYOUT_MAX_ATTEMPTS=${SANDBOX_PAYOUT_RETRIES.PAYOUT_MAX_ATTEMPTS}\``);
    expect(sheet).toContain(`\`PAYOUT_RETRY_MS=${SANDBOX_PAYOUT_RETRIES.PAYOUT_RETRY_MS}\``);
  });

  it("says where the dashboard's mail goes, as the dashboard serves it", () => {
    expect(source("api/src/http/dashboard/account-routes.ts")).toContain('"/dashboard/mail"');
    expect(source("scripts/dev.ts")).toContain("/dashboard/mail");
    expect(sheet).toMatch(/\| mail +\| http:\/\/127\.0\.0\.1:3000\/dashboard\/mail: without `SMTP_URL`/);
  });

  it("names on the docs' first page where the API serves this site, as the README does", () => {
    // The site's base is where the API serves it.
    const served = `http://127.0.0.1:3000${site.base}`;
    expect(readDoc("index.md")).toMatch(
      new RegExp(`^\\| this documentation site +\\| ${served}, which the API serves`, "m"),
    );
    expect(source("README.md")).toContain(`serves it at ${served}`);
  });

  it("is linked from the README, the docs' first page and the sidebar", () => {
    expect(source("README.md")).toContain("(docs/guide/sandbox.md)");
    expect(readDoc("index.md")).toContain("(./guide/sandbox.md)");
    const guides = SIDEBAR.find((group) => group.text === "Guides")!.items!.map((item) => item.link);
    // Near the top: among the first guides a newcomer opens.
    expect(guides.indexOf("/guide/sandbox")).toBeGreaterThanOrEqual(0);
    expect(guides.indexOf("/guide/sandbox")).toBeLessThan(4);
  });
});
