// Custody, modelled as the payouts relay runs it: it learns each new payout from the chain, opens
// its envelope with the development seal key, and pays or fails it; the test checks that decision
// against what it meant by the envelope (model.ts keeps that intent).
import { type Address, type Hex, keccak256 } from "viem";
import { expect } from "vitest";
import { redemptionsAbi } from "@zsd/sdk/abis";
import { DEV_SEAL_KEY, SealError, openSealedAddress } from "@zsd/sdk/seal";
import { ZcashAddressError, parseShieldedAddress } from "@zsd/sdk/zcash";
import { SAPLING } from "./constants.ts";
import { type Context, lower } from "./context.ts";
import type { Model, Verdict } from "./model.ts";
import { count } from "./stats.ts";

/**
 * Custody's verdict on a payout's envelope, as SealedAddresses.payable and openPayout reach it:
 * an envelope an earlier payout opened is a replay; else it must open with custody's key for the
 * payout's owner (the seal's associated data binds it to them) to a shielded testnet address.
 */
function custodyVerdict({ s }: Context, m: Model, owner: Address, sealed: Hex, hash: Hex): Verdict {
  if (m.opened.has(lower(hash))) return { why: "replay" };
  let plaintext: string;
  try {
    plaintext = openSealedAddress(
      [DEV_SEAL_KEY],
      { chainId: s.chainId, redemptions: s.read.redemptions.address, owner },
      sealed,
    );
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return { why: error.code === "unknown_key" ? "missing_key" : "unreadable" };
  }
  let address: string;
  try {
    address = parseShieldedAddress(plaintext, "testnet").address;
  } catch (error) {
    if (!(error instanceof ZcashAddressError)) throw error;
    return { why: "invalid_address" };
  }
  m.opened.add(lower(hash));
  return { address };
}

/**
 * Custody discovers the payouts a step made, in id order, from their PayoutRequested events,
 * and decides each; the decision must be what the test meant: paid to the address it sealed, or
 * failed for the reason its records give (a copy of an envelope its owner already used is a replay
 * to custody before it is another owner's).
 */
export async function discover(ctx: Context, m: Model, label: string) {
  const { s, baseBlock } = ctx;
  for (let id = m.discovered + 1n; id <= m.payoutCount; id++) {
    const events = await s.publicClient.getContractEvents({
      address: s.read.redemptions.address,
      abi: redemptionsAbi,
      eventName: "PayoutRequested",
      args: { id },
      fromBlock: baseBlock,
    });
    expect(events.length, `${label}: PayoutRequested events of payout ${id}`).toBe(1);
    const { owner, sealedAddress, sealedAddressHash } = events[0]!.args;
    const mp = m.payouts.get(id)!;
    expect(
      { owner, sealedAddress: lower(sealedAddress!), hash: sealedAddressHash },
      `${label}: payout ${id} on the chain`,
    ).toEqual({ owner: mp.owner, sealedAddress: lower(mp.envelope), hash: keccak256(sealedAddress!) });
    const verdict = custodyVerdict(ctx, m, owner!, sealedAddress!, sealedAddressHash!);
    m.custody.set(id, verdict);
    m.discovered = id;
    const earlier = [...m.payouts.entries()].filter(
      ([other, p]) => other < id && lower(p.envelope) === lower(mp.envelope),
    );
    let expected: Verdict;
    switch (mp.meant) {
      case "payable":
        expected = { address: SAPLING };
        if (earlier.length > 0) count("custody: pays an envelope another owner copied first");
        break;
      case "unpayable":
        expected = { why: "invalid_address" };
        break;
      case "replay":
        expected = { why: "replay" };
        break;
      case "foreign":
        expected = { why: earlier.some(([, p]) => p.meant === "payable") ? "replay" : "unreadable" };
        break;
    }
    count(`custody: ${"address" in verdict ? "pays" : `fails (${verdict.why})`} a ${mp.meant} envelope`);
    expect(verdict, `${label}: custody's verdict on payout ${id} (${mp.meant} envelope of ${mp.owner})`).toEqual(
      expected,
    );
  }
}
