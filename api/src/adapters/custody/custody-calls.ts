import { BaseError, ContractFunctionRevertedError, type Hex, type TransactionReceipt, parseEventLogs } from "viem";
import { collateralRegistryAbi, redemptionsAbi } from "@zsd/sdk";
import { depositLeaf } from "@zsd/sdk/notes";
import type { Chain } from "../chain.ts";
import { gasLimit, isOutOfGas } from "../gas.ts";
import { type ContractError, ContractRevertError, isRevert, unavailable } from "../errors.ts";
import type { AttestorQuorum } from "./attestation.ts";

type ContractCall = {
  address: Hex;
  abi: typeof collateralRegistryAbi | typeof redemptionsAbi;
  functionName: string;
  args: readonly unknown[];
};

/** The contract's refusal, decoded from its ABI, when the call reverted with a custom error. */
function revertOf(error: unknown): ContractRevertError | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError) || !reverted.data) return undefined;
  return new ContractRevertError(reverted.data.errorName as ContractError, reverted.data.args ?? []);
}

/**
 * Custody's on-chain calls (settling payouts, submitting attested deposit batches), sent one at a
 * time so that this process owns the key's nonces. A contract refusal is a ContractRevertError
 * naming its error. The key records nothing by itself: a deposit batch carries the attestors'
 * signatures, which `quorum` collects.
 */
export class CustodyCalls {
  #queue: Promise<unknown> = Promise.resolve();
  readonly #wallet: ReturnType<Chain["wallet"]>;

  constructor(
    private readonly chain: Chain,
    custodyKey: Hex,
    /** Told of each node failure (the call's name and the real error) before it becomes "unavailable". */
    private readonly onUnavailable?: (call: string, error: unknown) => void,
    private readonly quorum?: AttestorQuorum,
  ) {
    this.#wallet = chain.wallet(custodyKey);
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Sends one call with a limit that holds whatever lands before it (a
   * relayed mint's change leaf can make recordDeposits' insertion carry
   * further than estimated: adapters/gas.ts), and once more with a fresh
   * estimate if it still ran out of gas. Every other failure that is not a
   * refusal is the node's: logged with the call's name, then "unavailable".
   */
  #send(call: ContractCall): Promise<TransactionReceipt> {
    return this.#serial(() => this.#sendNow(call));
  }

  async #sendNow(call: ContractCall): Promise<TransactionReceipt> {
    {
      const write = async () => {
        const gas = await this.chain.client.estimateContractGas({ ...call, account: this.#wallet.account } as never);
        return this.#wallet.writeContract({ ...call, gas: gasLimit(gas) } as never);
      };
      let hash: Hex;
      try {
        hash = await write().catch((error: unknown) => {
          if (!isOutOfGas(error)) throw error;
          this.onUnavailable?.(call.functionName, error);
          return write();
        });
      } catch (error) {
        const revert = revertOf(error);
        if (revert) throw revert;
        this.onUnavailable?.(call.functionName, error);
        throw unavailable("The chain node");
      }
      const receipt = await this.chain.read(() =>
        this.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 }),
      );
      if (receipt.status !== "success") throw new Error(`custody transaction ${hash} reverted after it was sent`);
      return receipt;
    }
  }

  /**
   * Records deposits in one transaction (recordDeposits), by leaf, under the attestors' signatures:
   * the chain gets their leaves and their total, not one deposit's amount. Returns the first leaf's
   * index; the others follow in order. Signatures name the batch's turn, so asking and sending
   * happen in one go; when another sender took the turn meanwhile (the signatures then recover to
   * strangers: NotAttestor), they are asked for again, once.
   */
  async recordDeposits(deposits: readonly { noteCommitment: bigint; amountZat: bigint; zcashTxId: string }[]) {
    const quorum = this.quorum;
    if (!quorum) throw unavailable("Deposit attestation (no attestors configured: ATTESTOR_URLS)");
    const leaves = deposits.map((d) => depositLeaf(d.amountZat, d.noteCommitment));
    const totalZat = deposits.reduce((total, d) => total + d.amountZat, 0n);
    const receipt = await this.#serial(async () => {
      for (let attempt = 1; ; attempt++) {
        const batch = await quorum.batchCount();
        const { signatures } = await quorum.sign(deposits, batch).catch((error: unknown) => {
          this.onUnavailable?.("recordDeposits", error);
          throw error;
        });
        try {
          return await this.#sendNow({
            address: this.chain.registry,
            abi: collateralRegistryAbi,
            functionName: "recordDeposits",
            args: [leaves, totalZat, signatures],
          });
        } catch (error) {
          if (attempt === 1 && isRevert(error, "NotAttestor")) continue;
          throw error;
        }
      }
    });
    const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositsRecorded" });
    return { firstIndex: event!.args.firstIndex, root: event!.args.root, txHash: receipt.transactionHash };
  }

  /**
   * Where the registry recorded this commitment and amount (their leaf), in a
   * batch (DepositsRecorded), if it has: how a deposit
   * recorded on the chain, whose ledger line was not written (the database went
   * down in between), is found again.
   */
  async recordedDeposit(noteCommitment: bigint, amountZat: bigint) {
    const leaf = depositLeaf(amountZat, noteCommitment);
    const registry = {
      address: this.chain.registry,
      abi: collateralRegistryAbi,
      fromBlock: BigInt(this.chain.deployment.contracts.CollateralRegistry.startBlock),
    } as const;
    // A batch's leaves are not indexed topics: its events are read whole (this path is a crash's recovery only).
    const batches = await this.chain.read(() =>
      this.chain.client.getContractEvents({ ...registry, eventName: "DepositsRecorded" }),
    );
    for (const batch of batches) {
      const { firstIndex, leaves, root } = batch.args as Required<typeof batch.args>;
      const at = leaves.indexOf(leaf);
      if (at >= 0) return { index: firstIndex + BigInt(at), leaf, root, txHash: batch.transactionHash };
    }
    return undefined;
  }

  async completePayout(redemptionId: bigint, zcashTxId: Hex) {
    const receipt = await this.#send({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "completePayout",
      args: [redemptionId, zcashTxId],
    });
    const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "PayoutCompleted" });
    return { zatPaid: event!.args.zatPaid, txHash: receipt.transactionHash };
  }

  /** Refunds a redemption custody could not pay: the contract mints the burned ZSD back to the owner. */
  async failPayout(redemptionId: bigint, reason: string) {
    const receipt = await this.#send({
      address: this.chain.redemptions,
      abi: redemptionsAbi,
      functionName: "failPayout",
      args: [redemptionId, reason],
    });
    return { txHash: receipt.transactionHash };
  }
}
