// One logger set-up for the process, the app's default and the tests: keys,
// secrets and signatures are redacted wherever a line comes from, and so is
// every address: Zcash addresses and EVM addresses are
// replaced in the written line itself, so an error's message, a stack or a
// chain node's answer quoted in a log carries none either.
import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger };

// One pass over a line, in this order of alternatives:
// - hex of more than 64 digits (calldata, signatures: an address or a string argument is encoded in them);
// - an EVM address (0x and 40 hex digits; a 64-digit hash or txid stays);
// - a Sapling or Unified address (Bech32 / Bech32m, any network's prefix);
// - a transparent address (t1, t3, tm, t2 and 33 Base58 characters).
const ADDRESS_LIKE = new RegExp(
  [
    String.raw`(?<![0-9A-Za-z])0x[0-9a-fA-F]{65,}`,
    String.raw`(?<![0-9A-Za-z])0x[0-9a-fA-F]{40}(?![0-9a-fA-F])`,
    String.raw`(?<![0-9A-Za-z])(?:zs|ztestsapling|zregtestsapling|u|utest|uregtest)1[02-9ac-hj-np-zAC-HJ-NP-Z]{30,}(?![0-9A-Za-z])`,
    String.raw`(?<![0-9A-Za-z])t[123m][1-9A-HJ-NP-Za-km-z]{33}(?![0-9A-Za-z])`,
  ].join("|"),
  "g",
);

const replacement = (match: string) =>
  match.startsWith("0x") ? (match.length === 42 ? "[evm address]" : "[hex data]") : "[zcash address]";

/** `line` with every address (and every hex blob that could encode one) replaced by what it was. */
export function redactAddresses(line: string): string {
  return line.replace(ADDRESS_LIKE, replacement);
}

type Destination = DestinationStream & { flush?: () => void };

/** Writes to `destination` what redactAddresses leaves of each line. */
function redacting(destination: Destination): Destination {
  return {
    write: (line: string) => destination.write(redactAddresses(line)),
    flush: destination.flush ? () => destination.flush!() : undefined,
  };
}

/**
 * Standard output for a long-running process: lines leave in writes of 4 KB, or 100 ms after
 * the first line that waits, whichever comes first (a write per access-log line costs a busy
 * API a tenth of its throughput). Without the timer, a quiet server's lines waited for the
 * next 4 KB or for shutdown. createLogger sends warnings and errors at once, and pino writes
 * what is pending when the process exits.
 */
export function bufferedStdout(): Destination & { flush: () => void; flushSync: () => void } {
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  let timer: NodeJS.Timeout | undefined;
  const cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const flush = () => {
    cancel();
    // SonicBoom throws once destroyed (at exit), and its types omit the flag.
    if (!(stdout as unknown as { destroyed: boolean }).destroyed) stdout.flush();
  };
  return {
    write: (line: string) => {
      stdout.write(line);
      timer ??= setTimeout(flush, 100).unref();
    },
    flush,
    flushSync: () => {
      cancel();
      stdout.flushSync();
    },
  };
}

export function createLogger(level: string, destination?: Destination): Logger {
  // pino.destination(1) writes synchronously: only a given destination is flushed on a warning.
  const stdout = destination ? undefined : pino.destination(1);
  const target = redacting(destination ?? { write: (line: string) => stdout!.write(line) });
  return pino(
    {
      level,
      redact: ["req.headers.authorization", "authorization", "*.secret", "secret"],
      hooks: {
        // A warning or an error leaves a buffered destination at once: an
        // operator must not wait for 4 KB of access log to see it.
        logMethod(args, method, lineLevel) {
          method.apply(this, args);
          if (lineLevel >= 40) target.flush?.();
        },
      },
    },
    target,
  );
}

/** What an access-log line holds: nothing a caller wrote but a sanitized request id. */
export interface AccessLine {
  requestId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
  apiKeyId?: string;
}

/**
 * Writes one access-log line per request as `logger.info(fields, "request")` would, formatted
 * here: pino's walk of the object and its redaction paths cost a busy API several percent of its
 * throughput, and these fields hold no secret. The line goes to the logger's
 * own destination (address redaction included) with its level, time and bindings.
 */
export function accessLog(logger: Logger): (line: AccessLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const destination = internals[pino.symbols.streamSym] as Destination;
  return (line) => {
    if (!logger.isLevelEnabled("info")) return;
    const chindings = internals[pino.symbols.chindingsSym] as string;
    const key = line.apiKeyId === undefined ? "" : `,"apiKeyId":${JSON.stringify(line.apiKeyId)}`;
    destination.write(
      `{"level":30,"time":${Date.now()}${chindings},"requestId":${JSON.stringify(line.requestId)},` +
        `"method":${JSON.stringify(line.method)},"route":${JSON.stringify(line.route)},"status":${line.status},` +
        `"ms":${line.ms}${key},"msg":"request"}\n`,
    );
  };
}
