import { poseidon2 } from "poseidon-lite";
import { MAX_ZAT, SNARK_SCALAR_FIELD } from "./constants.ts";

/** The secrets a depositor keeps; whoever holds them can mint against the deposit. */
export interface Note {
  secret: bigint;
  nullifierSecret: bigint;
}

const NOTE_PREFIX = "zsdnote1";

/** 31 random bytes: uniform below 2^248, hence below the field modulus. */
function randomFieldElement(): bigint {
  const bytes = crypto.getRandomValues(new Uint8Array(31));
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value === 0n ? randomFieldElement() : value;
}

function assertField(name: string, value: bigint): void {
  if (value <= 0n || value >= SNARK_SCALAR_FIELD) throw new RangeError(`${name} must be in (0, field modulus)`);
}

export function assertZat(name: string, value: bigint): void {
  if (value < 0n || value > MAX_ZAT) throw new RangeError(`${name} must be between 0 and 2^64 - 1 zatoshi`);
}

/** A fresh note with random secrets. Never reuse a note for two deposits. */
export function createNote(): Note {
  return { secret: randomFieldElement(), nullifierSecret: randomFieldElement() };
}

/** `Poseidon(secret, nullifierSecret)`: what the depositor puts in the shielded memo. */
export function noteCommitment(note: Note): bigint {
  assertField("secret", note.secret);
  assertField("nullifierSecret", note.nullifierSecret);
  return poseidon2([note.secret, note.nullifierSecret]);
}

/** `Poseidon(amountZat, noteCommitment)`: the leaf the attestor records. */
export function depositLeaf(amountZat: bigint, commitment: bigint): bigint {
  assertZat("amountZat", amountZat);
  assertField("noteCommitment", commitment);
  return poseidon2([amountZat, commitment]);
}

/** `Poseidon(nullifierSecret, leaf)`: revealed once, when the deposit backs a mint. */
export function nullifierHash(note: Note, leaf: bigint): bigint {
  return poseidon2([note.nullifierSecret, leaf]);
}

/** A note as one copyable string, e.g. for a wallet backup. */
export function encodeNote(note: Note): string {
  const hex = (v: bigint) => v.toString(16).padStart(64, "0");
  return `${NOTE_PREFIX}${hex(note.secret)}${hex(note.nullifierSecret)}`;
}

export function decodeNote(encoded: string): Note {
  const body = encoded.startsWith(NOTE_PREFIX) ? encoded.slice(NOTE_PREFIX.length) : "";
  if (!/^[0-9a-f]{128}$/.test(body))
    throw new SyntaxError("not a zsd note: expected zsdnote1 followed by 128 hex digits");
  const note = { secret: BigInt(`0x${body.slice(0, 64)}`), nullifierSecret: BigInt(`0x${body.slice(64)}`) };
  assertField("secret", note.secret);
  assertField("nullifierSecret", note.nullifierSecret);
  return note;
}
