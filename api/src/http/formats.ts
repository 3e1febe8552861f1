// Formats whose refusal says which rule the value broke: "-1" is told it must
// be positive, not that it has too many decimals; "mint_nope" is told what
// follows mint_. The pattern stays a plain regex so the OpenAPI document
// still carries it; only the message looks at the value.
import { z } from "zod";

/**
 * A positive decimal amount as a string: at most `integerDigits` digits
 * before the point and `decimals` after it.
 */
export function decimalAmount(o: { unit: string; integerDigits: number; decimals: number; example: string }) {
  const pattern = new RegExp(`^\\d{1,${o.integerDigits}}(\\.\\d{1,${o.decimals}})?$`);
  return z.string().regex(pattern, {
    error: (issue) => {
      const input = String(issue.input);
      const [whole = "", fraction] = input.split(".");
      const rule = /^\s*-/.test(input)
        ? "must be positive"
        : !/^\d+(\.\d+)?$/.test(input)
          ? "must be plain decimal digits with an optional point (no sign, exponent, comma or spaces)"
          : whole.length > o.integerDigits
            ? `has at most ${o.integerDigits} digits before the point`
            : `has at most ${o.decimals} decimals`;
      return `a ${o.unit} amount ${rule}, e.g. "${o.example}"`;
    },
  });
}

/** An id of `prefix`_ and `length` letters and digits, e.g. mint_4Hn8pQ2rT6vX1zB3cD5f. */
export function prefixedId(prefix: string, length: number, what: string) {
  const example = `${prefix}_${"4Hn8pQ2rT6vX1zB3cD5fK7mW9yA".slice(0, length)}`;
  return z
    .string()
    .regex(
      new RegExp(`^${prefix}_[0-9A-Za-z]{${length}}$`),
      `${what}: ${prefix}_ followed by exactly ${length} letters and digits (A-Z, a-z, 0-9), e.g. ${example}`,
    );
}
