// A PostgreSQL server of a test's own (initdb + pg_ctl into a temporary
// directory, on a free port), for tests that stop and start the server: the
// machine's cluster is shared with every other test running at the time.
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../../scripts/lib/hardhat-node.ts";

const run = promisify(execFile);

export interface OwnPostgres {
  /** postgresql://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** A fast shutdown: sessions are ended, as in a restart or a failover. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/** Where initdb and pg_ctl are (Debian installs them outside PATH), or undefined. */
export function postgresBin(): string | undefined {
  try {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    return versions[0] && join("/usr/lib/postgresql", versions[0], "bin");
  } catch {
    return undefined;
  }
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL's initdb was not found under /usr/lib/postgresql");
  const dir = mkdtempSync(join(tmpdir(), "zsd-own-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const port = await freePort();
  // PostgreSQL refuses to run as root: as root, run it as the postgres user.
  const asServer = (command: string, args: string[]) =>
    process.getuid?.() === 0
      ? run("runuser", ["-u", "postgres", "--", join(bin, command), ...args])
      : run(join(bin, command), args);
  await asServer("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const pgCtl = (...args: string[]) => asServer("pg_ctl", ["-D", data, "-w", "-t", "60", ...args]);
  const server: OwnPostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => void (await pgCtl("-m", "fast", "stop")),
    start: async () => void (await pgCtl("-o", options, "-l", join(dir, "log"), "start")),
    close: async () => {
      await pgCtl("-m", "immediate", "stop").catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
