// Text a caller sends reaches PostgreSQL, whose text type holds neither NUL nor
// a lone UTF-16 surrogate (JSON's "\ud800" escape): the first fails the query
// ("invalid byte sequence for encoding UTF8: 0x00", a 500), the second is
// stored as U+FFFD, another string than the one sent. And bytes that are not
// UTF-8 are not text at all: decoders that replace them store something else
// too. These checks refuse all three where the request is read, once, for
// every route.
import type { FieldError } from "./problems.ts";

/** At most this many fields are reported: enough to fix a request, bounded for a hostile one. */
const MAX_REPORTED = 10;

/** Why PostgreSQL text cannot hold `value` as sent, or undefined when it can. */
export function unstorableReason(value: string): string | undefined {
  if (value.includes("\u0000")) return "must not contain NUL characters";
  // With the u flag a well-formed pair is one code point, so only lone halves match.
  if (/\p{Cs}/u.test(value)) return "must not contain a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)";
  return undefined;
}

/**
 * The fields of a parsed request part (params, query, body) holding text that
 * cannot be stored, walked iteratively so that a deep value cannot overflow
 * the check. Keys are reported by their parent's position, never echoed.
 */
export function unstorableFields(where: string, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const { value: current, path } = stack.pop()!;
    const field = [where, ...path].join(".");
    if (typeof current === "string") {
      const reason = unstorableReason(current);
      if (reason) errors.push({ field, message: reason });
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    for (const [key, child] of Object.entries(current)) {
      const reason = unstorableReason(key);
      if (reason) errors.push({ field, message: `a key ${reason.replace(/^must not contain/, "contains")}` });
      else stack.push({ value: child, path: [...path, Array.isArray(current) ? Number(key) : key] });
    }
  }
  return errors;
}

/** Offset of the first byte that is not UTF-8, or undefined when all of them are. */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return undefined;
  } catch {
    // A streamed prefix fails once it holds the bad byte and never before (an incomplete
    // sequence at its end waits for more), so the first failing length is found by halving.
    const fails = (length: number) => {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, length), { stream: true });
        return false;
      } catch {
        return true;
      }
    };
    let low = 0;
    let high = bytes.length;
    // A sequence cut short by the end of the body fails only without streaming.
    if (!fails(high)) {
      for (let i = high - 1; i >= Math.max(0, high - 3); i--) if (bytes[i]! >= 0xc0) return i;
      return high - 1;
    }
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      if (fails(middle)) high = middle;
      else low = middle;
    }
    return leadOf(bytes, high - 1);
  }
}

/**
 * The decoder fails on the byte that breaks a sequence, which may follow its
 * lead (`e9 7d`): the lead is what the sender wrote wrong, so it is reported.
 */
function leadOf(bytes: Uint8Array, failed: number): number {
  let lead = failed - 1;
  while (lead >= 0 && lead > failed - 4 && bytes[lead]! >= 0x80 && bytes[lead]! < 0xc0) lead--;
  const first = lead >= 0 ? bytes[lead]! : 0;
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 0;
  return length > failed - lead ? lead : failed;
}

/** What a body that is not UTF-8 is told. */
export function notUtf8Detail(bytes: Uint8Array, what: string): string {
  const offset = invalidUtf8Offset(bytes) ?? 0;
  const byte = (bytes[offset] ?? 0).toString(16).padStart(2, "0");
  return (
    `${what} is not valid UTF-8 (byte 0x${byte} at offset ${offset}): encode the text as UTF-8, ` +
    "whatever charset the Content-Type names; Latin-1, overlong forms and encoded surrogates are refused."
  );
}

function percentDecoded(text: string): Uint8Array {
  const raw = Buffer.from(text.replace(/\+/g, " "), "latin1");
  const out = new Uint8Array(raw.length);
  let length = 0;
  const hex = (b: number) =>
    b >= 0x30 && b <= 0x39 ? b - 0x30 : b >= 0x41 && b <= 0x46 ? b - 55 : b >= 0x61 && b <= 0x66 ? b - 87 : -1;
  for (let i = 0; i < raw.length; i++) {
    const high = raw[i] === 0x25 && i + 2 < raw.length ? hex(raw[i + 1]!) : -1;
    const low = high >= 0 ? hex(raw[i + 2]!) : -1;
    if (low >= 0) {
      out[length++] = high * 16 + low;
      i += 2;
    } else out[length++] = raw[i]!;
  }
  return out.subarray(0, length);
}

/**
 * The fields of a query string or form body whose percent-decoded bytes are
 * not UTF-8 (`%E9`, `%C0%AF`, `%ED%A0%80`): Node's parsers put U+FFFD in their
 * place, silently, so they are found in the raw text.
 */
export function nonUtf8Fields(where: string, raw: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const pair of raw.split("&")) {
    if (errors.length >= MAX_REPORTED) break;
    const eq = pair.indexOf("=");
    const [key, value] = eq < 0 ? [pair, ""] : [pair.slice(0, eq), pair.slice(eq + 1)];
    const keyBytes = percentDecoded(key);
    if (invalidUtf8Offset(keyBytes) !== undefined) {
      errors.push({ field: where, message: "a parameter name is not valid UTF-8 once percent-decoded" });
    } else if (invalidUtf8Offset(percentDecoded(value)) !== undefined) {
      const name = new TextDecoder().decode(keyBytes).slice(0, 64);
      errors.push({ field: `${where}.${name}`, message: "is not valid UTF-8 once percent-decoded" });
    }
  }
  return errors;
}
