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
  let parsed = ipaddr.parse(address);
  // ::ffff:10.0.0.1 reaches 10.0.0.1: judge the IPv4 address it carries.
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === "unicast") return undefined;
  if (range === "loopback" && policy.allowLoopback) return undefined;
  // Everything else (private, link-local, unique-local, carrier-grade NAT,
  // multicast, reserved, NAT64 and 6to4 prefixes that can embed a private
  // IPv4 address, …) is refused.
  return `resolves to a ${range} address (${parsed.toString()}), which is not allowed`;
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
