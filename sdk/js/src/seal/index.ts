// Sealed withdraw addresses: a shielded Zcash address encrypted to
// custody's X25519 key, so that the chain carries only ciphertext next to the
// owner's EVM address. Custody opens it and pays.
//
// Envelope, version 1 (65 bytes of overhead):
//   version (1) ‖ keyId (4, big-endian) ‖ ephemeral X25519 public key (32)
//   ‖ nonce (12) ‖ ChaCha20-Poly1305 ciphertext of the UTF-8 address ‖ tag (16)
// The key is HKDF-SHA256 of the X25519 shared secret (salt: ephemeral ‖ custody
// public key). The associated data binds the envelope to one chain, one
// Redemptions contract and one owner, so a ciphertext copied onto another
// owner's request does not open.
import { chacha20poly1305 } from "@noble/ciphers/chacha";
import { randomBytes } from "@noble/ciphers/webcrypto";
import { x25519 } from "@noble/curves/ed25519";
import { hkdf } from "@noble/hashes/hkdf";
import { sha256 } from "@noble/hashes/sha256";
import { type Address, type Hex, bytesToHex, getAddress, hexToBytes, isHex, keccak256 } from "viem";
import { ZCASH_ADDRESS_MAX_LENGTH, type ZcashNetwork, parseShieldedAddress } from "../zcash/index.ts";

export const SEAL_VERSION = 1;
export const SEAL_ALGORITHM = "x25519-hkdf-sha256-chacha20poly1305";
const HEADER_LENGTH = 1 + 4 + 32 + 12;
const TAG_LENGTH = 16;
export const SEALED_ADDRESS_MIN_LENGTH = HEADER_LENGTH + TAG_LENGTH + 1;
export const SEALED_ADDRESS_MAX_LENGTH = HEADER_LENGTH + TAG_LENGTH + ZCASH_ADDRESS_MAX_LENGTH;
/** Addresses up to this many bytes (every Sapling and most Unified ones) are sealed padded to it; longer ones to 512. */
export const SEAL_PADDED_SHORT = 256;
const KDF_INFO = new TextEncoder().encode("zsd sealed withdraw address v1");
const AAD_TAG = new TextEncoder().encode("zsd-sealed-address-v1");

/** A custody seal key as the chain and `GET /v1/relay` publish it. */
export interface SealKey {
  keyId: number;
  /** The X25519 public key, 0x and 64 hex digits. */
  publicKey: Hex;
}

/** A custody seal key with its secret: custody's side only. */
export interface SealSecretKey extends SealKey {
  secretKey: Hex;
}

/** What a sealed address is bound to: the payout request's chain, Redemptions contract and owner. */
export interface SealContext {
  chainId: number | bigint;
  redemptions: Address;
  owner: Address;
}

export type SealErrorCode = "malformed_envelope" | "unknown_key" | "unreadable";

/** A sealed address that cannot be opened (custody refunds it as `unreadable_address`). */
export class SealError extends Error {
  constructor(
    readonly code: SealErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "SealError";
  }
}

/** The seal key with `secretKey` (32 bytes) as its secret. */
export function sealKeyFromSecret(keyId: number, secretKey: Hex): SealSecretKey {
  checkKeyId(keyId);
  const secret = hexToBytes(secretKey);
  if (secret.length !== 32) throw new TypeError("A seal secret key is 32 bytes.");
  return { keyId, secretKey, publicKey: bytesToHex(x25519.getPublicKey(secret)) };
}

/**
 * The development seal key of local chains and the sandbox: its secret is
 * public (sha256 of a fixed phrase), like Hardhat's mnemonic. Never for real funds.
 */
export const DEV_SEAL_KEY: SealSecretKey = sealKeyFromSecret(
  1,
  bytesToHex(sha256(new TextEncoder().encode("zsd development seal key 1"))),
);

function checkKeyId(keyId: number) {
  if (!Number.isInteger(keyId) || keyId < 0 || keyId > 0xffffffff) throw new TypeError("A keyId is a uint32.");
}

function associatedData(context: SealContext, nonce: Uint8Array, keyIdBytes: Uint8Array): Uint8Array {
  const chainId = BigInt(context.chainId);
  const chainBytes = hexToBytes(`0x${chainId.toString(16).padStart(64, "0")}`);
  return concat(
    AAD_TAG,
    chainBytes,
    hexToBytes(getAddress(context.redemptions)),
    hexToBytes(getAddress(context.owner)),
    nonce,
    keyIdBytes,
  );
}

function sharedKey(shared: Uint8Array, ephemeralPublic: Uint8Array, custodyPublic: Uint8Array): Uint8Array {
  // A low-order ephemeral key gives an all-zero secret that anyone could compute.
  if (shared.every((b) => b === 0)) throw new SealError("unreadable", "The sealed address uses a degenerate key.");
  return hkdf(sha256, shared, concat(ephemeralPublic, custodyPublic), KDF_INFO, 32);
}

/**
 * Seals `address` to custody's key for one payout request. The address is
 * checked first (`parseShieldedAddress` on `network`), so a bad address fails
 * here, before anything is signed or burned; the canonical form is sealed.
 */
export function sealAddress(key: SealKey, context: SealContext, address: string, network: ZcashNetwork): Hex {
  return sealBytes(key, context, padAddress(parseShieldedAddress(address, network).address));
}

/**
 * The address's bytes padded with zeros to a fixed size (256, or 512 for a
 * longer one), so that the envelope's public length does not tell a Sapling
 * address from a Unified one, nor one Unified address's receivers from
 * another's. Opening strips the zeros.
 */
export function padAddress(address: string): Uint8Array {
  const bytes = new TextEncoder().encode(address);
  // Empty, or longer than any address: left as it is (parseShieldedAddress refuses both before
  // sealAddress gets here; tests seal them to see the contract refuse them).
  if (bytes.length === 0 || bytes.length > ZCASH_ADDRESS_MAX_LENGTH) return bytes;
  const padded = new Uint8Array(bytes.length <= SEAL_PADDED_SHORT ? SEAL_PADDED_SHORT : ZCASH_ADDRESS_MAX_LENGTH);
  padded.set(bytes);
  return padded;
}

/** Seals raw bytes without checking them as an address: for tests of what custody refuses. */
export function sealBytes(key: SealKey, context: SealContext, plaintext: Uint8Array): Hex {
  return sealWith(key, context, plaintext, x25519.utils.randomPrivateKey(), randomBytes(12));
}

/**
 * Seals `address` as sealAddress does, but with the ephemeral key and nonce
 * derived from `seed` (at least 32 secret bytes): the same seed and address
 * give the same envelope. For a sealer that must seal again what it sealed
 * before without keeping it (the API sealing for a caller); the seed must be
 * secret, and never used for another address (the derivation takes the
 * address in, so a seed reused with another address still gives another key).
 */
export function sealAddressDerived(
  key: SealKey,
  context: SealContext,
  address: string,
  network: ZcashNetwork,
  seed: Uint8Array,
): Hex {
  if (seed.length < 32) throw new TypeError("A seal seed is at least 32 bytes.");
  const canonical = parseShieldedAddress(address, network).address;
  const info = concat(KDF_INFO, new TextEncoder().encode(" derived:"), new TextEncoder().encode(canonical));
  const derived = hkdf(sha256, seed, uint32(key.keyId), info, 44);
  return sealWith(key, context, padAddress(canonical), derived.subarray(0, 32), derived.subarray(32, 44));
}

function sealWith(
  key: SealKey,
  context: SealContext,
  plaintext: Uint8Array,
  ephemeralSecret: Uint8Array,
  nonce: Uint8Array,
): Hex {
  checkKeyId(key.keyId);
  const custodyPublic = hexToBytes(key.publicKey);
  if (custodyPublic.length !== 32) throw new TypeError("A seal public key is 32 bytes.");
  const ephemeralPublic = x25519.getPublicKey(ephemeralSecret);
  const keyIdBytes = uint32(key.keyId);
  const aead = chacha20poly1305(
    sharedKey(x25519.getSharedSecret(ephemeralSecret, custodyPublic), ephemeralPublic, custodyPublic),
    nonce,
    associatedData(context, nonce, keyIdBytes),
  );
  return bytesToHex(concat(Uint8Array.of(SEAL_VERSION), keyIdBytes, ephemeralPublic, nonce, aead.encrypt(plaintext)));
}

/** The key id a sealed address names, or a SealError when it is not a version-1 envelope. */
export function sealedKeyId(sealed: Hex): number {
  const bytes = envelopeBytes(sealed);
  return new DataView(bytes.buffer, bytes.byteOffset + 1, 4).getUint32(0);
}

/** keccak256 of the envelope: what the EIP-712 messages and the withdrawal binding sign. */
export function sealedAddressHash(sealed: Hex): Hex {
  return keccak256(sealed);
}

/**
 * Opens a sealed address with custody's keys (by the key id it names) for the
 * request it is bound to; throws a SealError when it cannot. The plaintext is
 * returned as it was sealed: the caller still parses it as an address.
 */
export function openSealedAddress(keys: readonly SealSecretKey[], context: SealContext, sealed: Hex): string {
  const bytes = envelopeBytes(sealed);
  const keyIdBytes = bytes.subarray(1, 5);
  const keyId = new DataView(keyIdBytes.buffer, keyIdBytes.byteOffset, 4).getUint32(0);
  const key = keys.find((k) => k.keyId === keyId);
  if (!key) throw new SealError("unknown_key", `The address is sealed to key ${keyId}, which custody does not hold.`);
  const ephemeralPublic = bytes.subarray(5, 37);
  const nonce = bytes.subarray(37, HEADER_LENGTH);
  let shared: Uint8Array;
  try {
    shared = x25519.getSharedSecret(hexToBytes(key.secretKey), ephemeralPublic);
  } catch {
    throw new SealError("unreadable", "The sealed address's ephemeral key is not an X25519 key.");
  }
  const aead = chacha20poly1305(
    sharedKey(shared, ephemeralPublic, hexToBytes(key.publicKey)),
    nonce,
    associatedData(context, nonce, keyIdBytes),
  );
  let plaintext: Uint8Array;
  try {
    plaintext = aead.decrypt(bytes.subarray(HEADER_LENGTH));
  } catch {
    throw new SealError(
      "unreadable",
      "The sealed address does not open: it was sealed to another key, or for another owner, chain or contract.",
    );
  }
  try {
    // The zero bytes sealAddress pads with; an address never holds one.
    return new TextDecoder("utf-8", { fatal: true }).decode(plaintext).replace(/\0+$/, "");
  } catch {
    throw new SealError("unreadable", "The sealed address is not UTF-8 text.");
  }
}

function envelopeBytes(sealed: Hex): Uint8Array {
  if (typeof sealed !== "string" || !isHex(sealed, { strict: true })) {
    throw new SealError("malformed_envelope", "A sealed address is 0x and an even number of hex digits.");
  }
  const bytes = hexToBytes(sealed);
  if (bytes.length < SEALED_ADDRESS_MIN_LENGTH || bytes.length > SEALED_ADDRESS_MAX_LENGTH) {
    throw new SealError(
      "malformed_envelope",
      `A sealed address is ${SEALED_ADDRESS_MIN_LENGTH} to ${SEALED_ADDRESS_MAX_LENGTH} bytes; this one is ${bytes.length}.`,
    );
  }
  if (bytes[0] !== SEAL_VERSION) {
    throw new SealError("malformed_envelope", `Sealed address version ${bytes[0]} is not supported (only 1).`);
  }
  return bytes;
}

function uint32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
