// An address mail transport will take: the addr-spec of RFC 5322 as RFC 5321
// lets it travel in an SMTP envelope (no comments, no folding, no obsolete
// forms), a local part of at most 64 octets, a domain name of letter-digit-
// hyphen labels with at least one dot, 254 octets in all. An account whose
// address fails this could never follow its verification link: the sign-up is
// refused with the reason instead.

export const MAIL_ADDRESS_MAX_OCTETS = 254;
export const LOCAL_PART_MAX_OCTETS = 64;

/** What the sign-up form and its refusals tell a person about the address. */
export const MAIL_ADDRESS_RULES =
  "An address mail can reach, as name@example.com: a name of at most 64 characters (letters, digits, " +
  "! # $ % & ' * + - / = ? ^ _ ` { | } ~ and single dots between them, or a quoted string), an @, and a " +
  "domain name with a dot (letters, digits and hyphens); 254 characters in all, ASCII only (xn-- for an " +
  "international domain).";

// RFC 5322 §3.2.3 atext, joined by single dots (dot-atom-text).
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*$/;
// RFC 5321 §4.1.2 Quoted-string: printable ASCII but " and \ (qtextSMTP), or a backslash pair.
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
// RFC 1035 / 5890 label: letters, digits and hyphens, neither first nor last a hyphen.
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why mail could not be delivered to `address`, or undefined when its form is deliverable. */
export function mailAddressProblem(address: string): string | undefined {
  if (address.length === 0) return "Enter an email address.";
  if (!/^[\x20-\x7e]*$/.test(address))
    return "The address must be ASCII: write an international domain in its xn-- form.";
  if (address.length > MAIL_ADDRESS_MAX_OCTETS)
    return `The address is ${address.length} characters long; mail carries at most ${MAIL_ADDRESS_MAX_OCTETS}.`;
  const at = address.lastIndexOf("@");
  if (at < 0) return "The address needs an @ between the name and the domain.";
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length === 0) return "The address needs a name before the @.";
  if (local.length > LOCAL_PART_MAX_OCTETS)
    return `The name before the @ is ${local.length} characters long; mail takes at most ${LOCAL_PART_MAX_OCTETS}.`;
  if (!DOT_ATOM.test(local) && !QUOTED.test(local))
    return (
      "The name before the @ has characters mail does not carry unquoted (spaces, quotes, < > ( ) [ ] , ; : \\ " +
      '@ or two dots in a row): use letters, digits and ! # $ % & \' * + - / = ? ^ _ ` { | } ~, or put the name in "double quotes".'
    );
  if (domain.startsWith("[")) return "Use a domain name after the @, not an address literal.";
  const labels = domain.split(".");
  if (labels.length < 2) return "The domain after the @ needs a dot, as in example.com.";
  if (!labels.every((label) => LABEL.test(label)))
    return "The domain after the @ must be labels of letters, digits and hyphens (1 to 63 each, no hyphen at either end) joined by single dots.";
  if (/^\d+$/.test(labels.at(-1)!)) return "The domain after the @ must end in a name, not a number.";
  return undefined;
}
