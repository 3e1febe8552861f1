import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { Redis } from "ioredis";
import { createApp } from "../../api/src/app.ts";
import { type Config, loadConfig } from "../../api/src/config.ts";
import { type Database, openDatabase } from "../../api/src/db/index.ts";
import { createTestDatabase } from "../helpers/postgres.ts";

export type Storage = "pglite" | "postgres";

export interface RunningApi {
  url: string;
  config: Config;
  db: Database;
  keys: ReturnType<typeof createApp>["keys"];
  openApi: ReturnType<typeof createApp>["openApi"];
  custody: ReturnType<typeof createApp>["custody"];
  worker: ReturnType<typeof createApp>["worker"];
  payouts: ReturnType<typeof createApp>["payouts"];
  /** An account with one key of the deployment's environment. */
  accountId: string;
  secret: string;
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/** A database per storage kind for one test file; dropped by the returned close. */
export async function openStorage(storage: Storage): Promise<{ db: Database; close(): Promise<void> }> {
  if (storage === "pglite") {
    const db = await openDatabase({});
    return { db, close: () => db.close() };
  }
  const pg = await createTestDatabase("zsd_api");
  const db = await openDatabase({ url: pg.url });
  return {
    db,
    close: async () => {
      await db.close();
      await pg.drop();
    },
  };
}

export async function startApi(
  db: Database,
  env: Record<string, string> = {},
  options: { redis?: Redis } = {},
): Promise<RunningApi> {
  // No read cache in tests: each read must show the indexer at that moment.
  const config = loadConfig({
    LOG_LEVEL: "silent",
    INDEXER_CACHE_MS: "0",
    INDEXER_URL: "http://127.0.0.1:9",
    RPC_URL: "http://127.0.0.1:9",
    ...env,
  });
  const { app, keys, openApi, custody, payouts, worker } = createApp({ config, db, redis: options.redis });
  const server: Server = app.listen(0, "127.0.0.1");
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
    payouts,
    worker,
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
