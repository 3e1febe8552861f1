import { type Hex, toHex } from "viem";
import { type HDAccount, mnemonicToAccount } from "viem/accounts";

/** Hardhat's well-known development mnemonic: local chains only, never real funds. */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";

const derived = new Map<number, HDAccount>();

/** Development account `index`; derived once per process (each derivation runs PBKDF2 over the mnemonic). */
export function hardhatAccount(index: number): HDAccount {
  let account = derived.get(index);
  if (!account) derived.set(index, (account = mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: index })));
  return account;
}

/** The private key of a Hardhat development account, for services that sign (attestor, relayer). */
export function hardhatPrivateKey(index: number): Hex {
  return toHex(hardhatAccount(index).getHdKey().privateKey!);
}

/** Who plays which part on a local chain (Hardhat accounts by index). */
export const LOCAL_ROLES = {
  deployer: 0,
  custody: 1,
  oracleUpdater: 2,
  pauser: 3,
  relayer: 4,
  /** Pauses and resumes new mints when custody's reserves fall short (the API's reserves watcher). */
  guardian: 19,
  /** The second price feed's updater (5 to 7 are the tests' users). */
  secondaryOracleUpdater: 8,
} as const;

/** The local attestor set (Hardhat accounts by index): 2 of 3 sign each deposit batch. They sign, never send. */
export const LOCAL_ATTESTORS = { accounts: [16, 17, 18], threshold: 2 } as const;

/**
 * Where the local stacks' liquidation keeper has seized ZEC paid: a payable
 * testnet Sapling address (the sandbox's local custody pays any address).
 */
export const LOCAL_KEEPER_PAYOUT_ADDRESS =
  "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
