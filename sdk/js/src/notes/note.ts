import { bech32m } from "bech32";
import { poseidon2, poseidon3 } from "poseidon-lite";
import { type Hex, encodeAbiParameters, keccak256 } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { MAX_ZAT, SNARK_SCALAR_FIELD } from "./constants.ts";

/** The secrets a depositor keeps; whoever holds them can mint against the deposit. */
export interface Note {
  secret: bigint;
  nullifierSecret: bigint;
}

const NOTE_HRP = "zsdnote";
/** bech32m's usual 90-character cap is for addresses; a note is 64 bytes. */
const NOTE_LIMIT = 120;

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

// Domain tags of the values derived from a note (any distinct constants would do).
const CHANGE_SECRET = 1n;
const CHANGE_NULLIFIER = 2n;

/**
 * The note that receives the rest when `note` is spent for less than it holds.
 * Derived from the note, so the one backup string recovers every change note
 * after it, and a crash between proving and mining loses nothing.
 */
export function changeNote(note: Note): Note {
  return {
    secret: poseidon3([CHANGE_SECRET, note.secret, note.nullifierSecret]),
    nullifierSecret: poseidon3([CHANGE_NULLIFIER, note.secret, note.nullifierSecret]),
  };
}

/** The change leaf the circuit outputs: `Poseidon(rest, commitment of changeNote(note))`, 0 when nothing is left. */
export function changeLeaf(note: Note, restZat: bigint): bigint {
  assertZat("restZat", restZat);
  return restZat === 0n ? 0n : poseidon2([restZat, noteCommitment(changeNote(note))]);
}

/**
 * The private key owning the position a note opens: derived from the note, so
 * the note is the only backup, and its address links to no account.
 */
export function positionOwnerKey(note: Note): Hex {
  assertField("secret", note.secret);
  assertField("nullifierSecret", note.nullifierSecret);
  return keccak256(
    encodeAbiParameters(
      [{ type: "string" }, { type: "uint256" }, { type: "uint256" }],
      ["zsd position owner", note.secret, note.nullifierSecret],
    ),
  );
}

/** The address of `positionOwnerKey(note)`, bound in the mint proof. */
export function positionOwner(note: Note) {
  return privateKeyToAddress(positionOwnerKey(note));
}

/**
 * A note as one copyable string with a checksum (bech32m, prefix "zsdnote"):
 * a mistyped or truncated backup is refused instead of proving nothing.
 */
export function encodeNote(note: Note): string {
  assertField("secret", note.secret);
  assertField("nullifierSecret", note.nullifierSecret);
  const bytes = new Uint8Array(64);
  for (const [offset, value] of [
    [0, note.secret],
    [32, note.nullifierSecret],
  ] as const) {
    for (let i = 0; i < 32; i++) bytes[offset + 31 - i] = Number((value >> BigInt(8 * i)) & 0xffn);
  }
  return bech32m.encode(NOTE_HRP, bech32m.toWords(bytes), NOTE_LIMIT);
}

export function decodeNote(encoded: string): Note {
  const text = encoded.trim();
  let bytes: Uint8Array;
  const legacy = /^zsdnote1([0-9a-f]{128})$/.exec(text);
  if (legacy) {
    // The first releases wrote 128 hex digits without a checksum; still read.
    bytes = Uint8Array.from(legacy[1]!.match(/../g)!.map((h) => parseInt(h, 16)));
  } else {
    let decoded;
    try {
      decoded = bech32m.decode(text as `${string}1${string}`, NOTE_LIMIT);
    } catch (error) {
      // The library's messages quote the whole string ("Invalid checksum for zsdnote1…"): a mistyped
      // note is the secret but for a character, and this message reaches logs and stderr.
      const message = (error as Error).message;
      const reason = /checksum/i.test(message)
        ? "the checksum does not match: a character is wrong, missing or extra"
        : /mixed-case/i.test(message)
          ? "upper and lower case mixed"
          : /^Unknown character .$/.test(message)
            ? message
            : "not bech32m";
      throw new SyntaxError(`not a zsd note (${reason}): expected zsdnote1… with a valid checksum`);
    }
    if (decoded.prefix !== NOTE_HRP) throw new SyntaxError(`not a zsd note: prefix ${decoded.prefix}, not zsdnote`);
    bytes = Uint8Array.from(bech32m.fromWords(decoded.words));
    if (bytes.length !== 64) throw new SyntaxError(`not a zsd note: ${bytes.length} bytes, not 64`);
  }
  const read = (offset: number) => bytes.slice(offset, offset + 32).reduce((v, b) => (v << 8n) | BigInt(b), 0n);
  const note = { secret: read(0), nullifierSecret: read(32) };
  assertField("secret", note.secret);
  assertField("nullifierSecret", note.nullifierSecret);
  return note;
}
