// Shielded Zcash addresses for redemptions: Sapling (Bech32, BIP 173; 43-byte
// payload) and Unified (Bech32m, BIP 350, + F4Jumble; ZIP 316) with at least
// one shielded receiver. Transparent addresses, other networks, bad checksums
// and anything else are refused with a ZcashAddressError, each with its own
// code: callers (the API, the payout worker) rely on nothing else escaping.
import { bech32, bech32m } from "bech32";
import { F4JUMBLE_MAX, F4JUMBLE_MIN, f4jumble, f4jumbleInverse } from "./f4jumble.ts";
import { orchardReceiverProblem, saplingReceiverProblem } from "./receivers.ts";

export type ZcashNetwork = "mainnet" | "testnet";

export type ZcashAddressErrorCode =
  | "transparent_address"
  | "sprout_address"
  | "wrong_network"
  | "bad_checksum"
  | "malformed_address"
  | "no_shielded_receiver"
  /** Valid by ZIP 316, but not something custody's wallet can pay (Revision 1, too long). */
  | "unsupported_address"
  /** A Sapling or Orchard receiver whose diversifier or pk_d no wallet can send to. */
  | "invalid_receiver";

export class ZcashAddressError extends Error {
  constructor(
    readonly code: ZcashAddressErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ZcashAddressError";
  }
}

export type ItemKind =
  | "p2pkh"
  | "p2sh"
  | "sapling"
  | "orchard"
  | "expiry_height"
  | "expiry_time"
  /** Metadata (0xC0–0xDF) that a consumer may ignore. */
  | "metadata"
  /** A receiver type this code does not know; ZIP 316 says to ignore it. */
  | "unknown";

/** One item of a Unified Address, in encoding order. */
export interface UnifiedItem {
  typecode: number;
  kind: ItemKind;
  data: Uint8Array;
}

export type ShieldedAddress =
  | { kind: "sapling"; network: ZcashNetwork; address: string; data: Uint8Array }
  | { kind: "unified"; network: ZcashNetwork; address: string; items: UnifiedItem[] };

/**
 * The longest address a redemption can carry: Redemptions.sol refuses more
 * (MAX_ADDRESS_LENGTH). 512 characters hold any Unified Address of up to 311
 * bytes, above the 256 bytes ZIP 316 requires every consumer to support.
 */
export const ZCASH_ADDRESS_MAX_LENGTH = 512;
/** BIP 173's limit, which Sapling addresses keep. */
const SAPLING_MAX_LENGTH = 90;
const SAPLING_LENGTH = 43;
/** ZIP 316: typecodes and lengths above this are invalid. */
const COMPACT_MAX = 0x2000000;

type Encoding = { kind: "sapling" } | { kind: "unified"; revision: 0 | 1 };
/** A Map, not an object: a prefix such as "constructor" must find nothing. */
const PREFIXES = new Map<string, [Encoding, ZcashNetwork]>([
  ["zs", [{ kind: "sapling" }, "mainnet"]],
  ["ztestsapling", [{ kind: "sapling" }, "testnet"]],
  ["u", [{ kind: "unified", revision: 0 }, "mainnet"]],
  ["utest", [{ kind: "unified", revision: 0 }, "testnet"]],
  ["ur", [{ kind: "unified", revision: 1 }, "mainnet"]],
  ["urtest", [{ kind: "unified", revision: 1 }, "testnet"]],
]);

/** Typecode → [kind, length] of the items whose encoding ZIP 316 fixes. */
const KNOWN: Map<number, [ItemKind, number]> = new Map([
  [0x00, ["p2pkh", 20]],
  [0x01, ["p2sh", 20]],
  [0x02, ["sapling", 43]],
  [0x03, ["orchard", 43]],
]);
/** The MUST-understand metadata of Revision 1 (address expiry). */
const KNOWN_REVISION_1: Map<number, [ItemKind, number]> = new Map([
  [0xe0, ["expiry_height", 4]],
  [0xe1, ["expiry_time", 8]],
]);
const isMetadata = (typecode: number) => typecode >= 0xc0 && typecode <= 0xfc;
const mustUnderstand = (typecode: number) => typecode >= 0xe0 && typecode <= 0xfc;

const fail = (code: ZcashAddressErrorCode, message: string): never => {
  throw new ZcashAddressError(code, message);
};

function unifiedPrefix(network: ZcashNetwork, revision: 0 | 1): string {
  return (revision === 0 ? "u" : "ur") + (network === "testnet" ? "test" : "");
}

/** The HRP in US-ASCII, zero-padded to 16 bytes: the tail F4Jumble protects. */
function padding(hrp: string): Uint8Array {
  const bytes = new Uint8Array(16);
  bytes.set(new TextEncoder().encode(hrp));
  return bytes;
}

/** Bech32 or Bech32m to bytes; bad padding bits are refused, as BIP 173 asks. */
function decodeBech32(address: string, variant: typeof bech32, limit: number): Uint8Array {
  let words: number[];
  try {
    words = variant.decode(address, limit).words;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/checksum/i.test(message)) fail("bad_checksum", "The address checksum does not match: check for a typo.");
    return fail("malformed_address", "Not a valid Bech32 string.");
  }
  const bytes = variant.fromWordsUnsafe(words);
  if (!bytes) return fail("malformed_address", "The address has invalid padding bits.");
  return Uint8Array.from(bytes);
}

function readCompactSize(bytes: Uint8Array, offset: number): [number, number] {
  const first = bytes[offset];
  if (first === undefined) return fail("malformed_address", "The unified address is truncated.");
  if (first < 0xfd) return [first, offset + 1];
  const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  if (offset + 1 + width > bytes.length) fail("malformed_address", "The unified address is truncated.");
  let value = 0;
  for (let k = width - 1; k >= 0; k--) value = value * 256 + bytes[offset + 1 + k]!;
  const minimum = width === 2 ? 0xfd : width === 4 ? 0x10000 : 0x100000000;
  if (value < minimum) fail("malformed_address", "The unified address has a non-canonical CompactSize.");
  return [value, offset + 1 + width];
}

function writeCompactSize(value: number, out: number[]): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a CompactSize: ${value}`);
  const [marker, width] =
    value < 0xfd ? [-1, 0] : value <= 0xffff ? [0xfd, 2] : value <= 0xffffffff ? [0xfe, 4] : [0xff, 8];
  if (marker < 0) return void out.push(value);
  out.push(marker);
  for (let k = 0, v = value; k < width; k++, v = Math.floor(v / 256)) out.push(v % 256);
}

/** The items of a Unified Address's Bech32m payload, by every parsing rule of ZIP 316. */
function unifiedItems(payload: Uint8Array, hrp: string, revision: 0 | 1): UnifiedItem[] {
  if (payload.length < F4JUMBLE_MIN || payload.length > F4JUMBLE_MAX) {
    fail("malformed_address", "The unified address has the wrong length.");
  }
  const raw = f4jumbleInverse(payload);
  const expected = padding(hrp);
  if (!raw.subarray(raw.length - 16).every((b, k) => b === expected[k])) {
    fail("malformed_address", "The unified address padding is wrong.");
  }
  const body = raw.subarray(0, raw.length - 16);
  const items: UnifiedItem[] = [];
  let offset = 0;
  while (offset < body.length) {
    const [typecode, afterType] = readCompactSize(body, offset);
    const [length, afterLength] = readCompactSize(body, afterType);
    if (typecode > COMPACT_MAX || length > COMPACT_MAX) fail("malformed_address", "A typecode or length is too large.");
    if (afterLength + length > body.length) fail("malformed_address", "An item runs past the end of the address.");
    const previous = items[items.length - 1];
    if (previous && previous.typecode >= typecode) {
      fail("malformed_address", "Unified address items must be in strictly ascending typecode order.");
    }
    if (mustUnderstand(typecode)) {
      if (revision === 0)
        fail("malformed_address", "A Revision 0 unified address cannot carry MUST-understand metadata.");
      if (!KNOWN_REVISION_1.has(typecode)) {
        fail(
          "unsupported_address",
          `The unified address carries metadata (typecode ${typecode}) this service does not understand.`,
        );
      }
    }
    const known = KNOWN.get(typecode) ?? (revision === 1 ? KNOWN_REVISION_1.get(typecode) : undefined);
    if (known && known[1] !== length) fail("malformed_address", `A ${known[0]} item must be ${known[1]} bytes.`);
    const kind = known?.[0] ?? (isMetadata(typecode) ? "metadata" : "unknown");
    items.push({ typecode, kind, data: body.slice(afterLength, afterLength + length) });
    offset = afterLength + length;
  }
  const kinds = new Set(items.map((i) => i.kind));
  if (kinds.has("p2pkh") && kinds.has("p2sh")) {
    fail("malformed_address", "A unified address cannot hold both a P2PKH and a P2SH receiver.");
  }
  if (revision === 1 && items.every((i) => isMetadata(i.typecode))) {
    fail("malformed_address", "The unified address holds only metadata.");
  }
  if (revision === 0 && !kinds.has("sapling") && !kinds.has("orchard")) {
    fail("no_shielded_receiver", "The unified address has no shielded (Sapling or Orchard) receiver.");
  }
  return items;
}

/**
 * Parses a shielded address that custody can pay on `network`, or throws a
 * ZcashAddressError saying why not (and never anything else). The `address`
 * returned is the canonical form (lower-case ASCII): store and send that one.
 */
export function parseShieldedAddress(input: string, network: ZcashNetwork): ShieldedAddress {
  if (typeof input !== "string" || input.length === 0) return fail("malformed_address", "The address is empty.");
  if (input.length > ZCASH_ADDRESS_MAX_LENGTH) {
    fail("unsupported_address", `Addresses longer than ${ZCASH_ADDRESS_MAX_LENGTH} characters cannot be redeemed to.`);
  }
  // Before any case mapping: Unicode maps some non-ASCII letters to ASCII ones (U+212A KELVIN SIGN to k).
  if (!/^[\x21-\x7e]+$/.test(input)) {
    fail("malformed_address", "A Zcash address is printable ASCII only, without spaces.");
  }
  if (/^(t1|t3|tm|t2)[1-9A-HJ-NP-Za-km-z]{33}$/.test(input) || /^tex(test)?1/i.test(input)) {
    fail("transparent_address", "Transparent addresses are refused: give a shielded (Sapling or Unified) address.");
  }
  if (/^z[ct][1-9A-HJ-NP-Za-km-z]{93}$/.test(input)) {
    fail("sprout_address", "Sprout addresses are retired: give a Sapling or Unified address.");
  }
  const address = input.toLowerCase();
  if (input !== address && input !== input.toUpperCase()) {
    fail("malformed_address", "The address mixes upper and lower case.");
  }
  const hrp = address.slice(0, Math.max(0, address.lastIndexOf("1")));
  const prefix = PREFIXES.get(hrp);
  if (!prefix) {
    return fail("malformed_address", "Not a Zcash shielded address: expected zs1…, ztestsapling1…, u1… or utest1….");
  }
  const [encoding, addressNetwork] = prefix;

  let result: ShieldedAddress;
  if (encoding.kind === "sapling") {
    const data = decodeBech32(address, bech32, SAPLING_MAX_LENGTH);
    if (data.length !== SAPLING_LENGTH) fail("malformed_address", "A Sapling address carries 43 bytes.");
    result = { kind: "sapling", network: addressNetwork, address, data };
  } else {
    const payload = decodeBech32(address, bech32m, ZCASH_ADDRESS_MAX_LENGTH);
    const items = unifiedItems(payload, hrp, encoding.revision);
    result = { kind: "unified", network: addressNetwork, address, items };
  }
  if (addressNetwork !== network) {
    fail("wrong_network", `This is a ${addressNetwork} address; this environment pays ${network} addresses.`);
  }
  if (encoding.kind === "unified" && encoding.revision === 1) {
    fail("unsupported_address", "Revision 1 unified addresses (ur1…) cannot be paid yet: give a u1… address.");
  }
  // Last, as the dearest check (a few elliptic-curve operations per receiver).
  if (result.kind === "sapling") checkReceiver("sapling", result.data, "This Sapling address");
  else for (const item of result.items) checkReceiver(item.kind, item.data, "This unified address");
  return result;
}

/**
 * Every shielded receiver must be payable, not just one: a wallet refuses a
 * unified address whole when any receiver in it is invalid (librustzcash's
 * UnifiedAddress conversion), so custody could not pay it either.
 */
function checkReceiver(kind: ItemKind, data: Uint8Array, what: string): void {
  const problem =
    kind === "sapling" ? saplingReceiverProblem(data) : kind === "orchard" ? orchardReceiverProblem(data) : null;
  if (problem) fail("invalid_receiver", `${what} cannot be paid by any wallet: ${problem}.`);
}

/**
 * Encodes items as a Unified Address (for tests and tools), in the order
 * given and without checking them, so that invalid addresses can be made too.
 */
export function encodeUnifiedAddress(
  items: { typecode: number; data: Uint8Array }[],
  network: ZcashNetwork,
  revision: 0 | 1 = 0,
): string {
  const hrp = unifiedPrefix(network, revision);
  const raw: number[] = [];
  for (const item of items) {
    writeCompactSize(item.typecode, raw);
    writeCompactSize(item.data.length, raw);
    for (const byte of item.data) raw.push(byte);
  }
  const jumbled = f4jumble(Uint8Array.from([...raw, ...padding(hrp)]));
  // ZIP 316: Bech32m "ignoring any length restrictions".
  return bech32m.encode(hrp, bech32m.toWords(jumbled), Number.MAX_SAFE_INTEGER);
}

/** Encodes a 43-byte Sapling payment address. */
export function encodeSaplingAddress(data: Uint8Array, network: ZcashNetwork): string {
  if (data.length !== SAPLING_LENGTH) throw new RangeError("a Sapling address carries 43 bytes");
  return bech32.encode(network === "mainnet" ? "zs" : "ztestsapling", bech32.toWords(data), SAPLING_MAX_LENGTH);
}
