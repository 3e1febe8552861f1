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
import { collateralRegistryAbi, positionManagerAbi, redemptionsAbi, stableMinterAbi, zecUsdOracleAbi } from "@zsd/sdk";
import type { SealKey } from "@zsd/sdk/seal";
import { type DeploymentOf, loadDeployment, zsdChain } from "@zsd/sdk/deployment";
import { domainErrors } from "../domain/errors.ts";

const RELAYED = ["StableMinter", "PositionManager", "CollateralRegistry", "Redemptions"] as const;

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
      throw domainErrors.unavailable("The chain node");
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

  /**
   * The ZEC/USD price as the position manager sees it (it prices mints, positions and
   * redemptions): with its age against the chain's clock and the most it accepts.
   */
  async priceState() {
    const address = this.positions;
    const [oracle, maxAge, now] = await Promise.all([
      this.read(() => this.client.readContract({ address, abi: positionManagerAbi, functionName: "oracle" })),
      this.read(() => this.client.readContract({ address, abi: positionManagerAbi, functionName: "maxPriceAge" })),
      this.now(),
    ]);
    const [, price, , updatedAt] = await this.read(() =>
      this.client.readContract({ address: oracle, abi: zecUsdOracleAbi, functionName: "latestRoundData" }),
    );
    return { oracle, price, updatedAt, ageSeconds: now - updatedAt, maxAgeSeconds: maxAge };
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
