// Custody's ZEC against what the chain says it holds: read on a schedule and after every payout,
// kept as a history, published at GET /v1/reserves. A shortfall beyond the tolerance tells the
// operator (metric, webhook to every subscribed agent) and stops new mints through the guardian
// key until the reserves are made good; the watch resumes only mints it stopped itself. The reading
// and the alert are stored before the guardian acts, so a guardian transaction that fails (a key out
// of gas, a node down, the role revoked) never silences the alert: the reading says it failed, and
// the next reading tries again, since it decides from the chain's mintsPaused as it then reads it.
import type { Hex } from "viem";
import { collateralRegistryAbi, stableMinterAbi } from "@zsd/sdk";
import { formatZec } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import type { ZcashdClient } from "../../adapters/custody/zcashd.ts";
import type { Database, Queryable } from "../../adapters/db/index.ts";
import { emitEvent } from "../agents/events.ts";
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

/** The reserve_readings table's SQL. */
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

export interface ReservesWatchOptions {
  environment: Environment;
  toleranceZat: bigint;
  /** The guardian's key (StableMinter's GUARDIAN_ROLE): without it a shortfall is told, mints are not stopped. */
  guardianKey?: Hex;
  onQueued?: () => void;
  onReading?: (reading: ReserveReading) => void;
  /** The guardian's transaction failed (the reading and its alert are stored all the same). */
  onPauseFailed?: (error: unknown, reading: ReserveReading) => void;
}

export class ReservesWatch {
  readonly store: ReservesStore;
  #running: Promise<ReserveReading> | undefined;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    private readonly zcashd: ZcashdClient,
    private readonly custodyAddress: string,
    private readonly options: ReservesWatchOptions,
  ) {
    this.store = new ReservesStore(db);
  }

  /** One reading at a time: a payout's call while the schedule's runs waits for that one and reads anew. */
  reconcile(): Promise<ReserveReading> {
    const run = (this.#running ?? Promise.resolve()).catch(() => undefined).then(() => this.#reconcile());
    this.#running = run;
    return run;
  }

  async #reconcile(): Promise<ReserveReading> {
    const client = this.chain.client;
    // Not the client's cached head: a reading must be of the chain as it is now.
    const blockNumber = await this.chain.read(() => client.getBlockNumber({ cacheTime: 0 }));
    const registry = { address: this.chain.registry, abi: collateralRegistryAbi, blockNumber } as const;
    const [expectedZat, depositedZat, paidOutZat, mintsPaused] = await this.chain.read(() =>
      Promise.all([
        client.readContract({ ...registry, functionName: "totalCollateralZat" }),
        client.readContract({ ...registry, functionName: "totalDepositedZat" }),
        client.readContract({ ...registry, functionName: "totalPaidOutZat" }),
        client.readContract({
          address: this.chain.minter,
          abi: stableMinterAbi,
          functionName: "mintsPaused",
          blockNumber,
        }),
      ]),
    );
    // In flight before the balance: a payout that leaves between the two reads is then counted twice
    // (a passing surplus), never missed (a false shortfall).
    const inFlightZat = await this.store.inFlightZat();
    const zcashHeight = await this.zcashd.call<number>("getblockcount");
    // Unconfirmed notes count: the change of a payout in the mempool is custody's all the same.
    const heldZat = BigInt(await this.zcashd.call<number | string>("z_getbalance", [this.custodyAddress, 0, true]));
    const differenceZat = heldZat + inFlightZat - expectedZat;
    const status = -differenceZat > this.options.toleranceZat ? "shortfall" : "ok";
    const [previous] = await this.store.recent(1);
    const pausedByWatch = previous?.pausedByWatch === true && mintsPaused;
    const guardian = this.options.guardianKey !== undefined;
    // What the guardian must do, decided from the chain as read: so a round whose transaction failed
    // is followed by one that tries again.
    const action =
      guardian && status === "shortfall" && !mintsPaused
        ? "pause"
        : guardian && status === "ok" && pausedByWatch
          ? "resume"
          : undefined;
    const reading: ReserveReading = {
      readAt: new Date(),
      heldZat,
      inFlightZat,
      zcashHeight,
      expectedZat,
      depositedZat,
      paidOutZat,
      blockNumber,
      differenceZat,
      toleranceZat: this.options.toleranceZat,
      status,
      mintsPaused,
      pausedByWatch,
      pauseFailed: false,
    };
    const changed = (previous?.status ?? "ok") !== status;
    const id = await this.db.transaction(async (tx) => {
      const id = await this.store.insert(tx, reading);
      if (changed) {
        const type = status === "shortfall" ? "reserves.shortfall" : "reserves.restored";
        for (const account of await this.store.accountsListening(tx, this.options.environment, type)) {
          await emitEvent(tx, {
            account,
            environment: this.options.environment,
            type,
            data: reservesEventData(reading),
          });
        }
      }
      return id;
    });
    if (changed) this.options.onQueued?.();
    if (action) {
      try {
        if (action === "pause") {
          const held = formatZec(heldZat + inFlightZat);
          await this.#setMintsPaused(
            true,
            `reserves: custody holds ${held} ZEC, the chain counts ${formatZec(expectedZat)}`,
          );
        } else {
          await this.#setMintsPaused(false, "reserves: made good");
        }
        reading.mintsPaused = action === "pause";
        reading.pausedByWatch = action === "pause";
        await this.store.settle(id, reading);
      } catch (error) {
        reading.pauseFailed = true;
        // viem's short message and the node's own words name the cause (no funds, a revert) without
        // the request it made (its message adds the RPC URL and the call).
        const { shortMessage, details } = error as { shortMessage?: string; details?: string };
        const message = shortMessage ? [shortMessage, details].filter(Boolean).join(": ") : String(error);
        await this.store.settle(id, { ...reading, error: message });
        this.options.onPauseFailed?.(error, reading);
      }
    }
    this.options.onReading?.(reading);
    return reading;
  }

  /** Not through `chain.read`: its failure is recorded as it is (no gas, a revert), not as a node down. */
  async #setMintsPaused(paused: boolean, reason: string): Promise<void> {
    const wallet = this.chain.wallet(this.options.guardianKey!);
    const hash = await wallet.writeContract({
      address: this.chain.minter,
      abi: stableMinterAbi,
      functionName: "setMintsPaused",
      args: [paused, reason],
    } as never);
    const receipt = await this.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success") throw new Error(`guardian transaction ${hash} reverted`);
  }
}

/** A reading as the API and the webhooks show it: decimal ZEC strings and zatoshi strings. */
export function presentReading(r: ReserveReading) {
  return {
    readAt: r.readAt.toISOString(),
    custody: {
      held: formatZec(r.heldZat),
      heldZat: r.heldZat.toString(),
      inFlight: formatZec(r.inFlightZat),
      inFlightZat: r.inFlightZat.toString(),
      zcashHeight: r.zcashHeight,
    },
    chain: {
      expected: formatZec(r.expectedZat),
      expectedZat: r.expectedZat.toString(),
      depositedZat: r.depositedZat.toString(),
      paidOutZat: r.paidOutZat.toString(),
      blockNumber: Number(r.blockNumber),
    },
    difference:
      (r.differenceZat < 0n ? "-" : "") + formatZec(r.differenceZat < 0n ? -r.differenceZat : r.differenceZat),
    differenceZat: r.differenceZat.toString(),
    toleranceZat: r.toleranceZat.toString(),
    status: r.status,
    mintsPaused: r.mintsPaused,
    pauseFailed: r.pauseFailed,
  };
}

function reservesEventData(r: ReserveReading): Record<string, unknown> {
  const shown = presentReading(r);
  return {
    status: shown.status,
    heldZat: shown.custody.heldZat,
    inFlightZat: shown.custody.inFlightZat,
    expectedZat: shown.chain.expectedZat,
    differenceZat: shown.differenceZat,
    blockNumber: shown.chain.blockNumber,
    zcashHeight: shown.custody.zcashHeight,
    mintsPaused: shown.mintsPaused,
    readAt: shown.readAt,
  };
}
