// Withdraw addresses leave this machine sealed to custody's key:
// the chain, the relay's queue and the signed messages carry ciphertext only.
// The key is read from GET /v1/relay once per client; an `unreadable_address`
// answer may mean governance rotated it since, so the caller seals again once
// with a fresh read (see `retryOnRotation`).
import type { Address, Hex } from "viem";
import { SEAL_ALGORITHM, type SealKey, sealAddress } from "../seal/index.ts";
import { ZcashAddressError, type ZcashNetwork, parseShieldedAddress } from "../zcash/index.ts";
import { FlowError, ZsdError } from "./errors.ts";
import type { RelayResource } from "./resources.ts";
import type { Relay } from "./types.ts";

/** What a sealed address is bound to and sealed with, as the relay publishes it. */
export interface SealTarget {
  key: SealKey;
  chainId: number;
  redemptions: Address;
  network: ZcashNetwork;
}

/** The network whose addresses this API pays: testnet in the sandbox, mainnet in production. */
export const networkOf = (relay: Pick<Relay, "environment">): ZcashNetwork =>
  relay.environment === "production" ? "mainnet" : "testnet";

/** The seal target of a relay answer, or a FlowError when it relays no payouts. */
export function sealTargetOf(relay: Relay): SealTarget {
  const sealKey = relay.sealKey;
  const redemptions = relay.contracts?.Redemptions?.address;
  if (!sealKey || sealKey.algorithm !== SEAL_ALGORITHM || relay.chainId === null || !redemptions) {
    throw new FlowError(
      "This API publishes no seal key (of a known algorithm) or no Redemptions contract: it relays no payouts.",
      {
        code: "relay_unavailable",
      },
    );
  }
  return {
    key: { keyId: sealKey.keyId, publicKey: sealKey.publicKey as Hex },
    chainId: relay.chainId,
    redemptions: redemptions as Address,
    network: networkOf(relay),
  };
}

/**
 * Checks a withdraw address for the relay's network before anything is signed,
 * proven or burned; answers its canonical form. A bad one is a FlowError with
 * the API's own code for it (bad_checksum, wrong_network, …).
 */
export function checkAddress(address: string, network: ZcashNetwork): string {
  try {
    return parseShieldedAddress(address, network).address;
  } catch (error) {
    if (error instanceof ZcashAddressError) {
      throw new FlowError(`${error.message} Nothing was signed or sent.`, { code: error.code });
    }
    throw error;
  }
}

export class Sealer {
  #target: Promise<SealTarget> | undefined;

  constructor(private readonly relay: RelayResource) {}

  /** The relay's seal key and contract, read once per client (`fresh` reads them again). */
  target(fresh = false): Promise<SealTarget> {
    if (fresh || !this.#target) {
      const read = this.relay.get().then(sealTargetOf);
      this.#target = read;
      // A failed read is not kept (unless a newer one replaced it): the next call tries again.
      read.catch(() => {
        if (this.#target === read) this.#target = undefined;
      });
    }
    return this.#target;
  }

  /** `address`, checked for the relay's network, sealed for a payout owned by `owner`. */
  async seal(address: string, owner: Address, fresh = false): Promise<Hex> {
    const target = await this.target(fresh);
    return sealAddress(target.key, { ...target, owner }, checkAddress(address, target.network), target.network);
  }

  /**
   * Runs `attempt` (which seals, signs or proves, and sends) with the key as
   * read before; when the API cannot open the address (`unreadable_address`:
   * the key was rotated since it was read), runs it once more on a fresh read.
   */
  async retryOnRotation<T>(attempt: (fresh: boolean) => Promise<T>): Promise<T> {
    try {
      return await attempt(false);
    } catch (error) {
      if (!(error instanceof ZsdError) || error.code !== "unreadable_address") throw error;
      return attempt(true);
    }
  }
}
