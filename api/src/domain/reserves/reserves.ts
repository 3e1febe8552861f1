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
import type { Database } from "../../adapters/db/index.ts";
import { emitEvent } from "../agents/events.ts";
import type { Environment } from "../accounts/keys.ts";
import { type ReserveReading, ReservesStore } from "./store.ts";

export type { ReserveReading } from "./store.ts";

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
