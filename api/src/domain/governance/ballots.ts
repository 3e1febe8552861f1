// The signatures gasless governance relays, checked off-chain as the governor
// and the token will check them: which nonce a voter's ballot is signed at
// (keyed by the proposal, or sequential), and who signed a delegation.
import { type Address, type Hex, type TypedDataDomain, recoverTypedDataAddress } from "viem";
import type { GovernanceChain } from "../../adapters/governance.ts";
import { DomainError } from "../errors.ts";

export const BALLOT_TYPES = {
  Ballot: [
    { name: "proposalId", type: "uint256" },
    { name: "support", type: "uint8" },
    { name: "voter", type: "address" },
    { name: "nonce", type: "uint256" },
  ],
} as const;

export const EXTENDED_BALLOT_TYPES = {
  ExtendedBallot: [
    { name: "proposalId", type: "uint256" },
    { name: "support", type: "uint8" },
    { name: "voter", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "reason", type: "string" },
    { name: "params", type: "bytes" },
  ],
} as const;

export const DELEGATION_TYPES = {
  Delegation: [
    { name: "delegatee", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "expiry", type: "uint256" },
  ],
} as const;

export const conflict = (code: string, title: string, detail: string, facts = {}) =>
  new DomainError("conflict", code, title, detail, facts);
export const unprocessable = (code: string, title: string, detail: string, facts = {}) =>
  new DomainError("unprocessable", code, title, detail, facts);

export interface BallotToCheck {
  client: GovernanceChain["client"];
  /** The governor's EIP-712 domain. */
  domain: TypedDataDomain;
  proposalId: bigint;
  support: number;
  voter: Address;
  /** The voter's code: a smart account signs as its contract says (ERC-1271). */
  code: Hex | undefined;
  input: { signature: Hex; reason?: string; nonce?: string };
  /** The governor's nonces of the voter now: keyed by this proposal, and sequential. */
  keyedNonce: bigint;
  sequentialNonce: bigint;
}

/**
 * The nonce the voter signed the ballot at, when the governor takes it now;
 * else a domain error saying whether the nonce is used, not reached, or the
 * signature is not the voter's at all.
 */
export async function ballotNonce(b: BallotToCheck): Promise<bigint> {
  const { input, voter, keyedNonce, sequentialNonce } = b;
  const current = [keyedNonce, sequentialNonce];
  const given = input.nonce === undefined ? undefined : BigInt(input.nonce);
  const candidates = given === undefined ? current : [given];
  let nonce: bigint | undefined;
  for (const candidate of candidates) if (await signedBy(b, candidate)) nonce ??= candidate;
  if (nonce !== undefined && !current.includes(nonce)) {
    // Signed by the voter at a nonce that is not one the governor takes now.
    throw nonceRefusal(nonce, keyedNonce, sequentialNonce);
  }
  if (nonce === undefined && given === undefined) {
    // A ballot at an older sequential nonce: another signature of the voter went through first.
    for (let n = sequentialNonce - 1n; n >= 0n && n >= sequentialNonce - 3n; n--) {
      if (await signedBy(b, n)) throw nonceRefusal(n, keyedNonce, sequentialNonce);
    }
  }
  if (nonce === undefined) {
    throw unprocessable(
      "ballot_signature_invalid",
      "Invalid ballot signature",
      `The signature is not ${voter}'s EIP-712 ${input.reason === undefined ? "Ballot" : "ExtendedBallot"} ` +
        `for this proposal and support at its current nonce (${keyedNonce} keyed by the proposal, or ${sequentialNonce}).`,
    );
  }
  return nonce;
}

async function signedBy(b: BallotToCheck, nonce: bigint): Promise<boolean> {
  const { domain, proposalId, support, voter, input } = b;
  const typed =
    input.reason === undefined
      ? { types: BALLOT_TYPES, primaryType: "Ballot" as const, message: { proposalId, support, voter, nonce } }
      : {
          types: EXTENDED_BALLOT_TYPES,
          primaryType: "ExtendedBallot" as const,
          message: { proposalId, support, voter, nonce, reason: input.reason, params: "0x" as const },
        };
  try {
    const recovered = await recoverTypedDataAddress({ domain, ...typed, signature: input.signature } as never);
    if (recovered === voter) return true;
  } catch {
    // Not a wallet's signature: a smart account may still accept it below.
  }
  // A voter with code signs as its contract says (ERC-1271), as the governor's SignatureChecker checks.
  if (!b.code || b.code === "0x") return false;
  return b.client
    .verifyTypedData({ address: voter, domain, ...typed, signature: input.signature } as never)
    .catch(() => false);
}

/** A ballot signed by the voter at a nonce the governor does not take now: used, or not reached yet. */
function nonceRefusal(nonce: bigint, keyed: bigint, sequential: bigint) {
  // Keyed nonces carry their key in the high 192 bits; sequential ones have none.
  const key = nonce >> 64n;
  const used = key === 0n ? nonce < sequential : key === keyed >> 64n && nonce < keyed;
  if (!used) {
    return unprocessable(
      "nonce_invalid",
      "Nonce not usable",
      `The ballot is signed at nonce ${nonce}; the governor takes ${keyed} (keyed by this proposal) or ${sequential}.`,
    );
  }
  return conflict(
    "nonce_used",
    "Nonce already used",
    `The ballot is signed at nonce ${nonce}, which another signature of the voter already used; sign again at ` +
      `${keyed} (keyed by this proposal: no other ballot can use it).`,
  );
}

/** Who signed an EIP-712 Delegation on the token's domain, or undefined when it is no signature at all. */
export async function delegationSigner(
  domain: TypedDataDomain,
  message: { delegatee: Address; nonce: bigint; expiry: bigint },
  signature: Hex,
): Promise<Address | undefined> {
  try {
    return await recoverTypedDataAddress({
      domain,
      types: DELEGATION_TYPES,
      primaryType: "Delegation",
      message,
      signature,
    });
  } catch {
    return undefined;
  }
}
