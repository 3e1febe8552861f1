import { randomBytes } from "node:crypto";
import { BaseError, ContractFunctionRevertedError, type Hex, createWalletClient, http, parseEventLogs } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, redemptionsAbi } from "@zsd/sdk";
import type { Chain } from "../chain.ts";
import type { Database } from "../db/index.ts";
import { Problem, problems } from "../problems.ts";
import type { Custody, PaidRedemption, RecordedDeposit } from "./index.ts";

/** The revert's custom error name, when the contract refused. */
function revertName(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.data?.errorName : undefined;
}

/**
 * Sandbox custody: no real ZEC moves. Deposits are simulated (like a sandbox
 * mock wire) and recorded on-chain by the attestor key; payouts get a
 * synthetic Zcash txid. Attestor transactions are sent one at a time, so this
 * process owns the key's nonces.
 */
export class LocalCustody implements Custody {
  readonly kind = "local";
  #queue: Promise<unknown> = Promise.resolve();
  readonly #wallet;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    attestorKey: Hex,
    rpcUrl: string,
  ) {
    this.#wallet = createWalletClient({
      account: privateKeyToAccount(attestorKey),
      chain: {
        id: chain.deployment.chainId,
        name: "zsd",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [rpcUrl] } },
      },
      transport: http(rpcUrl, { retryCount: 0 }),
    });
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #send(write: () => Promise<Hex>) {
    let hash: Hex;
    try {
      hash = await write();
    } catch (error) {
      const name = revertName(error);
      if (name)
        throw new Problem(
          409,
          name.replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase()),
          "Refused by the contract",
          `The contract refused: ${name}.`,
        );
      throw problems.upstreamUnavailable("The chain node");
    }
    const receipt = await this.chain.read(() =>
      this.chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 }),
    );
    if (receipt.status !== "success") throw problems.internal();
    return receipt;
  }

  recordDeposit(noteCommitment: bigint, amountZat: bigint): Promise<RecordedDeposit> {
    return this.#serial(async () => {
      const receipt = await this.#send(() =>
        this.#wallet.writeContract({
          address: this.chain.registry,
          abi: collateralRegistryAbi,
          functionName: "recordDeposit",
          args: [noteCommitment, amountZat],
        }),
      );
      const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositRecorded" });
      const args = event!.args;
      const zcashTxId = `0x${randomBytes(32).toString("hex")}`;
      await this.db.query(
        `INSERT INTO custody_ledger (kind, amount_zat, note_commitment, leaf_index, zcash_txid, tx_hash)
         VALUES ('deposit', $1, $2, $3, $4, $5)`,
        [amountZat.toString(), noteCommitment.toString(), Number(args.index), zcashTxId, receipt.transactionHash],
      );
      return {
        leafIndex: Number(args.index),
        leaf: args.leaf,
        root: args.root,
        amountZat,
        noteCommitment,
        txHash: receipt.transactionHash,
      };
    });
  }

  payRedemption(redemptionId: bigint): Promise<PaidRedemption> {
    return this.#serial(async () => {
      const zcashTxId = `0x${randomBytes(32).toString("hex")}` as const;
      const receipt = await this.#send(() =>
        this.#wallet.writeContract({
          address: this.chain.redemptions,
          abi: redemptionsAbi,
          functionName: "completeRedemption",
          args: [redemptionId, zcashTxId],
        }),
      );
      const [event] = parseEventLogs({ abi: redemptionsAbi, logs: receipt.logs, eventName: "RedemptionCompleted" });
      const zatPaid = event!.args.zatPaid;
      await this.db.query(
        `INSERT INTO custody_ledger (kind, amount_zat, redemption_id, zcash_txid, tx_hash)
         VALUES ('payout', $1, $2, $3, $4)`,
        [zatPaid.toString(), redemptionId.toString(), zcashTxId, receipt.transactionHash],
      );
      return { redemptionId, zatPaid, zcashTxId, txHash: receipt.transactionHash };
    });
  }
}
