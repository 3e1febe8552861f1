import { BaseError, ContractFunctionRevertedError, type Hex, type TransactionReceipt, parseEventLogs } from "viem";
import { collateralRegistryAbi, redemptionsAbi } from "@zsd/sdk";
import type { Chain } from "../chain.ts";
import { type ContractError, ContractRevertError, domainErrors } from "../../domain/errors.ts";

/** The contract's refusal, decoded from its ABI, when the call reverted with a custom error. */
function revertOf(error: unknown): ContractRevertError | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError) || !reverted.data) return undefined;
  return new ContractRevertError(reverted.data.errorName as ContractError, reverted.data.args ?? []);
}

/**
 * The attestor's on-chain calls, sent one at a time so that this process owns
 * the key's nonces. A contract refusal is a ContractRevertError naming its error.
 */
export class Attestor {
  #queue: Promise<unknown> = Promise.resolve();
  readonly #wallet: ReturnType<Chain["wallet"]>;

  constructor(
    private readonly chain: Chain,
    attestorKey: Hex,
  ) {
    this.#wallet = chain.wallet(attestorKey);
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #send(write: () => Promise<Hex>): Promise<TransactionReceipt> {
    return this.#serial(async () => {
      let hash: Hex;
      try {
        hash = await write();
      } catch (error) {
        throw revertOf(error) ?? domainErrors.unavailable("The chain node");
      }
      const receipt = await this.chain.read(() =>
        this.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 }),
      );
      if (receipt.status !== "success") throw new Error(`attestor transaction ${hash} reverted after it was sent`);
      return receipt;
    });
  }

  async recordDeposit(noteCommitment: bigint, amountZat: bigint) {
    const receipt = await this.#send(() =>
      this.#wallet.writeContract({
        address: this.chain.registry,
        abi: collateralRegistryAbi,
        functionName: "recordDeposit",
        args: [noteCommitment, amountZat],
      }),
    );
    const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositRecorded" });
    return { ...event!.args, txHash: receipt.transactionHash };
  }

  async completeRedemption(redemptionId: bigint, zcashTxId: Hex) {
    const receipt = await this.#send(() =>
      this.#wallet.writeContract({
        address: this.chain.redemptions,
        abi: redemptionsAbi,
        functionName: "completeRedemption",
        args: [redemptionId, zcashTxId],
      }),
    );
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "RedemptionCompleted" });
    return { zatPaid: event!.args.zatPaid, txHash: receipt.transactionHash };
  }

  /** Refunds a redemption custody could not pay: the contract mints the burned ZSD back to the owner. */
  async failRedemption(redemptionId: bigint, reason: string) {
    const receipt = await this.#send(() =>
      this.#wallet.writeContract({
        address: this.chain.redemptions,
        abi: redemptionsAbi,
        functionName: "failRedemption",
        args: [redemptionId, reason],
      }),
    );
    return { txHash: receipt.transactionHash };
  }
}
