// The sandbox's ZEC/USD price: kept fresh by a feeder, so that a sandbox left
// running for hours still mints (the contracts refuse a price older than
// maxPriceAge), and set by a developer to try falling or stale prices. The
// contracts read two feeds; the feeder runs an updater for each, with its own
// key, and every price goes to both (a developer's jump on one feed alone
// would freeze the price until the other agreed).
import { type Hex, parseUnits } from "viem";
import { zecUsdOracleAbi } from "@zsd/sdk";
import { PRICE_DECIMALS, formatPrice } from "@zsd/sdk/units";
import type { Chain } from "../../adapters/chain.ts";
import { DomainError, domainErrors } from "../errors.ts";

export type FeedMode = "fixed" | "walk" | "paused";

export interface PriceFeedState {
  mode: FeedMode;
  /** The price the feeder posts (fixed) or walks from (walk), 8 decimals. */
  price: bigint;
  lastPostedAt: Date | null;
}

/** A random walk's step: at most this fraction of the price, either way. */
const WALK_STEP = 0.005;

export class SandboxPriceFeed {
  #state: PriceFeedState;
  #timer: NodeJS.Timeout | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #queued = 0;
  readonly #wallet: ReturnType<Chain["wallet"]>;
  readonly #secondaryWallet: ReturnType<Chain["wallet"]> | undefined;

  /** @param secondaryUpdaterKey The second feed's updater; without it only the primary is fed. */
  constructor(
    private readonly chain: Chain,
    oracleUpdaterKey: Hex,
    private readonly options: {
      mode: FeedMode;
      everyMs: number;
      onError: (error: unknown) => void;
      secondaryUpdaterKey?: Hex;
    },
  ) {
    this.#wallet = chain.wallet(oracleUpdaterKey);
    this.#secondaryWallet = options.secondaryUpdaterKey ? chain.wallet(options.secondaryUpdaterKey) : undefined;
    this.#state = { mode: options.mode, price: 0n, lastPostedAt: null };
  }

  get state(): PriceFeedState {
    return { ...this.#state };
  }

  /** Posts the current price at once (the primary feed's latest answer), then every `everyMs`. */
  async start(): Promise<void> {
    const { oracle } = await this.chain.priceState();
    const [, answer] = await this.chain.read(() =>
      this.chain.client.readContract({ address: oracle, abi: zecUsdOracleAbi, functionName: "latestRoundData" }),
    );
    this.#state.price = answer;
    if (this.#state.mode !== "paused") await this.#post(() => this.#next());
    this.#timer = setInterval(() => {
      // A tick while a post is still queued adds nothing: the queued one posts the price of its turn.
      if (this.#state.mode === "paused" || this.#queued > 0) return;
      this.#post(() => this.#next()).catch(this.options.onError);
    }, this.options.everyMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** A developer's price (and mode): posted now unless paused, then kept by the feeder. */
  async set(change: { price?: string; mode?: FeedMode }): Promise<PriceFeedState> {
    if (change.mode) this.#state.mode = change.mode;
    if (change.price !== undefined) {
      const price = parseUnits(change.price, PRICE_DECIMALS);
      if (price <= 0n) throw domainErrors.invalid([{ field: "body.price", message: "must be above 0" }]);
      this.#state.price = price;
      await this.#post(() => price);
    }
    return this.state;
  }

  #next(): bigint {
    if (this.#state.mode !== "walk") return this.#state.price;
    const step = (Math.random() * 2 - 1) * WALK_STEP;
    const next = (this.#state.price * BigInt(Math.round((1 + step) * 1_000_000))) / 1_000_000n;
    return next > 0n ? next : this.#state.price;
  }

  /**
   * One price at a time: this process owns the updater key's nonces. The price is
   * taken when the post's turn comes, not when it was queued: a tick queued behind a
   * slow post would otherwise post, and keep, a price a developer has since replaced.
   */
  #post(priceOfTurn: () => bigint): Promise<void> {
    this.#queued++;
    const run = this.#queue.then(async () => {
      const price = priceOfTurn();
      const { oracle, secondaryOracle } = await this.chain.priceState();
      // Each updater posts to its own feed with its own key (so its own nonces), side by side.
      const updaters = [{ wallet: this.#wallet, feed: oracle }];
      if (this.#secondaryWallet) updaters.push({ wallet: this.#secondaryWallet, feed: secondaryOracle });
      let hashes: Hex[];
      try {
        hashes = await Promise.all(
          updaters.map(({ wallet, feed }) =>
            wallet.writeContract({ address: feed, abi: zecUsdOracleAbi, functionName: "setPrice", args: [price] }),
          ),
        );
      } catch {
        throw new DomainError(
          "unavailable",
          "price_not_set",
          "Price not set",
          `The oracle did not take ${formatPrice(price)} USD; retry shortly.`,
          { retryAfter: 5 },
        );
      }
      await Promise.all(
        hashes.map((hash) =>
          this.chain.read(() => this.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 })),
        ),
      );
      this.#state.price = price;
      this.#state.lastPostedAt = new Date();
    });
    this.#queue = run.catch(() => undefined).finally(() => this.#queued--);
    return run;
  }
}
