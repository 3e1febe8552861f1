import { Hono } from "hono";
import { db, publicClients } from "ponder:api";
import schema from "ponder:schema";
import { and, asc, count, desc, eq, gt, gte, inArray, or, replaceBigInts, sql } from "ponder";
import { type Hex, getAddress, isAddress } from "viem";
import { PRICE_DECIMALS, usdValueOfZat } from "@zsd/sdk/units";
import "./internal-only";
import { PROPOSAL_STATES, proposalState } from "./proposal-state";

// Only these JSON routes: no `/sql/*`. Ponder 0.16's SQL over HTTP checks a
// query once and caches the verdict under 10 hex digits of its SHA-256, so a
// colliding twin of an allowed query runs unchecked.
const app = new Hono();

// Errors leave as generic JSON: Ponder's own handler answers with the message
// and the source file's path. The details go to the log.
app.onError((error, c) => {
  console.error(
    JSON.stringify({
      level: 50,
      time: Date.now(),
      msg: "Failed to handle HTTP request",
      method: c.req.method,
      path: c.req.path,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    }),
  );
  return c.json({ error: "internal", detail: "internal error" }, 500);
});

const ADDRESS = /^0x[0-9a-f]{40}$/;
const INT32_MAX = 2 ** 31 - 1;

/**
 * Amounts leave as decimal strings, never JS numbers; addresses (stored in
 * lower case) leave checksummed.
 */
function json(value: unknown): unknown {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return ADDRESS.test(v) ? getAddress(v) : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(replaceBigInts(value, (v) => v.toString()));
}
const notFound = (what: string) => ({ error: "not_found", detail: `${what} not found` });

function parseBigInt(value: string): bigint | undefined {
  return /^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/.test(value) ? BigInt(value) : undefined;
}

app.get("/supply", async (c) => {
  const row = await db.query.supply.findFirst({ where: eq(schema.supply.id, "ZSD") });
  const minted = row?.minted ?? 0n;
  const burned = row?.burned ?? 0n;
  return c.json(
    json({
      minted,
      burned,
      circulating: minted - burned,
      holders: row?.holders ?? 0,
      updatedAtBlock: row?.updatedAtBlock ?? null,
    }),
  );
});

app.get("/collateral", async (c) => {
  const [row, supplyRow] = await Promise.all([
    db.query.collateral.findFirst({ where: eq(schema.collateral.id, "ZEC") }),
    db.query.supply.findFirst({ where: eq(schema.supply.id, "ZSD") }),
  ]);
  const outstandingZat = row?.outstandingZat ?? 0n;
  const price = row?.price ?? 0n;
  // USD with 18 decimals, the token's unit.
  const valueUsd = usdValueOfZat(outstandingZat, price);
  const circulating = (supplyRow?.minted ?? 0n) - (supplyRow?.burned ?? 0n);
  return c.json(
    json({
      depositedZat: row?.depositedZat ?? 0n,
      paidOutZat: row?.paidOutZat ?? 0n,
      outstandingZat,
      pendingRedemptionZat: row?.pendingRedemptionZat ?? 0n,
      heldPayoutZat: row?.heldPayoutZat ?? 0n,
      deposits: row?.deposits ?? 0,
      unmintedZat: row?.unmintedZat ?? 0n,
      positionCollateralZat: row?.positionCollateralZat ?? 0n,
      backingCollateralZat: row?.backingCollateralZat ?? 0n,
      freeCollateralZat: row?.freeCollateralZat ?? 0n,
      price,
      priceDecimals: PRICE_DECIMALS,
      priceUpdatedAt: row?.priceUpdatedAt ?? null,
      valueUsd,
      circulatingSupply: circulating,
      // Basis points of collateral value over circulating supply; null while nothing circulates.
      collateralRatioBps: circulating > 0n ? (valueUsd * 10_000n) / circulating : null,
      updatedAtBlock: row?.updatedAtBlock ?? null,
    }),
  );
});

app.get("/accounts/:address", async (c) => {
  const raw = c.req.param("address");
  if (!isAddress(raw, { strict: false }))
    return c.json({ error: "invalid_address", detail: "not an EVM address" }, 400);
  const address = getAddress(raw);
  const row = await db.query.account.findFirst({ where: eq(schema.account.address, address) });
  return c.json(json({ address, balance: row?.balance ?? 0n, updatedAtBlock: row?.updatedAtBlock ?? null }));
});

/** Deposit leaves in tree order, for rebuilding Merkle paths: ?from=<index>&limit=<n ≤ 5000>. */
app.get("/deposits", async (c) => {
  const from = Number(c.req.query("from") ?? 0);
  const limit = Number(c.req.query("limit") ?? 1000);
  // `index` is a 32-bit integer column: a larger `from` would be a database error.
  if (
    !Number.isInteger(from) ||
    from < 0 ||
    from > INT32_MAX ||
    !Number.isInteger(limit) ||
    limit < 1 ||
    limit > 5000
  ) {
    return c.json({ error: "invalid_query", detail: "from must be >= 0 and limit between 1 and 5000" }, 400);
  }
  const rows = await db
    .select()
    .from(schema.deposit)
    .where(gte(schema.deposit.index, from))
    .orderBy(asc(schema.deposit.index))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return c.json(json({ deposits: page, next: rows.length > limit ? page[page.length - 1]!.index + 1 : null }));
});

/** The registry's MAX_PENDING: the queue never holds more. */
const MAX_PENDING = 1024;

/**
 * Every leaf queued and not yet in the tree, by sequence: a wallet waits for its note here,
 * an inserter passes this list to `insertPendingLeaves`. `queuedCount` is the next sequence.
 * `amountZat` is a released note's amount, 0 for change (private).
 */
app.get("/pending-leaves", async (c) => {
  const [pending, queue] = await Promise.all([
    db
      .select({
        sequence: schema.pendingLeaf.sequence,
        leaf: schema.pendingLeaf.leaf,
        amountZat: schema.pendingLeaf.amountZat,
        blockNumber: schema.pendingLeaf.blockNumber,
        timestamp: schema.pendingLeaf.timestamp,
        txHash: schema.pendingLeaf.txHash,
      })
      .from(schema.pendingLeaf)
      .orderBy(asc(schema.pendingLeaf.sequence))
      .limit(MAX_PENDING),
    db.query.leafQueue.findFirst({ where: eq(schema.leafQueue.id, "queue") }),
  ]);
  return c.json(json({ pending, queuedCount: queue?.queuedCount ?? 0n }));
});

/** Leaves whose amount is not published: change, and deposits recorded in a batch. */
const HIDDEN_AMOUNT = ["change", "batch-deposit"];

/**
 * The anonymity set of a mint proving `floorZat`: how many leaves could hold at least the
 * floor at once, as far as the chain shows. A note whose public amount reaches it counts; a batch of
 * deposits, which publishes its total T only, counts min(n, floor(T / floor)) of its n leaves when its
 * bound (T less a zatoshi for each other leaf) reaches the floor: its leaves cannot all hold the floor
 * unless T covers them, so dust recorded beside a large deposit does not count as large. Change leaves,
 * whose amount nothing bounds, are not counted (a lower bound). Leaves of private amount (change and
 * batched deposits) are counted apart. ?floorZat=<zatoshi>.
 */
app.get("/anonymity", async (c) => {
  const raw = c.req.query("floorZat") ?? "";
  if (!/^[0-9]{1,19}$/.test(raw)) {
    return c.json({ error: "invalid_query", detail: "floorZat is a whole number of zatoshi" }, 400);
  }
  const floorZat = BigInt(raw);
  // Every leaf holds a zatoshi at least (T >= n on chain), so a floor of 0 counts as 1: min(n, T) = n.
  const divisor = sql`${String(floorZat > 0n ? floorZat : 1n)}::numeric`;
  const batch = schema.depositBatch;
  const notes = db
    .select({ n: count() })
    .from(schema.deposit)
    .where(and(gte(schema.deposit.maxAmountZat, floorZat), eq(schema.deposit.kind, "note")));
  const [[candidates], [hidden], [leaves]] = await Promise.all([
    // One statement: the batches' sum and the notes' count are read together.
    db
      .select({
        n: sql<string>`coalesce(sum(least(${batch.size}, div(${batch.totalZat}, ${divisor}))), 0) + (${notes})`.mapWith(
          Number,
        ),
      })
      .from(batch)
      .where(gte(batch.maxAmountZat, floorZat)),
    db.select({ n: count() }).from(schema.deposit).where(inArray(schema.deposit.kind, HIDDEN_AMOUNT)),
    db.select({ n: count() }).from(schema.deposit),
  ]);
  return c.json(
    json({ floorZat, candidates: candidates?.n ?? 0, hiddenAmountLeaves: hidden?.n ?? 0, leaves: leaves?.n ?? 0 }),
  );
});

app.get("/mints/:nullifierHash", async (c) => {
  const key = parseBigInt(c.req.param("nullifierHash"));
  if (key === undefined)
    return c.json({ error: "invalid_nullifier", detail: "a decimal or 0x-hex field element" }, 400);
  const row = await db.query.mint.findFirst({ where: eq(schema.mint.nullifierHash, key) });
  return row ? c.json(json(row)) : c.json(notFound("mint"), 404);
});

app.get("/redemptions/:id", async (c) => {
  const id = parseBigInt(c.req.param("id"));
  if (id === undefined) return c.json({ error: "invalid_id", detail: "a redemption id is a decimal integer" }, 400);
  const row = await db.query.redemption.findFirst({ where: eq(schema.redemption.id, id) });
  return row ? c.json(json(row)) : c.json(notFound("redemption"), 404);
});

app.get("/prices/latest", async (c) => {
  const [row] = await db.select().from(schema.priceUpdate).orderBy(desc(schema.priceUpdate.roundId)).limit(1);
  return row ? c.json(json({ ...row, decimals: PRICE_DECIMALS })) : c.json(notFound("price"), 404);
});

/**
 * The governor's clock for a transaction sent now: the next block. A vote sent
 * now lands there, and Hardhat evaluates `state()` calls in that block too.
 */
async function clock(): Promise<bigint> {
  return (await publicClients.zsd.getBlockNumber({ cacheTime: 0 })) + 1n;
}

/** A page size from the query: 1 to 100, `fallback` when absent; undefined when invalid. */
function pageSize(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  return /^[0-9]{1,3}$/.test(value) && n >= 1 && n <= 100 ? n : undefined;
}

/**
 * Proposals newest first (by creation block, then id), with their state at
 * the chain's clock: ?state=<state>&limit=<1..100>&startingAfter=<id>. The
 * state is computed per row, so the filter runs after the read; governors
 * see tens of proposals, not millions.
 */
app.get("/proposals", async (c) => {
  const state = c.req.query("state");
  const limit = pageSize(c.req.query("limit"), 100);
  const after = c.req.query("startingAfter");
  const afterId = after === undefined ? undefined : parseBigInt(after);
  if ((state && !(PROPOSAL_STATES as readonly string[]).includes(state)) || limit === undefined) {
    return c.json({ error: "invalid_query", detail: `state must be one of ${PROPOSAL_STATES.join(", ")}` }, 400);
  }
  if (after !== undefined && afterId === undefined) {
    return c.json({ error: "invalid_query", detail: "startingAfter is a proposal id" }, 400);
  }
  const [rows, now] = await Promise.all([
    db.select().from(schema.proposal).orderBy(desc(schema.proposal.createdAtBlock), desc(schema.proposal.id)),
    clock(),
  ]);
  // The cursor is placed among all proposals: it may have left the filtered state since its page.
  const at = afterId === undefined ? -1 : rows.findIndex((p) => p.id === afterId);
  if (afterId !== undefined && at < 0) return c.json(notFound("proposal"), 404);
  const proposals = rows
    .slice(at + 1)
    .map((p) => ({ ...p, state: proposalState(p, now) }))
    .filter((p) => !state || p.state === state);
  return c.json(json({ proposals: proposals.slice(0, limit), hasMore: proposals.length > limit, clock: now }));
});

app.get("/proposals/:id", async (c) => {
  const id = parseBigInt(c.req.param("id"));
  if (id === undefined) return c.json({ error: "invalid_id", detail: "a proposal id is a decimal integer" }, 400);
  const [row, now] = await Promise.all([db.query.proposal.findFirst({ where: eq(schema.proposal.id, id) }), clock()]);
  if (!row) return c.json(notFound("proposal"), 404);
  return c.json(json({ ...row, state: proposalState(row, now), clock: now }));
});

/** A proposal's votes in the order they were cast: ?limit=<1..100>&startingAfter=<voter address>. */
app.get("/proposals/:id/votes", async (c) => {
  const id = parseBigInt(c.req.param("id"));
  const limit = pageSize(c.req.query("limit"), 20);
  const after = c.req.query("startingAfter");
  if (id === undefined || limit === undefined || (after !== undefined && !isAddress(after, { strict: false }))) {
    return c.json({ error: "invalid_query", detail: "a proposal id, limit 1 to 100, startingAfter a voter" }, 400);
  }
  let where = eq(schema.vote.proposalId, id);
  if (after !== undefined) {
    const cursor = await db.query.vote.findFirst({ where: eq(schema.vote.id, `${id}-${after.toLowerCase()}`) });
    if (!cursor) return c.json(notFound("vote"), 404);
    where = and(
      where,
      or(
        gt(schema.vote.blockNumber, cursor.blockNumber),
        and(eq(schema.vote.blockNumber, cursor.blockNumber), gt(schema.vote.id, cursor.id)),
      ),
    )!;
  }
  const rows = await db
    .select()
    .from(schema.vote)
    .where(where)
    .orderBy(asc(schema.vote.blockNumber), asc(schema.vote.id))
    .limit(limit + 1);
  return c.json(json({ votes: rows.slice(0, limit), hasMore: rows.length > limit }));
});

const POSITION_STATUSES = ["open", "liquidated", "closed"] as const;

/**
 * Positions by id, ascending: ?status=<open|liquidated|closed>&limit=<1..100>&startingAfter=<id>.
 * A liquidation keeper lists the open ones here and reads each from the
 * minter: `debt` and `collateralZat` are as of the position's last own event,
 * not lowered by the redemptions since (see ponder.schema.ts).
 */
app.get("/positions", async (c) => {
  const status = c.req.query("status");
  const limit = pageSize(c.req.query("limit"), 100);
  const after = c.req.query("startingAfter");
  const afterId = after === undefined ? undefined : parseBigInt(after);
  if ((status !== undefined && !(POSITION_STATUSES as readonly string[]).includes(status)) || limit === undefined) {
    return c.json(
      { error: "invalid_query", detail: `status must be one of ${POSITION_STATUSES.join(", ")}, limit 1 to 100` },
      400,
    );
  }
  if (after !== undefined && afterId === undefined) {
    return c.json({ error: "invalid_query", detail: "startingAfter is a position id" }, 400);
  }
  // Ids are dense: the cursor needs no row of its own, nor to have the status asked for.
  const where = and(
    status === undefined ? undefined : eq(schema.position.status, status),
    afterId === undefined ? undefined : gt(schema.position.id, afterId),
  );
  const rows = await db
    .select()
    .from(schema.position)
    .where(where)
    .orderBy(asc(schema.position.id))
    .limit(limit + 1);
  return c.json(json({ positions: rows.slice(0, limit), hasMore: rows.length > limit }));
});

app.get("/transactions/:hash/mint", async (c) => {
  const hash = c.req.param("hash") as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) return c.json({ error: "invalid_hash", detail: "a 32-byte hex hash" }, 400);
  const row = await db.query.mint.findFirst({ where: eq(schema.mint.txHash, hash.toLowerCase() as Hex) });
  return row ? c.json(json(row)) : c.json(notFound("mint"), 404);
});

// Last, so that it only answers what no route above (nor Ponder's own) did.
app.all("*", (c) => c.json({ error: "not_found", detail: "no such route" }, 404));

export default app;
