// The relay worker: one per relayer key, so it alone owns the key's nonces.
// It schedules passes while it holds the key's lease (./lease.ts): custody
// deposit scans every scanEveryMs, the mint relay (./mint-relay.ts) and the
// redemption relay (./redemption-relay.ts) every pass, both sending through
// one transaction sender (./sender.ts), the position relay and the
// liquidation keeper (./position-relay.ts, ./keeper.ts), redirects of failed
// payouts (./redirect-relay.ts), the insertion of the registry's queued
// change leaves (./leaf-inserter.ts), and payouts (./payouts.ts) every
// payoutEveryMs. Jobs wait in the database, so a restarted worker resumes
// from there.
import type { Address, Hex } from "viem";
import type { Chain } from "../../adapters/chain.ts";
import type { Database } from "../../adapters/db/index.ts";
import type { ComplianceService } from "../../domain/compliance/compliance.ts";
import type { GovernanceChain } from "../../adapters/governance.ts";
import { GovernanceEvents } from "./governance-events.ts";
import { GovernanceRelay } from "./governance-relay.ts";
import { Keeper, type KeeperOptions } from "../upkeep/keeper.ts";
import { LeafInserter, type LeafInserterOptions } from "../upkeep/leaf-inserter.ts";
import { Lease } from "../lease.ts";
import { MintRelay } from "./mint-relay.ts";
import { PositionRelay } from "./position-relay.ts";
import type { Payouts } from "../payouts/payouts.ts";
import { RedemptionRelay } from "./redemption-relay.ts";
import { RedirectRelay } from "./redirect-relay.ts";
import { TransactionSender } from "./sender.ts";

/** The worker's settings; app.ts passes them from the config, where their defaults live. */
export interface RelayWorkerOptions {
  /** Blocks on top of a mint's block before it counts as confirmed (1 = mined). */
  confirmations: number;
  /** Wait between the end of a pass and the next, for a minute after work arrived (see `wake`). */
  pollMs: number;
  /** Wait between passes once `busyMs` passed without work arriving (default `pollMs`): at rest the worker costs almost nothing. */
  idlePollMs?: number;
  /** How long after work arrives (a `wake`, or the start) passes follow at `pollMs`: long enough to see a transaction mined and confirmed. */
  busyMs?: number;
  /** A transaction pending longer than this is replaced with higher fees. */
  stuckAfterMs: number;
  /** Refusals (a revert at gas estimation) before a mint or a redemption is failed. */
  maxAttempts: number;
  /** Most queued mints one transaction carries (StableMinter.mintBatch); 1 sends each alone. */
  mintBatchMax?: number;
  /** How long the oldest queued mint waits for others to fill its batch. */
  mintBatchWaitMs?: number;
  /** Most queued note spends one transaction carries (StableMinter.spendBatch); 1 sends each alone. */
  spendBatchMax?: number;
  /** Checks a stored proof off-chain before it joins a batch. */
  verifyProof?: (proof: unknown, publicSignals: string[]) => Promise<boolean>;
  /** How long the lease on the relayer key lasts unrenewed; another replica takes over after it. */
  leaseMs: number;
  /** Name in the lease table; a stable one lets a restarted replica resume without waiting. */
  workerId?: string;
  /** Reads custody's reserves against the chain, every `reservesEveryMs`. */
  reconcileReserves?: () => Promise<unknown>;
  reservesEveryMs?: number;
  /** Finds and records new custody deposits (zcashd custody), every `scanEveryMs`. */
  scanDeposits?: () => Promise<unknown>;
  scanEveryMs: number;
  payouts?: Payouts;
  /** Holds the relays respect, verdicts that time out, and the events of mints and redemptions. */
  compliance?: ComplianceService;
  /** Relays signed votes and delegations, and tells agents of proposals (needs `compliance`). */
  governance?: GovernanceChain;
  /** Payouts move on at most this often (they need no faster than the Zcash side moves). */
  payoutEveryMs: number;
  /** Liquidates positions under the liquidation ratio with the relayer's ZSD, every `keeperEveryMs`. */
  keeper?: KeeperOptions;
  keeperEveryMs?: number;
  /** Inserts the registry's queued change leaves (./leaf-inserter.ts), after the relays' own work in each pass. */
  leaves?: LeafInserterOptions;
  onError?: (error: unknown) => void;
}

export class RelayWorker {
  readonly #sender: TransactionSender;
  readonly #lease: Lease;
  readonly #mints: MintRelay;
  readonly #redemptions: RedemptionRelay;
  readonly #positions: PositionRelay;
  readonly #redirects: RedirectRelay;
  readonly #keeper: Keeper | undefined;
  readonly #leaves: LeafInserter | undefined;
  readonly #governance: GovernanceRelay | undefined;
  readonly #governanceEvents: GovernanceEvents | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;
  #nextScan = 0;
  #nextReserves = 0;
  #nextPayouts = 0;
  #nextKeeper = 0;
  /** Until then passes follow each other at `pollMs`; after it, at `idlePollMs`. */
  #busyUntil = 0;
  #wakeAgain = false;
  #passes = 0;

  constructor(
    db: Database,
    chain: Chain,
    relayerKey: Hex,
    private readonly options: RelayWorkerOptions,
  ) {
    this.#sender = new TransactionSender(chain, relayerKey, options.stuckAfterMs);
    this.#lease = new Lease(db, `relayer:${this.address.toLowerCase()}`, options.leaseMs, options.workerId);
    this.#mints = new MintRelay(db, chain, this.#sender, options);
    this.#redemptions = new RedemptionRelay(db, chain, this.#sender, options);
    this.#positions = new PositionRelay(db, chain, this.#sender, options);
    this.#redirects = new RedirectRelay(db, chain, this.#sender, options);
    if (options.keeper) this.#keeper = new Keeper(chain, this.#sender.address, options.keeper);
    if (options.leaves) this.#leaves = new LeafInserter(chain, this.#sender, options.leaves);
    const { governance, compliance } = options;
    if (governance) {
      this.#governance = new GovernanceRelay(db, governance, this.#sender, options);
      if (compliance) {
        this.#governanceEvents = new GovernanceEvents(db, governance, {
          environment: compliance.environment,
          confirmations: options.confirmations,
          onQueued: () => compliance.queued(),
        });
      }
    }
  }

  /** The relayer's address, which signs every transaction and takes the mints' fees. */
  get address(): Address {
    return this.#sender.address;
  }

  /** This worker's name in the lease table. */
  get holder(): string {
    return this.#lease.holder;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#lease.keepRenewed();
    // A worker that starts may find work a crash left: it starts busy.
    this.#busyUntil = Date.now() + (this.options.busyMs ?? 0);
    void this.#loop();
  }

  /**
   * Work may have been queued (a request changed state): pass now, and keep
   * passing at `pollMs` for `busyMs`. Work queued by another replica is found
   * within `idlePollMs`.
   */
  wake(): void {
    if (this.#stopped) return;
    this.#busyUntil = Date.now() + (this.options.busyMs ?? 0);
    if (this.#running) {
      this.#wakeAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    void this.#loop();
  }

  async #loop(): Promise<void> {
    if (this.#stopped || this.#running) return;
    this.#wakeAgain = false;
    this.#running = this.tick().catch((error) => this.options.onError?.(error));
    await this.#running;
    this.#running = undefined;
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    // A transaction sent or still waiting keeps the fast poll, however long it takes to be mined,
    // and so do mints waiting for their batch to fill (the window is shorter than the idle poll).
    const following = this.#sender.takeFollowed() || this.#mints.waiting || this.#leaves?.waiting === true;
    const wait = this.#wakeAgain
      ? 0
      : following || Date.now() < this.#busyUntil
        ? this.options.pollMs
        : (this.options.idlePollMs ?? this.options.pollMs);
    this.#timer = setTimeout(() => void this.#loop(), wait);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    await this.#lease.release();
  }

  /** Passes run since the start (every tick, holder of the lease or not): what the worker costs at rest. */
  get passes(): number {
    return this.#passes;
  }

  /** One pass, run only by the holder of the relayer key's lease. */
  async tick(): Promise<void> {
    this.#passes++;
    if (!(await this.#lease.take())) return;
    const { scanDeposits, payouts } = this.options;
    if (scanDeposits && Date.now() >= this.#nextScan) {
      this.#nextScan = Date.now() + this.options.scanEveryMs;
      await this.#part(scanDeposits);
    }
    const { reconcileReserves } = this.options;
    if (reconcileReserves && Date.now() >= this.#nextReserves) {
      this.#nextReserves = Date.now() + (this.options.reservesEveryMs ?? 60_000);
      await this.#part(reconcileReserves);
    }
    const { compliance } = this.options;
    if (compliance) await this.#part(() => compliance.expireVerdicts());
    await this.#part(() => this.#mints.settleLeftProofs());
    await this.#part(() => this.#mints.pass());
    await this.#part(() => this.#redemptions.pass());
    const keeper = this.#keeper;
    if (keeper && Date.now() >= this.#nextKeeper) {
      this.#nextKeeper = Date.now() + (this.options.keeperEveryMs ?? 0);
      await this.#part(() => keeper.pass());
    }
    await this.#part(() => this.#positions.pass());
    await this.#part(() => this.#redirects.pass());
    const governance = this.#governance;
    if (governance) await this.#part(() => governance.pass());
    const governanceEvents = this.#governanceEvents;
    if (governanceEvents) await this.#part(() => governanceEvents.pass());
    // After the relays: the change of what this pass confirmed (mints, top-ups, withdrawals) is queued by now.
    const leaves = this.#leaves;
    if (leaves) await this.#part(() => leaves.pass());
    if (payouts && Date.now() >= this.#nextPayouts) {
      this.#nextPayouts = Date.now() + this.options.payoutEveryMs;
      await this.#part(() => payouts.tick());
    }
  }

  /** Runs one part of a pass; its failure is reported and leaves the other parts running. */
  async #part(work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.options.onError?.(error);
    }
  }
}
