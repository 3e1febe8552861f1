// The background workers the API builds and does not start (index.ts and
// tests start them): the relay worker (transactions, deposit scans, payout
// passes, the liquidation keeper, the insertion of queued change leaves), the
// payouts it moves on, the webhook worker, and the sandbox's price feed. Each is built from the configuration
// and what createApp (app.ts) built before it; each failed pass is logged.
import type { Address } from "viem";
import { parseShieldedAddress } from "@zsd/sdk/zcash";
import type { Config } from "./config/config.ts";
import type { Database } from "./adapters/db/index.ts";
import type { Logger } from "./observability/logger.ts";
import type { Chain } from "./adapters/chain.ts";
import type { GovernanceChain } from "./adapters/governance.ts";
import type { Custody } from "./adapters/custody/index.ts";
import type { CustodyCalls } from "./adapters/custody/custody-calls.ts";
import type { ReservesWatch } from "./domain/reserves/reserves.ts";
import type { ComplianceService } from "./domain/compliance/compliance.ts";
import type { PositionService } from "./domain/positions/positions.ts";
import type { ProofService } from "./domain/mints/proofs.ts";
import type { SealedAddresses } from "./domain/redemptions/sealed-addresses.ts";
import { SandboxPriceFeed } from "./domain/price/sandbox-price.ts";
import { Payouts } from "./workers/payouts/payouts.ts";
import { RelayWorker } from "./workers/relay/worker.ts";
import { WebhookWorker } from "./workers/webhooks/worker.ts";
import type { AddressPolicy } from "./adapters/webhooks/address-policy.ts";

/** Payouts of redemptions, with a chain, custody's on-chain calls and custody to pay them. */
export function payoutWorker(
  config: Config,
  db: Database,
  logger: Logger,
  {
    chain,
    custodyCalls,
    custody,
    sealed,
    compliance,
    reserves,
  }: {
    chain?: Chain;
    custodyCalls?: CustodyCalls;
    custody?: Custody;
    sealed?: SealedAddresses;
    compliance: ComplianceService;
    reserves?: ReservesWatch;
  },
): Payouts | undefined {
  return chain && custodyCalls && custody
    ? new Payouts(db, chain, custody, custodyCalls, {
        compliance,
        sealed: sealed!,
        confirmations: config.PAYOUT_CONFIRMATIONS,
        maxAttempts: config.PAYOUT_MAX_ATTEMPTS,
        retryMs: config.PAYOUT_RETRY_MS,
        onError: (error) => logger.warn({ err: error }, "payout step failed; retried next pass"),
        onReview: (redemptionId, reason) =>
          logger.error({ redemptionId, reason }, "payout held for review: resolve it by hand, it will not be retried"),
        onSettled: () =>
          void reserves
            ?.reconcile()
            .catch((error: unknown) => logger.warn({ err: error }, "reserves reading after a payout failed")),
      })
    : undefined;
}

/** The relay worker, with RELAYER_PRIVATE_KEY; the keeper rides on it when it is on and has an address to pay. */
export function relayWorker(
  config: Config,
  db: Database,
  logger: Logger,
  {
    chain,
    relayerAddress,
    custody,
    payouts,
    proofs,
    positions,
    compliance,
    governanceChain,
    reserves,
  }: {
    chain?: Chain;
    relayerAddress?: Address;
    custody?: Custody;
    payouts?: Payouts;
    proofs: ProofService;
    positions: PositionService;
    compliance: ComplianceService;
    governanceChain?: GovernanceChain;
    reserves?: ReservesWatch;
  },
): RelayWorker | undefined {
  const keeperAddress = config.KEEPER_PAYOUT_ADDRESS ?? config.CUSTODY_ADDRESS;
  const keeperOn = (config.KEEPER ?? (config.ENVIRONMENT === "sandbox" ? "on" : "off")) === "on";
  if (keeperOn && chain && relayerAddress && !keeperAddress) {
    logger.info("the liquidation keeper is off: set KEEPER_PAYOUT_ADDRESS for the ZEC it seizes");
  }
  return chain && config.RELAYER_PRIVATE_KEY
    ? new RelayWorker(db, chain, config.RELAYER_PRIVATE_KEY as `0x${string}`, {
        confirmations: config.RELAY_CONFIRMATIONS,
        pollMs: config.RELAY_POLL_MS,
        idlePollMs: Math.max(
          config.RELAY_IDLE_POLL_MS ?? (db.kind === "pglite" ? 10_000 : 2_000),
          config.RELAY_POLL_MS,
        ),
        busyMs: config.RELAY_BUSY_MS,
        stuckAfterMs: config.RELAY_STUCK_AFTER_MS,
        maxAttempts: config.RELAY_MAX_ATTEMPTS,
        mintBatchMax: config.RELAY_MINT_BATCH_MAX,
        spendBatchMax: config.RELAY_SPEND_BATCH_MAX,
        mintBatchWaitMs: config.RELAY_MINT_BATCH_WAIT_MS ?? (config.ENVIRONMENT === "production" ? 1000 : 100),
        verifyProof: (proof, publicSignals) => proofs.verifies(proof, publicSignals),
        scanDeposits: custody ? () => custody.scanDeposits() : undefined,
        scanEveryMs: config.DEPOSIT_SCAN_MS,
        reconcileReserves: reserves && (() => reserves.reconcile()),
        reservesEveryMs: config.RESERVES_CHECK_MS,
        payouts,
        compliance,
        governance: governanceChain,
        payoutEveryMs: config.PAYOUT_POLL_MS,
        keeper:
          keeperOn && keeperAddress
            ? {
                positions,
                // Ours, not a signer's: any form the wallet reads is taken, sent in the canonical one.
                payoutAddress: parseShieldedAddress(
                  keeperAddress,
                  config.ENVIRONMENT === "production" ? "mainnet" : "testnet",
                ).address,
                batch: config.KEEPER_BATCH,
              }
            : undefined,
        keeperEveryMs: config.KEEPER_POLL_MS,
        leaves: {
          indexerUrl: config.INDEXER_URL,
          batchMax: config.LEAF_BATCH_MAX,
          batchWaitMs: config.LEAF_BATCH_WAIT_MS,
          insertMax: config.LEAF_INSERT_MAX,
          onError: (error) => logger.warn({ err: error }, "change leaf insertion failed; tried again next pass"),
          onInserted: ({ consumed, txHash, gasUsed }) =>
            logger.info({ consumed, txHash, gasUsed: gasUsed.toString() }, "queued change leaves inserted"),
        },
        leaseMs: config.RELAY_LEASE_MS,
        workerId: config.RELAY_WORKER_ID,
        onError: (error) => logger.warn({ err: error }, "relay worker pass failed"),
      })
    : undefined;
}

/** The sandbox's ZEC/USD price feed, with ORACLE_UPDATER_PRIVATE_KEY. */
export function sandboxPriceFeed(config: Config, logger: Logger, chain?: Chain): SandboxPriceFeed | undefined {
  return chain && config.ENVIRONMENT === "sandbox" && config.ORACLE_UPDATER_PRIVATE_KEY
    ? new SandboxPriceFeed(chain, config.ORACLE_UPDATER_PRIVATE_KEY as `0x${string}`, {
        mode: config.SANDBOX_PRICE_FEED,
        everyMs: config.SANDBOX_PRICE_FEED_MS,
        onError: (error) => logger.warn({ err: error }, "sandbox price feed failed; retried next round"),
        secondaryUpdaterKey: config.SECONDARY_ORACLE_UPDATER_PRIVATE_KEY as `0x${string}` | undefined,
      })
    : undefined;
}

/** Delivers compliance agents' webhooks from the outbox, within `policy`. */
export function webhookWorker(config: Config, db: Database, logger: Logger, policy: AddressPolicy): WebhookWorker {
  return new WebhookWorker(db, {
    environment: config.ENVIRONMENT,
    policy,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryScale: config.WEBHOOK_RETRY_SCALE,
    concurrency: config.WEBHOOK_CONCURRENCY,
    agentConcurrency: config.WEBHOOK_AGENT_CONCURRENCY,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    breaker: {
      timeouts: config.WEBHOOK_BREAKER_TIMEOUTS,
      cooldownMs: config.WEBHOOK_BREAKER_COOLDOWN_MS,
      maxCooldownMs: config.WEBHOOK_BREAKER_MAX_COOLDOWN_MS,
    },
    pollMs: config.WEBHOOK_POLL_MS,
    idlePollMs: config.WEBHOOK_IDLE_POLL_MS ?? (db.kind === "pglite" ? 10_000 : config.WEBHOOK_POLL_MS),
    busyMs: config.RELAY_BUSY_MS,
    leaseMs: config.WEBHOOK_LEASE_MS,
    workerId: config.RELAY_WORKER_ID,
    onError: (error) => logger.warn({ err: error }, "webhook worker pass failed"),
  });
}
