// The deployed contracts this API relays to, read through viem. Optional: a
// deployment without DEPLOYMENT_FILE serves keys and ledger reads only.
import {
  type Address,
  type Hex,
  type PublicClient,
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, positionManagerAbi, priceFeedAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk";
import type { SealKey } from "@zsd/sdk/seal";
import { type DeploymentOf, loadDeployment, zsdChain } from "@zsd/sdk/deployment";
import { unavailable } from "./errors.ts";

const RELAYED = ["StableMinter", "PositionManager", "CollateralRegistry", "Redemptions"] as const;

/** IPriceFeed.PriceSource, by index. */
const PRICE_SOURCES = ["primary", "secondary", "last_good"] as const;
export type PriceSource = (typeof PRICE_SOURCES)[number];
/** IPriceFeed.FeedCondition, by index, as a sentence says it. */
const FEED_CONDITIONS = [
  "healthy",
  "suspect (beyond the jump bound from the reference price)",
  "not answering",
  "answering an invalid price",
  "dated in the future",
  "stale",
] as const;
/** The conditions of a feed that answers (fresh and positive), by index: two such feeds frozen disagree. */
const ANSWERING = new Set([0, 1]);

export class Chain {
  readonly client: PublicClient;
  readonly minter: Address;
  readonly positions: Address;
  readonly registry: Address;
  readonly redemptions: Address;

  constructor(
    readonly deployment: DeploymentOf<(typeof RELAYED)[number]>,
    readonly rpcUrl: string,
    timeoutMs: number,
  ) {
    this.client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 1 }) });
    this.minter = getAddress(deployment.contracts.StableMinter.address);
    this.positions = getAddress(deployment.contracts.PositionManager.address);
    this.registry = getAddress(deployment.contracts.CollateralRegistry.address);
    this.redemptions = getAddress(deployment.contracts.Redemptions.address);
  }

  static load(file: string, rpcUrl: string, timeoutMs: number): Chain {
    return new Chain(loadDeployment(file, RELAYED), rpcUrl, timeoutMs);
  }

  /** A signer on this chain. No transport retries: the callers decide from the chain what to resend. */
  wallet(privateKey: Hex) {
    return createWalletClient({
      account: privateKeyToAccount(privateKey),
      chain: zsdChain(this.deployment, this.rpcUrl),
      transport: http(this.rpcUrl, { retryCount: 0 }),
    });
  }

  /** Reads the chain; an unreachable node is `unavailable`, not an internal error. */
  async read<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch {
      throw unavailable("The chain node");
    }
  }

  /** The registry's freshness rule: whether `root` is current or was replaced at most `maxAge` seconds ago. */
  isValidRoot(root: bigint, maxAge: bigint) {
    return this.read(() =>
      this.client.readContract({
        address: this.registry,
        abi: collateralRegistryAbi,
        functionName: "isValidRoot",
        args: [root, maxAge],
      }),
    );
  }

  rootSupersededAt(root: bigint) {
    return this.read(() =>
      this.client.readContract({
        address: this.registry,
        abi: collateralRegistryAbi,
        functionName: "rootSupersededAt",
        args: [root],
      }),
    );
  }

  maxRootAge() {
    return this.read(() =>
      this.client.readContract({ address: this.minter, abi: stableMinterAbi, functionName: "maxRootAge" }),
    );
  }

  #minDebt: bigint | undefined;

  /** PositionManager.minDebt(): a constant of the contract, read once it answers. */
  async minDebt(): Promise<bigint> {
    this.#minDebt ??= await this.read(() =>
      this.client.readContract({ address: this.positions, abi: positionManagerAbi, functionName: "minDebt" }),
    );
    return this.#minDebt;
  }

  /** The least collateral ratio a mint or withdrawal leaves a position at, in basis points (governed). */
  minCollateralRatioBps() {
    return this.read(() =>
      this.client.readContract({
        address: this.positions,
        abi: positionManagerAbi,
        functionName: "minCollateralRatioBps",
      }),
    );
  }

  isSpent(nullifierHash: bigint) {
    return this.read(() =>
      this.client.readContract({
        address: this.minter,
        abi: stableMinterAbi,
        functionName: "isSpent",
        args: [nullifierHash],
      }),
    );
  }

  #priceFeed: Promise<Address> | undefined;
  /** The position manager's price feed (fixed at its deployment, so read once). */
  priceFeed(): Promise<Address> {
    this.#priceFeed ??= this.read(() =>
      this.client.readContract({ address: this.positions, abi: positionManagerAbi, functionName: "priceFeed" }),
    ).catch((error: unknown) => {
      this.#priceFeed = undefined;
      throw error;
    });
    return this.#priceFeed;
  }

  /**
   * The ZEC/USD price as the position manager sees it (it prices mints, positions and
   * redemptions): what its price feed would give now, where from, its age against the chain's
   * clock and the most a feed's answer may have. `frozen`: neither feed is trusted, the price is
   * the last good one, and mints, redemptions and liquidations are refused.
   */
  async priceState() {
    const address = await this.priceFeed();
    const feed = { address, abi: priceFeedAbi } as const;
    const [[price, updatedAt, source], maxAge, oracle, secondaryOracle, now] = await Promise.all([
      this.read(() => this.client.readContract({ ...feed, functionName: "peekPrice" })),
      this.read(() => this.client.readContract({ ...feed, functionName: "maxPriceAge" })),
      this.read(() => this.client.readContract({ ...feed, functionName: "primaryFeed" })),
      this.read(() => this.client.readContract({ ...feed, functionName: "secondaryFeed" })),
      this.now(),
    ]);
    const from = PRICE_SOURCES[source] ?? "last_good";
    return {
      oracle,
      secondaryOracle,
      price,
      updatedAt,
      source: from,
      frozen: from === "last_good",
      ageSeconds: now - updatedAt,
      maxAgeSeconds: maxAge,
    };
  }

  /** How each of the two feeds looks to the price feed now, in words (for refusals that say why). */
  async feedConditions(): Promise<{ primary: string; secondary: string; bothAnswer: boolean }> {
    const address = await this.priceFeed();
    const feed = { address, abi: priceFeedAbi } as const;
    const [primary, secondary] = await Promise.all([
      this.read(() => this.client.readContract({ ...feed, functionName: "primaryFeed" })),
      this.read(() => this.client.readContract({ ...feed, functionName: "secondaryFeed" })),
    ]);
    const [[p], [q]] = await Promise.all(
      [primary, secondary].map((f) =>
        this.read(() => this.client.readContract({ ...feed, functionName: "feedCondition", args: [f] })),
      ),
    );
    return {
      primary: FEED_CONDITIONS[p] ?? "unknown",
      secondary: FEED_CONDITIONS[q] ?? "unknown",
      bothAnswer: ANSWERING.has(p) && ANSWERING.has(q),
    };
  }

  /** A seal key by id on Redemptions: its public key (zero if unknown) and when it retires (0 while current). */
  async sealKeyOf(keyId: number): Promise<{ publicKey: Hex; retiresAt: bigint }> {
    const [publicKey, retiresAt] = await this.read(() =>
      this.client.readContract({
        address: this.redemptions,
        abi: redemptionsAbi,
        functionName: "sealKey",
        args: [keyId],
      }),
    );
    return { publicKey, retiresAt: BigInt(retiresAt) };
  }

  /** The seal key withdraw addresses are sealed to now: governance sets it on Redemptions. */
  async currentSealKey(): Promise<SealKey> {
    const keyId = await this.read(() =>
      this.client.readContract({ address: this.redemptions, abi: redemptionsAbi, functionName: "currentSealKeyId" }),
    );
    const [publicKey] = await this.read(() =>
      this.client.readContract({
        address: this.redemptions,
        abi: redemptionsAbi,
        functionName: "sealKey",
        args: [keyId],
      }),
    );
    return { keyId, publicKey };
  }

  async now(): Promise<bigint> {
    return (await this.read(() => this.client.getBlock({ blockTag: "latest" }))).timestamp;
  }
}
