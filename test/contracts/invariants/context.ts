// What every run shares, made once before the first: the deployed system, the snapshot each run
// starts from, the proofs a run may spend, and the keys and envelopes the test made for them.
import { type Address, type Hex, type LocalAccount, getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { collateralRegistryAbi, priceFeedAbi } from "@zsd/sdk/abis";
import {
  type MintRequest,
  type Note,
  type NoteSpend,
  type SolidityProof,
  createNote,
  positionOwnerKey,
} from "@zsd/sdk";
import { type System, deploySystem } from "../../helpers/fixtures.ts";
import { type MockAggregator, deployMockAggregator } from "../../helpers/mock-aggregator.ts";
import { BASE_PRICE } from "./constants.ts";
import { IDLE_ZAT, MINTS, OPENED, TOP_UPS, WITHDRAWALS, alice, bob, carol, relayer } from "./constants.ts";

export interface MintProof {
  note: Note;
  owner: LocalAccount;
  floorZat: bigint;
  mint: bigint;
  proof: SolidityProof;
  request: MintRequest;
}
export interface SpendProof {
  note: Note;
  owner: LocalAccount;
  floorZat: bigint;
  /** The plaintext custody would read (SAPLING or UNPAYABLE), for the model. */
  zcashAddress: string;
  sealedAddress: Hex;
  proof: SolidityProof;
  spend: NoteSpend;
}

export interface Context {
  s: System;
  /** The snapshot every run reverts to; a revert uses it up, so each run takes it again. */
  base: Hex;
  /** The block of the snapshot every run starts from: payout events are read from there on. */
  baseBlock: bigint;
  timelock: Address;
  initialQueue: bigint[];
  owners: Map<Address, LocalAccount>;
  mints: MintProof[];
  topUps: SpendProof[];
  withdrawals: SpendProof[];
  /**
   * Every envelope the test sealed: for whom and holding what. The model's intent, kept apart from
   * custody, which learns what an envelope holds only by opening it.
   */
  sealedFor: Map<Hex, { owner: Address; plaintext: string }>;
  /** The price feed's two feeds, which steps break, disagree and mend (the deployed ones are replaced). */
  feeds: { primary: MockAggregator; secondary: MockAggregator };
}

export const ownerOf = (ctx: Context, note: Note) => {
  const account = privateKeyToAccount(positionOwnerKey(note));
  ctx.owners.set(account.address, account);
  return account;
};
export const keyOf = (ctx: Context, address: Address): LocalAccount => {
  const account = ctx.owners.get(getAddress(address));
  if (!account) throw new Error(`no key for ${address}`);
  return account;
};

export function seal(ctx: Context, plaintext: string, owner: Address): Hex {
  const envelope = ctx.s.seal(plaintext, owner);
  ctx.sealedFor.set(lower(envelope), { owner: getAddress(owner), plaintext });
  return envelope;
}
export const lower = (h: Hex) => h.toLowerCase() as Hex;

export async function setUp(): Promise<Context> {
  const s = await deploySystem();
  // Governance points the price feed at two breakable feeds, both at the base price.
  const feeds = { primary: await deployMockAggregator(s), secondary: await deployMockAggregator(s) };
  const now = (await s.publicClient.getBlock()).timestamp;
  for (const feed of Object.values(feeds)) await s.receipt(await feed.write.pushRound([BASE_PRICE, now]));
  const timelock = s.read.timelock.address;
  await s.testClient.impersonateAccount({ address: timelock });
  await s.testClient.setBalance({ address: timelock, value: 10n ** 20n });
  await s.receipt(
    await s.read.wallet.writeContract({
      account: timelock,
      chain: s.read.wallet.chain,
      address: s.read.priceFeed.address,
      abi: priceFeedAbi,
      functionName: "setFeeds",
      args: [feeds.primary.address, feeds.secondary.address],
    }),
  );
  const ctx: Context = {
    s,
    // Both taken once the proofs are made, below.
    base: "0x",
    baseBlock: 0n,
    timelock: s.read.timelock.address,
    initialQueue: [],
    owners: new Map(),
    mints: [],
    topUps: [],
    withdrawals: [],
    sealedFor: new Map(),
    feeds,
  };
  const { owners, mints, topUps, withdrawals } = ctx;
  for (const account of [alice, bob, carol, relayer]) owners.set(account.address, account);
  const notes = {
    opened: OPENED.map(() => createNote()),
    mints: MINTS.map(() => createNote()),
    topUps: TOP_UPS.map(() => createNote()),
    withdrawals: WITHDRAWALS.map(() => createNote()),
  };
  for (const [i, note] of notes.opened.entries()) await s.deposit(note, OPENED[i]!.amountZat);
  for (const [i, note] of notes.mints.entries()) await s.deposit(note, MINTS[i]!.amountZat);
  for (const [i, note] of notes.topUps.entries()) await s.deposit(note, TOP_UPS[i]!.amountZat);
  for (const [i, note] of notes.withdrawals.entries()) await s.deposit(note, WITHDRAWALS[i]!.amountZat);
  await s.deposit(createNote(), IDLE_ZAT);

  // Every proof against the tree as it is now (roots stay valid for maxRootAge once superseded).
  const chainId = BigInt(s.chainId);
  const minter = s.read.minter.address;
  const provedOpen = [];
  for (const [i, note] of notes.opened.entries()) {
    const o = OPENED[i]!;
    const p = await s.prove({
      note,
      amountZat: o.amountZat,
      collateralFloorZat: o.floorZat,
      mintAmount: o.mint,
      recipient: o.recipient.address,
    });
    provedOpen.push(p);
    ownerOf(ctx, note);
  }
  for (const [i, note] of notes.mints.entries()) {
    const o = MINTS[i]!;
    const p = await s.prove({
      note,
      amountZat: o.amountZat,
      collateralFloorZat: o.floorZat,
      mintAmount: o.mint,
      recipient: o.recipient.address,
    });
    mints.push({ note, owner: ownerOf(ctx, note), floorZat: o.floorZat, mint: o.mint, ...p });
  }
  for (const [i, note] of notes.topUps.entries()) {
    const o = TOP_UPS[i]!;
    const p = await s.proveSpend({
      note,
      amountZat: o.amountZat,
      collateralFloorZat: o.floorZat,
      binding: { chainId, minter, positionId: BigInt(i + 1) },
    });
    topUps.push({ note, owner: ownerOf(ctx, note), floorZat: o.floorZat, zcashAddress: "", sealedAddress: "0x", ...p });
  }
  for (const [i, note] of notes.withdrawals.entries()) {
    const o = WITHDRAWALS[i]!;
    const owner = ownerOf(ctx, note);
    const sealedAddress = seal(ctx, o.zcashAddress, owner.address);
    const p = await s.proveWithdraw({
      note,
      amountZat: o.amountZat,
      collateralFloorZat: o.floorZat,
      sealedAddress,
      owner: owner.address,
    });
    withdrawals.push({
      note,
      owner,
      floorZat: o.floorZat,
      zcashAddress: o.zcashAddress,
      sealedAddress,
      proof: p.proof,
      spend: p.spend,
    });
  }
  for (const p of provedOpen) await s.receipt(await s.as(relayer).minter.write.mint([p.proof, p.request]));
  // Owners (derived keys) send their own transactions; the timelock is governance.
  for (const address of [...owners.keys(), timelock]) {
    await s.testClient.setBalance({ address, value: 10n ** 20n });
  }
  ctx.base = await s.snapshot();
  ctx.baseBlock = await s.publicClient.getBlockNumber();
  // The opened positions' change, queued before the snapshot: every run starts with it pending.
  const queued = await s.publicClient.getContractEvents({
    address: s.read.registry.address,
    abi: collateralRegistryAbi,
    eventName: "LeafQueued",
    fromBlock: 0n,
  });
  ctx.initialQueue = queued.map((e) => e.args.leaf!);
  return ctx;
}
