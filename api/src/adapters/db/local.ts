// An embedded PGlite directory may be opened by one process only: two would
// each keep their own copy of the database in memory and overwrite each
// other's files. The process that opens it holds a lock file there (its pid;
// a lock left by a dead process is taken over) and serves the same database
// to local tools (the key CLI, psql) over a Unix socket in the directory,
// speaking PostgreSQL's wire protocol so that `pg` connects as to any server.
//
// @electric-sql/pglite-socket does this for PGlite 0.3 and later (its first
// release wants PGlite 0.3.1 as a peer): PGlite 0.2.13, which the API shares
// with Ponder 0.16, aborts on a startup packet and has no public
// runExclusive. The bridge below answers the startup itself and hands every
// later message to PGlite's execProtocolRaw.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { type Socket, createServer } from "node:net";
import { basename, dirname, join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";

export const LOCK_FILE = "zsd-api.lock";
/** Not 5432: PGlite's own files in the directory are named .s.PGSQL.5432.in/.out. */
export const SOCKET_PORT = 6432;

export const socketPath = (directory: string) => join(resolve(directory), `.s.PGSQL.${SOCKET_PORT}`);

export class DirectoryInUseError extends Error {
  constructor(
    readonly directory: string,
    readonly pid: number | undefined,
    why = "",
  ) {
    super(
      `The PGlite directory ${directory} is open in process ${pid ?? "(unknown)"} (lock file ${join(directory, LOCK_FILE)}); ` +
        `one process only may open it${why ? `: ${why}` : "."} ` +
        "(If that process is not an API or tool of this project, its pid was reused: remove the lock file.)",
    );
  }
}

function lockHolder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The live process holding `directory`, if any (this process included). */
export function holderOf(directory: string): number | undefined {
  const pid = lockHolder(join(resolve(directory), LOCK_FILE));
  return pid !== undefined && alive(pid) ? pid : undefined;
}

/** Takes the directory's lock or throws DirectoryInUseError; answers the release. */
export function takeLock(directory: string): () => void {
  const file = join(directory, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
      return () => {
        if (lockHolder(file) === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const pid = lockHolder(file);
    if (pid !== undefined && alive(pid)) throw new DirectoryInUseError(directory, pid);
    rmSync(file, { force: true });
  }
  throw new DirectoryInUseError(directory, lockHolder(file));
}

/**
 * Makes `directory` a PGlite data directory if it is not one yet. PGlite
 * initialises only an empty directory, and the lock file must be in it
 * before PGlite opens it: so a new database is made beside it and moved in
 * (rename is atomic; of two processes starting at once, one moves its copy in).
 */
export async function initialise(directory: string): Promise<void> {
  if (existsSync(join(directory, "PG_VERSION"))) return;
  mkdirSync(dirname(directory), { recursive: true });
  const fresh = join(dirname(directory), `.${basename(directory)}.init-${process.pid}`);
  rmSync(fresh, { recursive: true, force: true });
  const db = new PGlite(fresh);
  await db.waitReady;
  await db.close();
  try {
    // A directory left holding only a dead holder's lock or socket counts as empty.
    if (existsSync(directory) && readdirSync(directory).every((f) => f === LOCK_FILE || f.startsWith(".s.PGSQL."))) {
      if (holderOf(directory) === undefined) rmSync(directory, { recursive: true, force: true });
    }
    renameSync(fresh, directory);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  if (!existsSync(join(directory, "PG_VERSION"))) {
    throw new Error(`${directory} is neither empty nor a PGlite directory`);
  }
}

const message = (type: string, body: Buffer) => {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, "latin1");
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
};
const parameter = (name: string, value: string) => message("S", Buffer.from(`${name}\0${value}\0`));

/** What a server says after a startup packet: no password (the socket is the owner's alone), parameters, ready. */
const HELLO = Buffer.concat([
  message("R", Buffer.from([0, 0, 0, 0])),
  parameter("server_version", "16.4"),
  parameter("server_encoding", "UTF8"),
  parameter("client_encoding", "UTF8"),
  parameter("DateStyle", "ISO, MDY"),
  parameter("integer_datetimes", "on"),
  parameter("standard_conforming_strings", "on"),
  message("K", Buffer.alloc(8)),
  message("Z", Buffer.from("I")),
]);
/** How long a client may hold the database (mid-transaction) without a word before it is cut off. */
export const HOLD_TIMEOUT_MS = 5_000;
const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const SYNC = message("S", Buffer.alloc(0));
const ROLLBACK = message("Q", Buffer.from("ROLLBACK\0"));

/**
 * One client connection. PGlite runs one statement at a time for everyone:
 * while a client is between a message and the ReadyForQuery that says it is
 * idle again (an extended-protocol batch, or an open transaction), it holds
 * PGlite's transaction lock, so the API's own queries and transactions wait
 * rather than interleave with it; one silent for HOLD_TIMEOUT_MS while
 * holding it is cut off and its transaction rolled back.
 */
function bridge(db: PGlite, socket: Socket): Promise<void> {
  let buffer = Buffer.alloc(0);
  let started = false;
  let release: (() => void) | undefined;
  let queue = Promise.resolve();

  const hold = () =>
    new Promise<void>((held) => {
      void db._runExclusiveTransaction(
        () =>
          new Promise<void>((done) => {
            release = done;
            held();
          }),
      );
    });
  const run = async (bytes: Buffer) =>
    Buffer.from(await db._runExclusiveQuery(() => db.execProtocolRaw(new Uint8Array(bytes))));

  async function receive(chunk: Buffer) {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (socket.destroyed) return;
      if (!started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (length < 8 || length > 10_000) return void socket.destroy();
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        buffer = buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          socket.write("N");
          continue;
        }
        // A cancel request, or a protocol this bridge does not speak.
        if (code !== PROTOCOL_3) return void socket.destroy();
        started = true;
        socket.write(HELLO);
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1) + 1;
      if (length < 5) return void socket.destroy();
      if (buffer.length < length) return;
      const bytes = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      if (bytes[0] === 0x58) return void socket.end(); // Terminate
      if (!release) await hold();
      const answer = await run(bytes);
      socket.write(answer);
      // Idle: the answer ends with ReadyForQuery 'I'.
      if (answer.length >= 6 && answer[answer.length - 6] === 0x5a && answer[answer.length - 1] === 0x49) {
        release?.();
        release = undefined;
        socket.setTimeout(0);
      } else {
        socket.setTimeout(HOLD_TIMEOUT_MS);
      }
    }
  }

  return new Promise<void>((closed) => {
    socket.on("data", (chunk) => {
      queue = queue.then(() => receive(chunk)).catch(() => void socket.destroy());
    });
    socket.on("error", () => undefined);
    // Silent while holding the database (a forgotten BEGIN): the API must not wait on it for ever.
    socket.on("timeout", () => socket.destroy());
    socket.on("close", () => {
      queue = queue
        .then(async () => {
          // Left mid-batch or mid-transaction: nothing of it may stay.
          // (One message per call: PGlite reads only the first of several.)
          if (release) {
            await run(SYNC).catch(() => undefined);
            await run(ROLLBACK).catch(() => undefined);
          }
        })
        .finally(() => {
          release?.();
          release = undefined;
          closed();
        });
    });
  });
}

/** Serves `db` on the directory's socket; answers a stop that closes every connection. */
export async function serveSocket(db: PGlite, directory: string): Promise<() => Promise<void>> {
  const path = socketPath(directory);
  // Left by a holder that died: this process holds the lock now.
  rmSync(path, { force: true });
  const connections = new Map<Socket, Promise<void>>();
  const server = createServer((socket) => {
    connections.set(socket, bridge(db, socket));
  });
  await new Promise<void>((listening, failed) => {
    server.once("error", failed);
    server.listen(path, () => listening());
  });
  // The socket admits without a password: its owner only.
  chmodSync(path, 0o600);
  return async () => {
    const closing = new Promise<void>((closed) => server.close(() => closed()));
    for (const socket of connections.keys()) socket.destroy();
    await Promise.all(connections.values());
    await closing;
    rmSync(path, { force: true });
  };
}

/**
 * The directory a tool (the key CLI) uses when none is set: that of the
 * running dev stack (`npm start`) if there is one, so that its keys are the
 * ones the stack's API checks.
 */
export function toolDirectory(env: NodeJS.ProcessEnv, devStackDirectory: string): string | undefined {
  if (env.DATABASE_URL || env.PGLITE_DIRECTORY) return env.PGLITE_DIRECTORY;
  return existsSync(devStackDirectory) ? devStackDirectory : undefined;
}
