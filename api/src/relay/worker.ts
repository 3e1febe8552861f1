// The relay worker: one per relayer key, so it alone owns the key's nonces.
// Mints wait in the database; the worker signs, records the transaction
// (write-ahead) and only then broadcasts, follows it to confirmation, and on
// restart resumes from the database. A deposit whose nullifier is already
// spent is reconciled from the chain's Minted event, never minted twice.
import { type Address, type Hex, createWalletClient, encodeFunctionData, http, keccak256, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { stableMinterAbi, toSolidityProof } from "@zsd/sdk";
import type { Chain } from "../chain.ts";
import type { Database } from "../db/index.ts";

interface JobRow {
  id: string;
  status: "queued" | "submitted" | "confirmed" | "failed";
  tx_hash: string | null;
  raw_tx: string | null;
  nonce: number | null;
  attempts: number;
  recipient: string;
  amount: string;
  proof: unknown;
  root: string;
  nullifier_hash: string;
  collateral_floor_zat: string;
  proof_recipient: string;
  relayer: string;
  fee: string;
}

const MAX_ATTEMPTS = 20;

export class RelayWorker {
  readonly address: Address;
  readonly #wallet;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;

  constructor(
    private readonly db: Database,
    private readonly chain: Chain,
    relayerKey: Hex,
    rpcUrl: string,
    private readonly options: { confirmations: number; pollMs: number; onError?: (error: unknown) => void },
  ) {
    const account = privateKeyToAccount(relayerKey);
    this.address = account.address;
    this.#wallet = createWalletClient({
      account,
      chain: {
        id: chain.deployment.chainId,
        name: "zsd",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [rpcUrl] } },
      },
      transport: http(rpcUrl, { retryCount: 0 }),
    });
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    const loop = async () => {
      if (this.#stopped) return;
      this.#running = this.tick().catch((error) => this.options.onError?.(error));
      await this.#running;
      if (!this.#stopped) this.#timer = setTimeout(loop, this.options.pollMs);
    };
    void loop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  async #jobs(status: string): Promise<JobRow[]> {
    return this.db.query<JobRow>(
      `SELECT m.*, p.proof, p.root, p.nullifier_hash, p.collateral_floor_zat, p.recipient AS proof_recipient, p.relayer, p.fee
       FROM mints m JOIN proofs p ON p.id = m.proof_id
       WHERE m.status = $1 ORDER BY m.created_at LIMIT 50`,
      [status],
    );
  }

  async #set(id: string, fields: Record<string, unknown>, expectedStatus?: string): Promise<boolean> {
    const keys = Object.keys(fields);
    const assignments = keys.map((k, i) => `${k} = $${i + 2}`).join(", ");
    const rows = await this.db.query(
      `UPDATE mints SET ${assignments}, updated_at = now() WHERE id = $1${expectedStatus ? ` AND status = '${expectedStatus}'` : ""} RETURNING id`,
      [id, ...keys.map((k) => fields[k])],
    );
    return rows.length > 0;
  }

  /** One pass: follow submitted transactions, then submit queued mints. */
  async tick(): Promise<void> {
    for (const job of await this.#jobs("submitted")) await this.#follow(job);
    for (const job of await this.#jobs("queued")) await this.#submit(job);
  }

  /** The Minted event of a nullifier, if any mint spent it. */
  async #mintedEvent(nullifierHash: bigint) {
    const [event] = await this.chain.client.getContractEvents({
      address: this.chain.minter,
      abi: stableMinterAbi,
      eventName: "Minted",
      args: { nullifierHash },
      fromBlock: BigInt(this.chain.deployment.contracts.StableMinter!.startBlock),
    });
    return event;
  }

  /** The nullifier is spent: this mint happened (ours or a copy of our proof) or another one took the deposit. */
  async #reconcileSpent(job: JobRow): Promise<void> {
    const event = await this.#mintedEvent(BigInt(job.nullifier_hash));
    if (
      event &&
      event.args.recipient?.toLowerCase() === job.recipient.toLowerCase() &&
      String(event.args.mintAmount) === job.amount
    ) {
      await this.#set(job.id, {
        status: "confirmed",
        tx_hash: event.transactionHash,
        block_number: Number(event.blockNumber),
      });
    } else {
      await this.#set(job.id, {
        status: "failed",
        failure_reason: "The deposit was already minted by another proof (nullifier spent).",
      });
    }
  }

  async #submit(job: JobRow): Promise<void> {
    const nullifierHash = BigInt(job.nullifier_hash);
    if (
      await this.chain.client.readContract({
        address: this.chain.minter,
        abi: stableMinterAbi,
        functionName: "isSpent",
        args: [nullifierHash],
      })
    ) {
      return this.#reconcileSpent(job);
    }
    const proof = toSolidityProof(job.proof as never);
    const request = {
      root: BigInt(job.root),
      nullifierHash,
      collateralFloorZat: BigInt(job.collateral_floor_zat),
      mintAmount: BigInt(job.amount),
      recipient: job.proof_recipient as Address,
      relayer: (job.relayer || zeroAddress) as Address,
      fee: BigInt(job.fee),
    };
    const data = encodeFunctionData({ abi: stableMinterAbi, functionName: "mint", args: [proof, request] });
    let gas: bigint;
    try {
      gas = await this.chain.client.estimateGas({ account: this.address, to: this.chain.minter, data });
    } catch (error) {
      // A revert now (stale price, paused) may pass later; give up after MAX_ATTEMPTS.
      const reason = (error as { shortMessage?: string }).shortMessage ?? String(error);
      if (job.attempts + 1 >= MAX_ATTEMPTS) {
        await this.#set(job.id, { status: "failed", failure_reason: `The mint kept reverting: ${reason}` });
      } else {
        await this.#set(job.id, { attempts: job.attempts + 1, failure_reason: reason });
      }
      return;
    }
    const [nonce, fees] = await Promise.all([
      this.chain.client.getTransactionCount({ address: this.address, blockTag: "pending" }),
      this.chain.client.estimateFeesPerGas(),
    ]);
    const raw = await this.#wallet.signTransaction({
      to: this.chain.minter,
      data,
      gas: (gas * 12n) / 10n,
      nonce,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const hash = keccak256(raw);
    // Write-ahead: the transaction is on record before it can be mined.
    if (
      !(await this.#set(
        job.id,
        { status: "submitted", tx_hash: hash, raw_tx: raw, nonce, relayer: this.address, attempts: job.attempts + 1 },
        "queued",
      ))
    )
      return;
    await this.#broadcast(raw);
  }

  async #broadcast(raw: Hex): Promise<void> {
    try {
      await this.chain.client.sendRawTransaction({ serializedTransaction: raw });
    } catch {
      // Already known, nonce used, or the node is down: #follow decides from the chain.
    }
  }

  async #follow(job: JobRow): Promise<void> {
    const hash = job.tx_hash as Hex;
    const receipt = await this.chain.client.getTransactionReceipt({ hash }).catch(() => undefined);
    if (!receipt) {
      if (
        await this.chain.client.readContract({
          address: this.chain.minter,
          abi: stableMinterAbi,
          functionName: "isSpent",
          args: [BigInt(job.nullifier_hash)],
        })
      ) {
        return this.#reconcileSpent(job);
      }
      const pending = await this.chain.client.getTransaction({ hash }).catch(() => undefined);
      if (!pending && job.raw_tx) {
        const next = await this.chain.client.getTransactionCount({ address: this.address, blockTag: "latest" });
        // Its nonce went to another transaction: sign again from the queue.
        if (job.nonce !== null && next > job.nonce) {
          await this.#set(job.id, { status: "queued", tx_hash: null, raw_tx: null, nonce: null });
        } else {
          await this.#broadcast(job.raw_tx as Hex);
        }
      }
      return;
    }
    if (receipt.status === "reverted") {
      if (
        await this.chain.client.readContract({
          address: this.chain.minter,
          abi: stableMinterAbi,
          functionName: "isSpent",
          args: [BigInt(job.nullifier_hash)],
        })
      ) {
        return this.#reconcileSpent(job);
      }
      await this.#set(job.id, {
        status: "failed",
        block_number: Number(receipt.blockNumber),
        failure_reason: "The mint transaction reverted.",
      });
      return;
    }
    const head = await this.chain.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n >= BigInt(this.options.confirmations)) {
      await this.#set(job.id, { status: "confirmed", block_number: Number(receipt.blockNumber) });
    }
  }
}
