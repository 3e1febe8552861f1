// Every statement against reserve_readings, and the reads of the other
// aggregates a reading needs (payouts in flight, the agents that hear of it),
// through their stores.
import type { Database, Queryable } from "../../adapters/db/index.ts";
import type { Environment } from "../accounts/keys.ts";
import { zatDueIn } from "../payouts/store.ts";
import { accountsListening } from "../agents/store.ts";

export interface ReserveReading {
  readAt: Date;
  /** What custody's own node shows its address holding (unconfirmed change included), and its height. */
  heldZat: bigint;
  /** Payouts handed to the wallet and not yet settled on the chain: gone from custody, still counted there. */
  inFlightZat: bigint;
  zcashHeight: number;
  /** The registry's collateral (deposits recorded less payouts completed) at `blockNumber`. */
  expectedZat: bigint;
  depositedZat: bigint;
  paidOutZat: bigint;
  blockNumber: bigint;
  /** held + in flight − expected: negative is a shortfall. */
  differenceZat: bigint;
  toleranceZat: bigint;
  status: "ok" | "shortfall";
  mintsPaused: boolean;
  /** The watch stopped mints itself (and so may resume them). */
  pausedByWatch: boolean;
  /** The guardian's transaction this reading called for (stopping or resuming mints) failed; the next reading retries. */
  pauseFailed: boolean;
}

/** Payout statuses whose ZEC may have left custody while the chain still counts it. */
const IN_FLIGHT = ["sending", "sent", "settling"] as const;

export class ReservesStore {
  constructor(private readonly db: Database) {}

  inFlightZat(): Promise<bigint> {
    return zatDueIn(this.db, IN_FLIGHT);
  }

  /** Stores a reading; its id, for the guardian's outcome to be written to it. */
  async insert(tx: Queryable, r: ReserveReading): Promise<string> {
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO reserve_readings (read_at, held_zat, in_flight_zat, zcash_height, expected_zat, deposited_zat,
         paid_out_zat, block_number, difference_zat, tolerance_zat, status, mints_paused, paused_by_watch,
         pause_failed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       RETURNING id::text AS id`,
      [
        r.readAt,
        r.heldZat.toString(),
        r.inFlightZat.toString(),
        r.zcashHeight,
        r.expectedZat.toString(),
        r.depositedZat.toString(),
        r.paidOutZat.toString(),
        r.blockNumber.toString(),
        r.differenceZat.toString(),
        r.toleranceZat.toString(),
        r.status,
        r.mintsPaused,
        r.pausedByWatch,
        r.pauseFailed,
      ],
    );
    return row!.id;
  }

  /** What the guardian's transaction left: mints stopped or not, by the watch or not, or its failure. */
  async settle(
    id: string,
    outcome: { mintsPaused: boolean; pausedByWatch: boolean; error?: string | undefined },
  ): Promise<void> {
    await this.db.query(
      `UPDATE reserve_readings SET mints_paused = $2, paused_by_watch = $3, pause_failed = $4, pause_error = $5
       WHERE id = $1`,
      [id, outcome.mintsPaused, outcome.pausedByWatch, outcome.error !== undefined, outcome.error ?? null],
    );
  }

  /** The newest readings first, at most `limit`. */
  async recent(limit: number): Promise<ReserveReading[]> {
    const rows = await this.db.query<Record<string, string | number | boolean | Date>>(
      `SELECT * FROM reserve_readings ORDER BY id DESC LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      readAt: new Date(row.read_at as string),
      heldZat: BigInt(row.held_zat as string),
      inFlightZat: BigInt(row.in_flight_zat as string),
      zcashHeight: Number(row.zcash_height),
      expectedZat: BigInt(row.expected_zat as string),
      depositedZat: BigInt(row.deposited_zat as string),
      paidOutZat: BigInt(row.paid_out_zat as string),
      blockNumber: BigInt(row.block_number as string),
      differenceZat: BigInt(row.difference_zat as string),
      toleranceZat: BigInt(row.tolerance_zat as string),
      status: row.status as "ok" | "shortfall",
      mintsPaused: Boolean(row.mints_paused),
      pausedByWatch: Boolean(row.paused_by_watch),
      pauseFailed: Boolean(row.pause_failed),
    }));
  }

  /** Agents of any account in `environment` that subscribe to `type`: reserves are everyone's business. */
  accountsListening(tx: Queryable, environment: Environment, type: string): Promise<string[]> {
    return accountsListening(tx, environment, type);
  }
}
