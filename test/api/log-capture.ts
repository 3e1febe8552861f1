// Captures the API's log lines (through the process's own logger set-up) and
// finds the addresses a run used in them, in every form a line could carry
// one: as given, in lower case, an EVM address without 0x (as calldata pads
// it), and a Zcash address's UTF-8 bytes in hex (as calldata encodes a string).
import { Writable } from "node:stream";
import { createLogger } from "../../api/src/observability/logger.ts";

export function captureLogs(level = "debug") {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger(level, stream) };
}

/** Each address of `addresses` found in `text`, with the form it was found in. */
export function addressesIn(text: string, addresses: readonly string[]): string[] {
  const haystack = text.toLowerCase();
  const found: string[] = [];
  for (const address of new Set(addresses)) {
    const evm = /^0x[0-9a-fA-F]{40}$/.test(address);
    const forms = evm
      ? [address.toLowerCase(), address.slice(2).toLowerCase()]
      : [address.toLowerCase(), Buffer.from(address, "utf8").toString("hex")];
    for (const form of forms) if (haystack.includes(form)) found.push(`${address} (as ${form.slice(0, 16)}…)`);
  }
  return found;
}
