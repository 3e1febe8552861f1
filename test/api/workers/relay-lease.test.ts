// Two API replicas on one PostgreSQL database with the same relayer key: one
// worker at a time holds the key's lease, so nonces are never fought over;
// when it stops, or goes silent past RELAY_LEASE_MS, the other takes over.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../../api/src/adapters/db/index.ts";
import { releaseProver } from "@zsd/sdk/notes";
import { type System, ZSD, accounts, deploySystem } from "../../helpers/fixtures.ts";
import { createTestDatabase } from "@zsd/testkit";
import { type RunningApi, eventually, queueMint, settledMint, startRelayApi } from "../helpers.ts";

const { bob } = accounts;

describe("relay worker lease across replicas", () => {
  let s: System;
  let pg: Awaited<ReturnType<typeof createTestDatabase>>;
  const dbs: Database[] = [];
  const replicas: RunningApi[] = [];

  beforeAll(async () => {
    s = await deploySystem();
    pg = await createTestDatabase("zsd_lease");
    for (let i = 0; i < 2; i++) {
      const db = await openDatabase({ url: pg.url });
      dbs.push(db);
      replicas.push(await startRelayApi(s, db, { RELAY_LEASE_MS: "1500" }));
    }
  });
  afterAll(async () => {
    for (const api of replicas) await api.close();
    for (const db of dbs) await db.close();
    await pg?.drop();
    await releaseProver();
  });

  const holder = async () =>
    (await dbs[0]!.query<{ holder: string }>("SELECT holder FROM worker_leases"))[0]?.holder ?? null;

  async function mintAll(via: RunningApi, count: number) {
    const queued = [];
    for (let i = 0; i < count; i++) queued.push(await queueMint(via, s, { recipient: bob.address, mintAmount: ZSD }));
    for (const { mintId } of queued) expect((await settledMint(via, mintId)).status).toBe("confirmed");
    return queued;
  }

  it("relays with one worker at a time and hands over when it stops", async () => {
    const [a, b] = replicas as [RunningApi, RunningApi];
    a.worker!.start();
    b.worker!.start();
    const firstRound = await mintAll(a, 3);
    const first = await holder();
    expect([a.worker!.holder, b.worker!.holder]).toContain(first);
    const [active, standby] = first === a.worker!.holder ? [a, b] : [b, a];

    await active.worker!.stop();
    const secondRound = await mintAll(standby, 2);
    expect(await holder()).toBe(standby.worker!.holder);

    const rows = await dbs[0]!.query<{ nonce: number; relayer: string }>("SELECT nonce, relayer FROM mints");
    expect(rows).toHaveLength(5);
    expect(new Set(rows.map((r) => r.nonce)).size).toBe(5);
    for (const { nullifierHash } of [...firstRound, ...secondRound]) {
      expect(await s.mintedEvents(nullifierHash)).toHaveLength(1);
    }
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(5n * ZSD);
    await standby.worker!.stop();
  });

  it("takes over from a worker that went silent once its lease runs out", async () => {
    const [a] = replicas as [RunningApi];
    const { mintId } = await queueMint(a, s, { recipient: bob.address, mintAmount: ZSD });
    // A replica that died holding the lease: nobody releases it.
    await dbs[0]!.query(
      `INSERT INTO worker_leases (name, holder, expires_at) VALUES ($1, 'worker_vanished', now() + interval '1500 milliseconds')
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at`,
      [`relayer:${a.worker!.address.toLowerCase()}`],
    );
    a.worker!.start();
    await new Promise((r) => setTimeout(r, 300));
    const [waiting] = await dbs[0]!.query<{ status: string }>("SELECT status FROM mints WHERE id = $1", [mintId]);
    expect(waiting!.status).toBe("queued");
    expect((await settledMint(a, mintId)).status).toBe("confirmed");
    expect(await eventually(holder, (h) => h === a.worker!.holder, "the lease to pass")).toBe(a.worker!.holder);
  });
});
