// Where webhooks may go, judged by the address an IPv6 form carries and not by
// how it is written: every IPv6 form that embeds an IPv4 address (mapped,
// compatible, translated, NAT64, 6to4, Teredo) gets the IPv4 policy.
import { describe, expect, it } from "vitest";
import { checkTarget, refusedAddress } from "../../../api/src/adapters/webhooks/address-policy.ts";

const production = { allowHttp: false, allowLoopback: false };
const sandbox = { allowHttp: true, allowLoopback: true };

// Teredo (RFC 4380): 2001:0:<server IPv4>:<flags>:<port ^ ffff>:<client IPv4 ^ ffffffff>.
const teredo = (server: string, client: string) => {
  const hex = (ip: string, flip: number) => {
    const n = (ip.split(".").reduce((a, b) => a * 256 + Number(b), 0) ^ flip) >>> 0;
    return `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  };
  return `2001:0:${hex(server, 0)}:8000:63bf:${hex(client, 0xffffffff)}`;
};

describe("webhook address policy", () => {
  it("refuses every IPv6 form that carries a loopback, private or other special IPv4 address", () => {
    const refused: [string, string][] = [
      // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291 but still parsed).
      ["::127.0.0.1", "loopback"],
      ["::7f00:1", "loopback"],
      ["::a00:1", "private"],
      ["::a9fe:a9fe", "linkLocal"],
      ["::0.0.0.2", "unspecified"],
      // IPv4-mapped and IPv4-translated (RFC 6145).
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:a00:1", "private"],
      ["::ffff:0:a00:1", "private"],
      // NAT64, the well-known prefix (RFC 6052) and the local-use one (RFC 8215), at every prefix length.
      ["64:ff9b::7f00:1", "loopback"],
      ["64:ff9b::a00:1", "private"],
      ["64:ff9b::169.254.169.254", "linkLocal"],
      ["64:ff9b:1::a00:1", "private"],
      // 6to4 (RFC 3056): 2002:<IPv4>::/48.
      ["2002:7f00:1::1", "loopback"],
      ["2002:a00:1::", "private"],
      ["2002:a9fe:a9fe::1", "linkLocal"],
      // Teredo: the client's (obfuscated) and the server's address.
      [teredo("65.54.227.120", "127.0.0.1"), "loopback"],
      [teredo("65.54.227.120", "10.0.0.1"), "private"],
      [teredo("10.0.0.1", "93.184.216.34"), "private"],
      // IPv6's own special ranges stay refused.
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["fe80::1", "linkLocal"],
      ["fd00::1", "uniqueLocal"],
      ["ff02::1", "multicast"],
    ];
    for (const [address, range] of refused) {
      const why = refusedAddress(address, production);
      expect(why, address).toBeDefined();
      expect(why, address).toContain(`a ${range} address`);
    }
    // The local-use NAT64 prefix leaves the IPv4 address's place to the operator
    // (RFC 6052: after /48, /56, /64 or /96): 10.0.0.1 at each place is refused.
    for (const address of ["64:ff9b:1:a00:0:100::", "64:ff9b:1:a:0:1::", "64:ff9b:1:0:a:0:100:0", "64:ff9b:1::a00:1"]) {
      expect(refusedAddress(address, production), address).toBeDefined();
    }
  });

  it("takes public addresses in every form, and loopback ones only in the sandbox", () => {
    for (const address of [
      "93.184.216.34",
      "::ffff:93.184.216.34",
      "64:ff9b::5db8:d822",
      "2002:5db8:d822::1",
      teredo("65.54.227.120", "93.184.216.34"),
      "2606:4700:4700::1111",
    ]) {
      expect(refusedAddress(address, production), address).toBeUndefined();
    }
    for (const address of ["127.0.0.1", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "2002:7f00:1::1"]) {
      expect(refusedAddress(address, sandbox), address).toBeUndefined();
      expect(refusedAddress(address, production), address).toBeDefined();
    }
    // A private address is refused in the sandbox too, however it is written.
    for (const address of ["10.0.0.1", "::a00:1", "64:ff9b::a00:1", "2002:a00:1::"]) {
      expect(refusedAddress(address, sandbox), address).toContain("a private address");
    }
  });

  it("refuses the URLs the probe registered, as the WHATWG URL parser rewrites them", async () => {
    for (const url of [
      "https://[::127.0.0.1]/",
      "https://[::7f00:1]/",
      "https://[::a00:1]/",
      "https://[::ffff:7f00:1]/",
    ]) {
      const verdict = await checkTarget(url, production);
      expect(verdict.ok, url).toBe(false);
      expect(!verdict.ok && verdict.reason, url).toMatch(/^resolves to a (loopback|private) address/);
    }
    // A name is judged by what it resolves to: localhost is loopback whatever family answers.
    const named = await checkTarget("https://localhost/hooks", production);
    expect(!named.ok && named.reason).toMatch(/^resolves to a loopback address/);
  });
});
