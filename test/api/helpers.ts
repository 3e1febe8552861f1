import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "node:http";
import { Redis } from "ioredis";
import type { Logger } from "../../api/src/observability/logger.ts";
import { createApp } from "../../api/src/app.ts";
import { type Config, loadConfig } from "../../api/src/config/config.ts";
import { type Database, openDatabase } from "../../api/src/adapters/db/index.ts";
import { createHttpServer } from "../../api/src/http/server.ts";
import { LOCAL_ATTESTORS, hardhatPrivateKey } from "../../scripts/lib/accounts.ts";
import { type SandboxZcash, type SandboxZcashOptions, startSandboxZcash } from "../../api/src/sandbox/zcash-side.ts";
import { freePort } from "../../scripts/lib/hardhat-node.ts";
import { ROOT } from "../../scripts/lib/paths.ts";
import { createNote, noteCommitment, publicSignalsToArray } from "@zsd/sdk/notes";
import { formatZsd } from "@zsd/sdk/units";
import { apiBundle } from "../helpers/api-bundle.ts";
import { type System, deploySystem } from "../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { afterAll, beforeAll } from "vitest";
import { releaseProver } from "@zsd/sdk/notes";
import type { DeployParameters } from "../../scripts/deploy.ts";

export type Storage = "pglite" | "postgres";

export interface RunningApi {
  url: string;
  config: Config;
  db: Database;
  keys: ReturnType<typeof createApp>["keys"];
  openApi: ReturnType<typeof createApp>["openApi"];
  custody: ReturnType<typeof createApp>["custody"];
  reserves: ReturnType<typeof createApp>["reserves"];
  worker: ReturnType<typeof createApp>["worker"];
  payouts: ReturnType<typeof createApp>["payouts"];
  priceFeed: ReturnType<typeof createApp>["priceFeed"];
  /** The webhook worker (not started; close stops it). */
  webhooks: ReturnType<typeof createApp>["webhooks"];
  /** The dashboard's outgoing mail (close waits for what is queued). */
  mailer: ReturnType<typeof createApp>["mailer"];
  /** Problems answered that the OpenAPI document does not declare: close fails when there are any. */
  undeclaredProblems: ReturnType<typeof createApp>["undeclaredProblems"];
  /** An account with one key of the deployment's environment. */
  accountId: string;
  secret: string;
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * A database per storage kind for one test file; dropped by the returned close.
 * Files take PostgreSQL unless they are about the embedded store: PGlite runs
 * the database in the test's own process, as WebAssembly, and cost a relay file
 * about a fifth of its time on two cores. PGlite stays covered by the files
 * that are about it (webhooks-idle, dashboard forms and accounts) and by the
 * Python SDK's stack (scripts/test-stack.ts, `npm start`'s defaults).
 */
export async function openStorage(
  storage: Storage,
): Promise<{ db: Database; /** PostgreSQL's, for a tool run beside the API. */ url?: string; close(): Promise<void> }> {
  if (storage === "pglite") {
    const db = await openDatabase({});
    return { db, close: () => db.close() };
  }
  const pg = await createTestDatabase("zsd_api");
  const db = await openDatabase({ url: pg.url });
  return {
    db,
    url: pg.url,
    close: async () => {
      await db.close();
      await pg.drop();
    },
  };
}

/**
 * The same database with some of its methods replaced (to count queries, or to
 * let a rival act at a chosen moment); every other method is the real one.
 */
export function overriding(db: Database, overrides: Partial<Pick<Database, "query" | "transaction">>): Database {
  return new Proxy(db, {
    get(target, property) {
      const value = (overrides as Record<PropertyKey, unknown>)[property] ?? Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export async function startApi(
  db: Database,
  env: Record<string, string> = {},
  options: { redis?: Redis; logger?: Logger } = {},
): Promise<RunningApi> {
  // No read cache in tests: each read must show the indexer at that moment. Tests poll
  // (every 50 ms, for seconds on a loaded machine): the rate limiter is tested on its own.
  const config = loadConfig({
    LOG_LEVEL: "silent",
    INDEXER_CACHE_MS: "0",
    RATE_LIMIT_SANDBOX: "100000",
    // The API shares this process's event loop with the test's prover (1.5 s per proof) and its chain clients,
    // which a deployed API does not: lateness here says nothing about the API's load. load-shed.test turns it on.
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: "0",
    INDEXER_URL: "http://127.0.0.1:9",
    RPC_URL: "http://127.0.0.1:9",
    ...env,
  });
  const { app, keys, openApi, custody, reserves, payouts, worker, priceFeed, webhooks, mailer, undeclaredProblems } =
    createApp({
      config,
      db,
      redis: options.redis,
      logger: options.logger,
    });
  const server: Server = createHttpServer(app, {
    headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    // Longer than the client's own idle timeout (fetch's, 4 s): the server shares this process's event loop with
    // the test's work (a proof, a lint), and a kept-alive socket it timed out as the loop came back would race
    // the test's next request on it (ECONNRESET). The client closes its idle sockets first.
    keepAliveTimeoutMs: 60_000,
  }).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const account = await keys.createAccount("test account");
  const { secret } = await keys.create(account.id, config.ENVIRONMENT, "test key");
  return {
    url,
    config,
    db,
    keys,
    openApi,
    custody,
    reserves,
    payouts,
    worker,
    priceFeed,
    webhooks,
    mailer,
    undeclaredProblems,
    accountId: account.id,
    secret,
    call: (path, init = {}) => {
      const { key = secret, headers, ...rest } = init;
      return fetch(`${url}${path}`, {
        ...rest,
        headers: {
          ...(key === null ? {} : { authorization: `Bearer ${key}` }),
          ...(headers as Record<string, string>),
        },
      });
    },
    close: async () => {
      await webhooks.stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await mailer.close();
      // Every test that meets an error checks the document promises it, for the operation that answered it.
      if (undeclaredProblems.size > 0) {
        const found = [...undeclaredProblems.values()].map((p) => `${p.operation} ${p.status} ${p.code}: ${p.why}`);
        throw new Error(`problems the OpenAPI document does not declare:\n${found.join("\n")}`);
      }
    },
  };
}

export const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

/** Polls `read` until `done` holds; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what = "the condition",
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A read that fails once (the shared chain node drops a request on a loaded machine: "HTTP request
    // failed") is read again; only the deadline ends the wait, with the last failure or value seen.
    let seen: { value: T } | { error: unknown };
    try {
      seen = { value: await read() };
    } catch (error) {
      seen = { error };
    }
    if ("value" in seen && done(seen.value)) return seen.value;
    if (Date.now() > deadline) {
      if ("error" in seen) throw seen.error;
      const shown = JSON.stringify(seen.value, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
      throw new Error(`timed out waiting for ${what}: last saw ${shown}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A relay API with the sandbox's Zcash side it pays from and records deposits through. */
export type RelayApi = RunningApi & { zcash: SandboxZcash };

/**
 * The relay API over a deployed system: its deployment manifest, custody's (#1) and the relayer's
 * (#4) development keys, the sandbox's Zcash side (a simulated node with custody's wallet and the
 * three attestors, 2 of 3 signing each deposit batch), a 100 ms worker poll (200 ms for payouts).
 * The worker is not started. `close` also stops the Zcash side and removes the manifest's directory.
 */
export async function startRelayApi(
  s: System,
  db: Database,
  /** Settings over the defaults; a function gets the Zcash side first (its custody address, say). */
  env: Record<string, string> | ((zcash: SandboxZcash) => Record<string, string>) = {},
  options: {
    logger?: Logger;
    zcash?: Partial<Pick<SandboxZcashOptions, "blockIntervalMs" | "minConfirmations" | "floatZat">>;
  } = {},
): Promise<RelayApi> {
  const dir = mkdtempSync(join(tmpdir(), "zsd-relay-"));
  writeFileSync(join(dir, "deployment.json"), JSON.stringify(s.deployment));
  const zcash = await startSandboxZcash({
    chainId: s.chainId,
    registry: s.deployment.contracts.CollateralRegistry.address,
    rpcUrl: s.rpcUrl,
    attestorKeys: LOCAL_ATTESTORS.accounts.map((i) => hardhatPrivateKey(i)),
    // Tests also record deposits straight on the chain under the attestors' keys (the test kit's
    // shortcut past the Zcash side): custody's wallet holds enough of its own to pay what they back.
    floatZat: 1_000_000n * 100_000_000n,
    ...options.zcash,
  });
  const api = await startApi(
    db,
    {
      DEPLOYMENT_FILE: join(dir, "deployment.json"),
      RPC_URL: s.rpcUrl,
      CUSTODY_PRIVATE_KEY: hardhatPrivateKey(1),
      RELAYER_PRIVATE_KEY: hardhatPrivateKey(4),
      ...zcash.env,
      // A request that changes state wakes the worker at once; these polls find what a test did on the chain or
      // in the database itself, which wakes no worker (relay-idle tests that). Each pass reads the database and
      // the chain: a started relay API cost the machine 0.39-0.51 of a core at rest with 50 and 100 ms, and
      // 0.26 with these (measured across the worker, Hardhat and PostgreSQL; a suite runs one in most files).
      RELAY_POLL_MS: "100",
      RELAY_IDLE_POLL_MS: "100",
      PAYOUT_POLL_MS: "200",
      PAYOUT_CONFIRMATIONS: "1",
      ...(typeof env === "function" ? env(zcash) : env),
    },
    options,
  ).catch(async (error: unknown) => {
    await zcash.close();
    throw error;
  });
  return {
    ...api,
    zcash,
    close: async () => {
      await api.worker?.stop();
      await api.close();
      await zcash.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What `useRelayApi` set up for a file: the deployed system, its relay API and the API's database. */
export interface RelayApiStack {
  s: System;
  api: RelayApi;
  db: Database;
}

/**
 * A file's relay API in one line: registers the beforeAll that deploys the system on the worker's
 * node, opens a database (PostgreSQL unless `storage` says otherwise) and starts the relay API over
 * them (`startRelayApi`), and the afterAll that stops all three and the prover. `ready` runs once
 * they are up: it takes what the file keeps (`({ s, api } = stack)`) and does the file's own set-up.
 * A file's own afterAll hooks run before this one's, while the stack is still up.
 */
export function useRelayApi(
  options: {
    deploy?: Partial<DeployParameters>;
    storage?: Storage;
    env?: Parameters<typeof startRelayApi>[2];
    logger?: Logger;
    zcash?: NonNullable<Parameters<typeof startRelayApi>[3]>["zcash"];
    /** Runs once the system is deployed, before the API starts (a proxy in front of the node, say). */
    prepare?: (s: System) => unknown;
    /** Starts the relay worker once `ready` is done (the webhook worker stays stopped). */
    startWorker?: boolean;
  } = {},
  ready?: (stack: RelayApiStack) => unknown,
): void {
  let storage: Awaited<ReturnType<typeof openStorage>> | undefined;
  let api: RelayApi | undefined;
  beforeAll(async () => {
    const s = await deploySystem(options.deploy);
    await options.prepare?.(s);
    storage = await openStorage(options.storage ?? "postgres");
    api = await startRelayApi(s, storage.db, options.env, { logger: options.logger, zcash: options.zcash });
    await ready?.({ s, api, db: storage.db });
    if (options.startWorker) api.worker!.start();
  });
  afterAll(async () => {
    await api?.close();
    await storage?.close();
    await releaseProver();
  });
}

/** What a wallet does before it is told "queued": sandbox deposit, proof, submission, mint (shape A). */
export async function queueMint(
  api: RunningApi,
  s: System,
  options: { recipient: `0x${string}`; mintAmount: bigint },
): Promise<{ mintId: string; nullifierHash: bigint }> {
  const note = createNote();
  const deposit = await api.call(
    "/v1/sandbox/deposits",
    json({ amount: "4", noteCommitment: noteCommitment(note).toString() }),
  );
  if (deposit.status !== 201) throw new Error(`sandbox deposit: ${deposit.status} ${await deposit.text()}`);
  const proved = await s.prove({
    note,
    amountZat: 400_000_000n,
    mintAmount: options.mintAmount,
    recipient: options.recipient,
  });
  const amount = formatZsd(options.mintAmount);
  const submitted = await api.call(
    "/v1/proofs/submit",
    json({
      proof: proved.raw.proof,
      publicSignals: publicSignalsToArray(proved.raw.publicSignals),
      owner: proved.binding.owner,
      mintAmount: amount,
      recipient: options.recipient,
    }),
  );
  if (submitted.status !== 201) throw new Error(`proof submission: ${submitted.status} ${await submitted.text()}`);
  const { proofId } = (await submitted.json()) as { proofId: string };
  const queued = await api.call(
    "/v1/mint",
    json({ amount, collateralType: "ZEC", proofId, recipient: options.recipient }),
  );
  if (queued.status !== 202) throw new Error(`mint: ${queued.status} ${await queued.text()}`);
  return { mintId: ((await queued.json()) as { mintId: string }).mintId, nullifierHash: proved.request.nullifierHash };
}

/** A mint as GET /v1/mints/{id} shows it, once confirmed or failed. */
export function settledMint(api: RunningApi, mintId: string) {
  return eventually(
    async () =>
      (await (await api.call(`/v1/mints/${mintId}`)).json()) as {
        status: string;
        txHash: string | null;
        failureReason: string | null;
      },
    (m) => m.status === "confirmed" || m.status === "failed",
    `mint ${mintId} to settle`,
  );
}

export interface ApiProcess {
  port: number;
  /** Starts api/src/index.ts and waits until it answers. */
  start(): Promise<void>;
  /** SIGKILL, as a crash: nothing is drained or flushed. */
  kill(): Promise<void>;
  /** A request with the key: a POST when there is a body. */
  call(path: string, body?: unknown): Promise<Response>;
}

/**
 * The API as a real process on a free port, for crash tests: started, killed
 * with SIGKILL and started again on the same port and settings (`env`, on top
 * of this process's environment). It runs the API bundled once per test file.
 */
export async function apiProcess(secret: string, env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  return {
    port,
    async start() {
      child = spawn(process.execPath, [await apiBundle()], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), LOG_LEVEL: "silent", ...env },
        stdio: "ignore",
      });
      // The API built once (see api-bundle.ts): 6-9 s a start on a 2-core machine at load 11,
      // against 12-19 s through tsx, which compiles it on every start. The wait ends early on exit.
      const started = child;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        if (started.exitCode !== null) throw new Error(`the API exited with ${started.exitCode} while starting`);
        try {
          if ((await fetch(`${url}/v1/health`)).ok) return;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      throw new Error("the API did not start in 120 s");
    },
    async kill() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGKILL");
      await exited;
      // The API itself is gone (no wrapper process left serving).
      const answered = await fetch(`${url}/v1/health`).then(
        () => true,
        () => false,
      );
      if (answered) throw new Error("the API still answers after SIGKILL");
    },
    call: (path, body) =>
      fetch(`${url}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}
