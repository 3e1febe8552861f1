// Where a webhook may be sent. A webhook URL is chosen by a caller, and the
// API posts to it from inside our network: without these checks it would
// reach the cloud's metadata service, the database or an admin port (SSRF).
// A name is resolved and every address checked when the agent is registered
// AND before every attempt (the name's owner may change its records between
// the two: DNS rebinding), and the request then connects to an address that
// was checked rather than resolving the name again.
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

export interface AddressPolicy {
  /** Plain http (sandbox only: production webhooks carry signed events over TLS). */
  allowHttp: boolean;
  /** Loopback receivers (sandbox only: a developer's own machine). */
  allowLoopback: boolean;
  /** How long a name may take to resolve. */
  resolveTimeoutMs?: number;
}

export interface CheckedTarget {
  url: URL;
  /** The hostname without IPv6 brackets. */
  host: string;
  /** The address to connect to: one of those the name resolved to, every one of which was checked. */
  address: string;
  family: 4 | 6;
}

export type TargetVerdict = { ok: true; target: CheckedTarget } | { ok: false; reason: string };

/** Why an address may not receive webhooks, or undefined when it may. */
export function refusedAddress(address: string, policy: AddressPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return "is not an IP address";
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return refusedRange(parsed, policy);
  const v6 = parsed as ipaddr.IPv6;
  // Before the embedded forms: :: and ::1 would otherwise read as 0.0.0.0 and 0.0.0.1.
  const own = v6.range();
  if (own === "unspecified" || own === "loopback") return refusedRange(v6, policy);
  // A packet to any of these forms reaches the IPv4 address it carries (through
  // the host's own stack, a NAT64 gateway or a 6to4/Teredo relay), so the
  // policy is the IPv4 one, whatever the form says of itself.
  const carried = carriedIPv4(v6);
  if (carried.length === 0) return refusedRange(v6, policy);
  for (const ipv4 of carried) {
    const refused = refusedRange(ipv4, policy, v6);
    if (refused) return refused;
  }
  return undefined;
}

function refusedRange(
  address: ipaddr.IPv4 | ipaddr.IPv6,
  policy: AddressPolicy,
  carrier?: ipaddr.IPv6,
): string | undefined {
  const range = address.range();
  if (range === "unicast") return undefined;
  if (range === "loopback" && policy.allowLoopback) return undefined;
  // Everything else (private, link-local, unique-local, carrier-grade NAT,
  // multicast, reserved, documentation, …) is refused.
  const shown = carrier ? `${address.toString()}, carried by ${carrier.toString()}` : address.toString();
  return `resolves to a ${range} address (${shown}), which is not allowed`;
}

const inPrefix = (address: ipaddr.IPv6, prefix: string) => address.match(ipaddr.IPv6.parseCIDR(prefix));
const ipv4At = (bytes: number[], at: number) => new ipaddr.IPv4(bytes.slice(at, at + 4));

/** The IPv4 addresses an IPv6 address embeds, by the forms that route to them; none for a native one. */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  // IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96, RFC 6145),
  // IPv4-compatible (::/96, deprecated but still parsed and routed by some
  // stacks) and the well-known NAT64 prefix (64:ff9b::/96, RFC 6052).
  if (["::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96"].some((p) => inPrefix(address, p))) {
    return [ipv4At(bytes, 12)];
  }
  // The local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215): the operator picks
  // the prefix length, so the address may sit at any place RFC 6052 allows
  // within it; each is judged. Bits 64-71 (the "u" octet) are skipped.
  if (inPrefix(address, "64:ff9b:1::/48")) {
    const at = (indexes: number[]) => new ipaddr.IPv4(indexes.map((i) => bytes[i]!));
    return [ipv4At(bytes, 12), at([9, 10, 11, 12]), at([7, 9, 10, 11]), at([6, 7, 9, 10])];
  }
  // 6to4 (2002::/16, RFC 3056): the relay's IPv4 address follows the prefix.
  if (inPrefix(address, "2002::/16")) return [ipv4At(bytes, 2)];
  // Teredo (2001::/32, RFC 4380): the server's address, then the client's with every bit flipped.
  if (inPrefix(address, "2001::/32")) {
    return [ipv4At(bytes, 4), new ipaddr.IPv4(bytes.slice(12, 16).map((b) => b ^ 0xff))];
  }
  return [];
}

/** Checks a webhook URL and resolves it to an address it may be sent to. */
export async function checkTarget(raw: string, policy: AddressPolicy): Promise<TargetVerdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not a URL" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) {
    return { ok: false, reason: policy.allowHttp ? "must use http or https" : "must use https" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not carry a user name or password" };
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: { address: string; family: number }[];
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(":") ? 6 : 4 }];
  } else {
    try {
      addresses = await withTimeout(lookup(host, { all: true, verbatim: true }), policy.resolveTimeoutMs ?? 5_000);
    } catch {
      return { ok: false, reason: "does not resolve" };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: "does not resolve" };
  for (const { address } of addresses) {
    const refused = refusedAddress(address, policy);
    if (refused) return { ok: false, reason: refused };
  }
  const [first] = addresses;
  return { ok: true, target: { url, host, address: first!.address, family: first!.family === 6 ? 6 : 4 } };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error("timed out")), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
