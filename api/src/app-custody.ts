// The API's side of the deployment, built from the configuration: the chain
// and its governance contracts, custody's seal keys (which open the addresses
// holders seal for payouts), custody's on-chain calls, and custody itself (a zcashd
// wallet, or in the sandbox a local one that records simulated deposits).
// Without DEPLOYMENT_FILE there is none of it; createApp (app.ts) wires the rest.
import { parseShieldedAddress } from "@zsd/sdk/zcash";
import { DEV_SEAL_KEY } from "@zsd/sdk/seal";
import type { Config } from "./config/config.ts";
import type { Database, Queryable } from "./adapters/db/index.ts";
import type { Logger } from "./observability/logger.ts";
import { Chain } from "./adapters/chain.ts";
import type { Custody, RecordedDeposit } from "./adapters/custody/index.ts";
import { CustodyCalls } from "./adapters/custody/custody-calls.ts";
import { AttestorQuorum, QuorumNotMet } from "./adapters/custody/attestation.ts";
import { ZcashdClient, ZcashdCustody } from "./adapters/custody/zcashd.ts";
import { GovernanceChain } from "./adapters/governance.ts";
import { ReservesWatch } from "./domain/reserves/reserves.ts";
import { SealedAddresses } from "./domain/redemptions/sealed-addresses.ts";

export interface Deployment {
  chain?: Chain;
  /** Custody's seal keys for this deployment (with `chain`). */
  sealed?: SealedAddresses;
  governanceChain?: GovernanceChain;
  /** Settles and fails payouts on-chain (CUSTODY_PRIVATE_KEY). */
  custodyCalls?: CustodyCalls;
  custody?: Custody;
  /** Custody's reserves against the chain (with a zcashd custody). */
  reserves?: ReservesWatch;
}

/**
 * The deployment's chain, keys and custody. `onDeposit` tells a sandbox
 * deposit's account, in the ledger line's transaction.
 */
export function connectDeployment(
  config: Config,
  db: Database,
  logger: Logger,
  onDeposit: (tx: Queryable, accountId: string, deposit: RecordedDeposit) => Promise<unknown>,
  /** Wakes the webhook worker after the reserves watch queued an alert. */
  onQueued?: () => void,
): Deployment {
  const chain = config.DEPLOYMENT_FILE
    ? Chain.load(config.DEPLOYMENT_FILE, config.RPC_URL, config.UPSTREAM_TIMEOUT_MS)
    : undefined;
  // Custody's seal keys open the withdraw addresses sealed for this deployment; the sandbox's fallback is the
  // public development key, which the local deployment starts with.
  const sealed = chain
    ? new SealedAddresses(
        config.CUSTODY_SEAL_KEYS ?? (config.ENVIRONMENT === "sandbox" ? [DEV_SEAL_KEY] : []),
        chain.deployment.chainId,
        chain.redemptions,
        config.ENVIRONMENT,
      )
    : undefined;
  // Keys that do not open what holders seal to the chain's current key would fail every payout: said at start.
  if (chain && sealed && config.RELAYER_PRIVATE_KEY) {
    chain.currentSealKey().then(
      (key) =>
        sealed.holds(key) ||
        logger.error({ keyId: key.keyId }, "custody lacks the chain's current seal key: set CUSTODY_SEAL_KEYS"),
      (error: unknown) => logger.warn({ err: error }, "the chain's current seal key could not be read at start"),
    );
  }
  const governanceChain =
    chain && config.DEPLOYMENT_FILE ? GovernanceChain.load(config.DEPLOYMENT_FILE, chain) : undefined;
  const quorum =
    chain && config.ATTESTOR_URLS
      ? new AttestorQuorum(chain, config.ATTESTOR_URLS, config.ATTESTOR_TIMEOUT_MS)
      : undefined;
  const custodyCalls =
    chain && config.CUSTODY_PRIVATE_KEY
      ? new CustodyCalls(
          chain,
          config.CUSTODY_PRIVATE_KEY as `0x${string}`,
          (call, error) => {
            // Too few attestors signed: which refused and why is the operator's to see, never the client's.
            if (error instanceof QuorumNotMet)
              logger.warn({ attestors: error.answers }, "attestors did not reach the quorum");
            else logger.warn({ err: error, call }, "custody call failed at the chain node");
          },
          quorum,
        )
      : undefined;
  let custody: Custody | undefined;
  let reserves: ReservesWatch | undefined;
  if (chain && custodyCalls && config.ZCASHD_RPC_URL) {
    if (!config.CUSTODY_ADDRESS) throw new Error("CUSTODY_ADDRESS is required with ZCASHD_RPC_URL");
    // Refuse at start-up a custody address of the wrong network; use its canonical (lower-case) form.
    const custodyAddress = parseShieldedAddress(
      config.CUSTODY_ADDRESS,
      config.ENVIRONMENT === "production" ? "mainnet" : "testnet",
    ).address;
    const zcashd = new ZcashdClient(config.ZCASHD_RPC_URL, {
      user: config.ZCASHD_RPC_USER,
      password: config.ZCASHD_RPC_PASSWORD,
    });
    reserves = new ReservesWatch(db, chain, zcashd, custodyAddress, {
      environment: config.ENVIRONMENT,
      toleranceZat: BigInt(config.RESERVES_TOLERANCE_ZAT),
      guardianKey: config.GUARDIAN_PRIVATE_KEY as `0x${string}` | undefined,
      onQueued,
      onPauseFailed: (error, reading) =>
        logger.error(
          { err: error, status: reading.status, blockNumber: reading.blockNumber.toString() },
          "the guardian's transaction on new mints failed; the reading and its alert are stored, the next reading retries",
        ),
      onReading: (reading) => {
        if (reading.status === "shortfall") {
          logger.error(
            { differenceZat: reading.differenceZat.toString(), blockNumber: reading.blockNumber.toString() },
            "custody's reserves fall short of what the chain counts",
          );
        }
      },
    });
    custody = new ZcashdCustody(db, custodyCalls, zcashd, {
      address: custodyAddress,
      minConfirmations: config.ZCASHD_MIN_CONFIRMATIONS,
      privacyPolicy: config.ZCASHD_PRIVACY_POLICY,
      // The sandbox's node is the simulated one: its deposit endpoint pays into that ledger.
      sandbox: config.ENVIRONMENT === "sandbox" ? { windowMs: config.SANDBOX_DEPOSIT_WINDOW_MS, onDeposit } : undefined,
    });
  }
  return { chain, sealed, governanceChain, custodyCalls, custody, reserves };
}
