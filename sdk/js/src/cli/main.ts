// zsd: the SDK's flows from a shell. The key comes from ZSD_API_KEY (never a
// flag: flags show in process lists), the note from --note or ZSD_NOTE (the
// private way), the base address from --base-url or ZSD_BASE_URL. Results go
// to stdout (--json for scripts), progress to stderr.
//
// Every flag is checked here, with nothing loaded but node:util, before the
// commands (viem, the prover, the client) are imported: a mistake is told in
// milliseconds, not after a tree download and a proof.
import { USAGE, UsageError, parse, usageErrorText, validate } from "./options.ts";

let code: number;
try {
  const { values, positionals } = parse(process.argv.slice(2));
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    code = 0;
  } else {
    validate(values, positionals);
    const { run } = await import("./commands.ts");
    code = await run(values, positionals);
  }
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(usageErrorText(error));
  code = 2;
}
// The prover's worker threads would keep the process alive.
process.exit(code);
