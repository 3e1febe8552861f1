// F4Jumble (ZIP 316): the unkeyed 4-round Feistel that makes every character of
// a Unified Address depend on every byte of its content.
import { blake2b } from "@noble/hashes/blake2b";

const HASH_LENGTH = 64;
/** ZIP 316 Revision 1 (Revision 0 had 48; no valid Revision 0 address lies between). */
export const F4JUMBLE_MIN = 38;
export const F4JUMBLE_MAX = 4_194_368;

const text = new TextEncoder();

function personal(tag: "UA_F4Jumble_H" | "UA_F4Jumble_G", i: number, j = 0): Uint8Array {
  const p = new Uint8Array(16);
  p.set(text.encode(tag));
  p[13] = i;
  p[14] = j & 0xff;
  p[15] = j >> 8;
  return p;
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let k = 0; k < a.length; k++) out[k] = a[k]! ^ b[k]!;
  return out;
}

function H(i: number, u: Uint8Array, length: number): Uint8Array {
  return blake2b(u, { dkLen: length, personalization: personal("UA_F4Jumble_H", i) });
}

function G(i: number, u: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let j = 0; j * HASH_LENGTH < length; j++) {
    const block = blake2b(u, { dkLen: HASH_LENGTH, personalization: personal("UA_F4Jumble_G", i, j) });
    out.set(block.subarray(0, Math.min(HASH_LENGTH, length - j * HASH_LENGTH)), j * HASH_LENGTH);
  }
  return out;
}

function split(message: Uint8Array): [number, number] {
  if (message.length < F4JUMBLE_MIN || message.length > F4JUMBLE_MAX) {
    throw new RangeError(`F4Jumble needs ${F4JUMBLE_MIN} to ${F4JUMBLE_MAX} bytes, got ${message.length}`);
  }
  const left = Math.min(HASH_LENGTH, Math.floor(message.length / 2));
  return [left, message.length - left];
}

export function f4jumble(message: Uint8Array): Uint8Array {
  const [l, r] = split(message);
  const a = message.subarray(0, l);
  const b = message.subarray(l);
  const x = xor(b, G(0, a, r));
  const y = xor(a, H(0, x, l));
  const d = xor(x, G(1, y, r));
  const c = xor(y, H(1, d, l));
  return Uint8Array.from([...c, ...d]);
}

export function f4jumbleInverse(message: Uint8Array): Uint8Array {
  const [l, r] = split(message);
  const c = message.subarray(0, l);
  const d = message.subarray(l);
  const y = xor(c, H(1, d, l));
  const x = xor(d, G(1, y, r));
  const a = xor(y, H(0, x, l));
  const b = xor(x, G(0, a, r));
  return Uint8Array.from([...a, ...b]);
}
