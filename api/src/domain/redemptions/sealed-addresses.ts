// Withdraw addresses arrive sealed to custody's X25519 key: the
// chain carries only the envelope. Custody, this process, opens them with its
// keys, for the payout's owner on this chain and Redemptions contract: the
// routes before anything is signed-checked or queued, the payouts relay before
// it pays.
import { createHmac } from "node:crypto";
import { type Address, type Hex, keccak256 } from "viem";
import {
  SealError,
  type SealKey,
  type SealSecretKey,
  openSealedAddress,
  sealAddressDerived,
  sealedKeyId,
} from "@zsd/sdk/seal";
import { ZcashAddressError, parseShieldedAddress } from "@zsd/sdk/zcash";
import type { Chain } from "../../adapters/chain.ts";
import type { Queryable } from "../../adapters/db/index.ts";
import { DomainError } from "../errors.ts";
import { envelopeUsed } from "../payouts/store.ts";

type Environment = "sandbox" | "production";
/** The unreadable_address problem's title, whatever the case. */
const UNREADABLE = "Unreadable sealed address";

/**
 * The shielded address a payout goes to, in its one canonical form: anything
 * else (transparent, another network, mistyped, upper case) is refused, so
 * that what custody pays is exactly what the holder's wallet sealed.
 */
export function canonicalZcashAddress(address: string, environment: Environment, field: string): string {
  let canonical: string;
  try {
    canonical = parseShieldedAddress(address, environment === "production" ? "mainnet" : "testnet").address;
  } catch (error) {
    if (error instanceof ZcashAddressError) {
      throw new DomainError("unprocessable", error.code, "Unusable withdrawal address", error.message, {
        errors: [{ field, message: error.message }],
      });
    }
    throw error;
  }
  if (canonical !== address) {
    throw new DomainError(
      "unprocessable",
      "non_canonical_address",
      "Address not in canonical form",
      "Seal the withdrawal address in lower case.",
      { canonical, errors: [{ field, message: "not in canonical (lower-case) form" }] },
    );
  }
  return canonical;
}

/**
 * Why custody cannot pay a sealed address: it does not open, what it holds is
 * no payable address, or custody lacks the key it names (the contract took
 * that key: custody's configuration, not the holder, is at fault).
 */
export type Unpayable =
  | { kind: "unreadable"; detail: string }
  | { kind: "invalid_address"; code: string }
  | { kind: "missing_key"; detail: string };

/** What custody does with a payout: pays the address, fails it (why), or waits for an operator (missing key). */
export type PayoutVerdict = { address: string } | { why: string } | { missingKey: string };

/** The verdict on what `SealedAddresses.payable` found; the words name no address (they go to rows and logs). */
export function payoutVerdict(opened: { address: string } | Unpayable): PayoutVerdict {
  if ("address" in opened) return opened;
  switch (opened.kind) {
    case "missing_key":
      return { missingKey: `${opened.detail} Add its secret to CUSTODY_SEAL_KEYS, then resolve it as not paid.` };
    case "unreadable":
      return { why: `custody cannot open its sealed address: ${opened.detail}` };
    case "invalid_address":
      return { why: `its sealed address holds no payable shielded address (${opened.code}).` };
  }
}

export class SealedAddresses {
  constructor(
    private readonly keys: readonly SealSecretKey[],
    private readonly chainId: number,
    private readonly redemptions: Address,
    private readonly environment: Environment,
  ) {}

  /** Whether custody holds the secret of `key` (same id and public key): else nothing sealed to it opens. */
  holds(key: SealKey): boolean {
    return this.keys.some((k) => k.keyId === key.keyId && k.publicKey.toLowerCase() === key.publicKey.toLowerCase());
  }

  /**
   * The canonical address sealed in `sealed` for `owner`, for a request:
   * throws `unreadable_address` when it does not open, or the address's own
   * problem when what it holds is not a shielded address of this network.
   */
  open(sealed: Hex, owner: Address, field: string): string {
    let plaintext: string;
    try {
      plaintext = openSealedAddress(this.keys, this.#context(owner), sealed);
    } catch (error) {
      if (!(error instanceof SealError)) throw error;
      throw new DomainError(
        "unprocessable",
        "unreadable_address",
        UNREADABLE,
        // The owner stays out of the words: a problem's detail may reach a log line.
        `${error.message} Seal the address to the key of GET /v1/relay (sealKey) for the payout's owner, on chain ` +
          `${this.chainId}.`,
        { errors: [{ field, message: "does not open with custody's key for this payout's owner" }] },
      );
    }
    return canonicalZcashAddress(plaintext, this.environment, field);
  }

  /** What custody pays for a sealed address on-chain, or why it cannot: never throws for the envelope. */
  payable(sealed: Hex, owner: Address): { address: string } | Unpayable {
    let plaintext: string;
    try {
      plaintext = openSealedAddress(this.keys, this.#context(owner), sealed);
    } catch (error) {
      if (!(error instanceof SealError)) throw error;
      return { kind: error.code === "unknown_key" ? "missing_key" : "unreadable", detail: error.message };
    }
    // Sealed straight to the contract in another form (upper case): its owner meant this address.
    try {
      const network = this.environment === "production" ? "mainnet" : "testnet";
      return { address: parseShieldedAddress(plaintext, network).address };
    } catch (error) {
      if (error instanceof ZcashAddressError) return { kind: "invalid_address", code: error.code };
      throw error;
    }
  }

  /**
   * `address` sealed for `owner`'s redemption at `ownerNonce`, to `key` (the
   * contract's current one), for a caller who names the clear address. The
   * envelope is derived, not random: the terms answer it for the owner to
   * sign, and the request, which carries only the address, seals it again to
   * the same bytes, so the API keeps nothing between the two (no table of
   * pending seals to expire) and the caller echoes nothing (the spec's body
   * has only the clear address), yet the signature covers exactly the bytes
   * that go on-chain. One nonce is spent once on-chain, so one envelope never
   * goes on-chain twice; the seed is keyed with custody's secret, so nobody
   * else can derive it. Throws the address's own problem first; null when
   * custody lacks the key's secret.
   */
  sealFor(key: SealKey, owner: Address, ownerNonce: bigint, address: string, field: string): Hex | null {
    const canonical = canonicalZcashAddress(address, this.environment, field);
    if (!this.holds(key)) return null;
    const secret = this.keys.find((k) => k.keyId === key.keyId)!;
    const seed = createHmac("sha256", Buffer.from(secret.secretKey.slice(2), "hex"))
      .update(`zsd api-sealed redemption v1:${this.chainId}:${this.redemptions.toLowerCase()}:`)
      .update(`${owner.toLowerCase()}:${ownerNonce}`)
      .digest();
    const network = this.environment === "production" ? "mainnet" : "testnet";
    return sealAddressDerived(key, this.#context(owner), canonical, network, seed);
  }

  #context(owner: Address) {
    return { chainId: this.chainId, redemptions: this.redemptions, owner };
  }
}

/**
 * Refuses an envelope a payout on-chain (or a redemption being relayed)
 * already carries, where custody would fail this one as a replay, after its
 * burn: a payout that opened, or one of the same owner (it will open, the
 * seal being bound to its owner). A copy someone else put on their own
 * request (a front-run from the mempool) opens for nobody and does not count,
 * as in the payouts relay's openPayout.
 */
export async function refuseReusedEnvelope(db: Queryable, sealed: Hex, owner: Address, field: string): Promise<void> {
  if (await envelopeUsed(db, keccak256(sealed), sealed.toLowerCase(), owner)) {
    throw new DomainError(
      "unprocessable",
      "unreadable_address",
      // One title per problem type (RFC 9457): the detail says which case this is.
      UNREADABLE,
      "Another payout already carries this sealed address, and custody pays a sealed address once: seal the " +
        "address again (a fresh envelope) to the key of GET /v1/relay for this owner.",
      { errors: [{ field, message: "already used by another payout: seal the address again" }] },
    );
  }
}

/**
 * Refuses an envelope (one custody opened) whose key the Redemptions contract
 * no longer takes: rotated out and past its grace period, or never set there.
 * The contract would revert the request; refused here, nothing is queued.
 */
export async function refuseRetiredKey(chain: Chain, sealed: Hex, field: string): Promise<void> {
  const keyId = sealedKeyId(sealed);
  const [{ publicKey, retiresAt }, now] = await Promise.all([chain.sealKeyOf(keyId), chain.now()]);
  const unknown = /^0x0{64}$/.test(publicKey);
  if (!unknown && (retiresAt === 0n || now < retiresAt)) return;
  throw new DomainError(
    "unprocessable",
    "unreadable_address",
    UNREADABLE,
    `The address is sealed to key ${keyId}, which the Redemptions contract ${
      unknown ? "does not know" : `retired at ${new Date(Number(retiresAt) * 1000).toISOString()}`
    }: seal it again to the key of GET /v1/relay (sealKey) for this payout's owner.`,
    { errors: [{ field, message: `sealed to key ${keyId}, which the contract no longer takes` }] },
  );
}
