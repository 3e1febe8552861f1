// Shielded Zcash addresses for redemptions: Sapling (Bech32, 43-byte payload)
// and Unified (Bech32m + F4Jumble, ZIP 316) with at least one shielded
// receiver. Transparent addresses, other networks and bad checksums are
// refused, each with its own code.
import { bech32, bech32m } from "bech32";
import { f4jumble, f4jumbleInverse, F4JUMBLE_MIN } from "./f4jumble.ts";

export type ZcashNetwork = "mainnet" | "testnet";

export type ZcashAddressErrorCode =
  | "transparent_address"
  | "sprout_address"
  | "wrong_network"
  | "bad_checksum"
  | "malformed_address"
  | "no_shielded_receiver";

export class ZcashAddressError extends Error {
  constructor(
    readonly code: ZcashAddressErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ZcashAddressError";
  }
}

export type ReceiverKind = "p2pkh" | "p2sh" | "sapling" | "orchard" | "unknown";

export interface Receiver {
  typecode: number;
  kind: ReceiverKind;
  data: Uint8Array;
}

export type ShieldedAddress =
  | { kind: "sapling"; network: ZcashNetwork; address: string; data: Uint8Array }
  | { kind: "unified"; network: ZcashNetwork; address: string; receivers: Receiver[] };

const SAPLING_HRP: Record<ZcashNetwork, string> = { mainnet: "zs", testnet: "ztestsapling" };
const UNIFIED_HRP: Record<ZcashNetwork, string> = { mainnet: "u", testnet: "utest" };
const OTHER: Record<ZcashNetwork, ZcashNetwork> = { mainnet: "testnet", testnet: "mainnet" };
const RECEIVER_LENGTH: Record<number, [ReceiverKind, number]> = {
  0: ["p2pkh", 20],
  1: ["p2sh", 20],
  2: ["sapling", 43],
  3: ["orchard", 43],
};
/** Long enough for a UA with every receiver kind and room for new ones. */
const UNIFIED_MAX_LENGTH = 1023;

const fail = (code: ZcashAddressErrorCode, message: string): never => {
  throw new ZcashAddressError(code, message);
};

function decodeBech32(address: string, variant: typeof bech32, limit: number) {
  try {
    return variant.decode(address, limit);
  } catch (error) {
    const message = (error as Error).message;
    if (/checksum/i.test(message)) fail("bad_checksum", "The address checksum does not match: check for a typo.");
    return fail("malformed_address", `Not a valid Zcash address (${message}).`);
  }
}

function readCompactSize(bytes: Uint8Array, offset: number): [number, number] {
  const first = bytes[offset];
  if (first === undefined) fail("malformed_address", "The unified address is truncated.");
  if (first! < 0xfd) return [first!, offset + 1];
  const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  if (offset + 1 + width > bytes.length) fail("malformed_address", "The unified address is truncated.");
  let value = 0;
  for (let k = width - 1; k >= 0; k--) value = value * 256 + bytes[offset + 1 + k]!;
  const minimum = width === 2 ? 0xfd : width === 4 ? 0x10000 : 0x100000000;
  if (value < minimum) fail("malformed_address", "The unified address has a non-canonical length.");
  return [value, offset + 1 + width];
}

/** The receivers inside a Unified Address's jumbled payload. */
export function unifiedReceivers(payload: Uint8Array, hrp: string): Receiver[] {
  if (payload.length < F4JUMBLE_MIN) fail("malformed_address", "The unified address is too short.");
  const raw = f4jumbleInverse(payload);
  const padding = raw.subarray(raw.length - 16);
  const expected = new Uint8Array(16);
  expected.set(new TextEncoder().encode(hrp));
  if (!padding.every((b, k) => b === expected[k])) fail("malformed_address", "The unified address padding is wrong.");

  const receivers: Receiver[] = [];
  const body = raw.subarray(0, raw.length - 16);
  let offset = 0;
  while (offset < body.length) {
    const [typecode, afterType] = readCompactSize(body, offset);
    const [length, afterLength] = readCompactSize(body, afterType);
    if (afterLength + length > body.length) fail("malformed_address", "A receiver runs past the end of the address.");
    const previous = receivers[receivers.length - 1];
    if (previous && previous.typecode >= typecode) {
      fail("malformed_address", "Unified address receivers must be in ascending typecode order.");
    }
    const known = RECEIVER_LENGTH[typecode];
    if (known && known[1] !== length) fail("malformed_address", `A ${known[0]} receiver must be ${known[1]} bytes.`);
    receivers.push({ typecode, kind: known?.[0] ?? "unknown", data: body.slice(afterLength, afterLength + length) });
    offset = afterLength + length;
  }
  if (receivers.length === 0) fail("malformed_address", "The unified address has no receivers.");
  const kinds = new Set(receivers.map((r) => r.kind));
  if (kinds.has("p2pkh") && kinds.has("p2sh"))
    fail("malformed_address", "A unified address cannot hold two transparent receivers.");
  if (!kinds.has("sapling") && !kinds.has("orchard")) {
    fail("no_shielded_receiver", "The unified address has no shielded (Sapling or Orchard) receiver.");
  }
  return receivers;
}

/**
 * Parses a shielded address that custody can pay on `network`, or throws a
 * ZcashAddressError saying why not.
 */
export function parseShieldedAddress(input: string, network: ZcashNetwork): ShieldedAddress {
  const address = input.trim();
  if (address !== input || address.length === 0) fail("malformed_address", "The address is empty or has spaces.");
  const lower = address.toLowerCase();
  if (/^(t1|t3|tm|t2)[1-9A-HJ-NP-Za-km-z]{33}$/.test(address) || /^tex(test)?1/.test(lower)) {
    fail("transparent_address", "Transparent addresses are refused: give a shielded (Sapling or Unified) address.");
  }
  if (/^z[ct][1-9A-HJ-NP-Za-km-z]{93}$/.test(address)) {
    fail("sprout_address", "Sprout addresses are retired: give a Sapling or Unified address.");
  }
  const hrp = lower.slice(0, Math.max(0, lower.lastIndexOf("1")));

  if (hrp === SAPLING_HRP[OTHER[network]] || hrp === UNIFIED_HRP[OTHER[network]]) {
    fail("wrong_network", `This is a ${OTHER[network]} address; this environment pays ${network} addresses.`);
  }
  if (hrp === SAPLING_HRP[network]) {
    const decoded = decodeBech32(address, bech32, 90);
    const data = Uint8Array.from(bech32.fromWords(decoded.words));
    if (data.length !== 43) fail("malformed_address", "A Sapling address carries 43 bytes.");
    return { kind: "sapling", network, address: lower, data };
  }
  if (hrp === UNIFIED_HRP[network]) {
    const decoded = decodeBech32(address, bech32m, UNIFIED_MAX_LENGTH);
    const payload = Uint8Array.from(bech32m.fromWords(decoded.words));
    return { kind: "unified", network, address: lower, receivers: unifiedReceivers(payload, hrp) };
  }
  return fail("malformed_address", "Not a Zcash shielded address: expected zs1…, ztestsapling1…, u1… or utest1….");
}

/** Encodes receivers as a Unified Address (for tests and tools). */
export function encodeUnifiedAddress(
  receivers: { typecode: number; data: Uint8Array }[],
  network: ZcashNetwork,
): string {
  const hrp = UNIFIED_HRP[network];
  const parts: number[] = [];
  for (const r of receivers) parts.push(r.typecode, r.data.length, ...r.data);
  const padding = new Uint8Array(16);
  padding.set(new TextEncoder().encode(hrp));
  const jumbled = f4jumble(Uint8Array.from([...parts, ...padding]));
  return bech32m.encode(hrp, bech32m.toWords(jumbled), UNIFIED_MAX_LENGTH);
}

/** Encodes a 43-byte Sapling payment address. */
export function encodeSaplingAddress(data: Uint8Array, network: ZcashNetwork): string {
  if (data.length !== 43) throw new RangeError("a Sapling address carries 43 bytes");
  return bech32.encode(SAPLING_HRP[network], bech32.toWords(data), 90);
}
