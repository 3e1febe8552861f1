// Model-based random sequences over the money invariants of the contracts,
// with real calls and real proofs on the local Hardhat node.
//
// Every proof a run may use is made once, before the first run, against notes
// deposited then (mints, top-ups bound to positions 1..3, note withdrawals);
// the chain is snapshotted there and each run reverts to that snapshot, so each
// proof is valid again in every run (nullifier unspent, root known: maxRootAge
// is a day and the file lasts minutes). fast-check then draws a sequence of
// steps (deposits, mints, top-ups, repays, withdrawals, closes, liquidations,
// redistributions, redemptions of every size, payouts paid, failed and
// redirected, note withdrawals, change and released notes inserted from the queue by anyone
// (stretches read before an earlier insertion included; refused for leaves that
// are not the queued ones or a stretch off the head), price moves and crashes,
// governance through the impersonated timelock); each step predicts its own outcome from the chain
// state before it (which error, or what changes), and after it the chain is
// checked against the model kept here and against the invariants below.
//
// Custody is modelled as the payouts relay runs it: each new payout's envelope
// is read from its RedemptionRequested event and opened with the development
// seal key for the payout's owner; one that does not open, holds no payable
// address, or repeats an envelope an earlier payout opened is failed
// (unreadable_address). What the test sealed, and for whom, is kept apart as
// the model's intent, and the two must agree on every payout: envelopes copied
// onto another owner's redemption (before or after their owner's own) and
// replayed by their owner are among the steps.
//
//   FUZZ_RUNS (14), FUZZ_STEPS (40 at most per sequence), FUZZ_SEED (fixed),
//   FUZZ_PATH and FUZZ_REPLAY (replay a counterexample: its path and replayPath):
//   `npm run fuzz:contracts -- --runs 200 --steps 40 --seed 7`.
import fc from "fast-check";
import {
  type Address,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  encodeAbiParameters,
  getAddress,
  keccak256,
  parseEventLogs,
  zeroAddress,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collateralRegistryAbi, redemptionsAbi, stableMinterAbi } from "@zsd/sdk/abis";
import { DEV_SEAL_KEY, SealError, openSealedAddress } from "@zsd/sdk/seal";
import { ZcashAddressError, parseShieldedAddress } from "@zsd/sdk/zcash";
import {
  type MintRequest,
  type Note,
  type NoteSpend,
  type SolidityProof,
  DepositTree,
  createNote,
  depositLeaf,
  noteCommitment,
  positionOwnerKey,
  registryLeaves,
  releaseProver,
  repayTypedData,
  closeTypedData,
  redirectTypedData,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { ALL_ERRORS, type System, ZEC, ZSD, accounts, deploySystem } from "../helpers/fixtures.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 14);
const STEPS = Number(process.env.FUZZ_STEPS ?? 40);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const PATH = process.env.FUZZ_PATH || undefined;
/** The commands' own replay hint: the replayPath="..." printed after a counterexample. */
const REPLAY = process.env.FUZZ_REPLAY || undefined;

const { alice, bob, carol, relayer, attestor, oracleUpdater } = accounts;
const BPS = 10_000n;
/** zatoshi × price (USD × 1e8) × 100 = USD × 1e18. */
const ZAT_PRICE_TO_USD18 = 100n;
const BASE_PRICE = 50_00000000n;
const MIN_PRICE = 50_000000n;
/** A testnet Sapling address (checksum and all): what custody opens a payable envelope to. */
const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
/** No Bech32 address: it seals, but custody, opening it, finds nothing to pay and fails the payout. */
const UNPAYABLE = "ztestsapling1unpayableunpayableunpayableunpayableunpayableunpayableunpayableunpaya";
/** Holds no ZSD: simulated liquidations from it pass the ratio check and stop at the burn. */
const PROBE: Address = "0x000000000000000000000000000000000000dEaD";
const STATUS = { None: 0, Open: 1, Liquidated: 2, Closed: 3 } as const;
const PAYOUT = { None: 0, Requested: 1, Completed: 2, Failed: 3, Redirected: 4 } as const;
/** Exact arithmetic for the model of the redemption map: values × 1e18. */
const SCALE = 10n ** 18n;
/** A position read differs from the model of one step by at most this many zatoshi. */
const TOL_C = 3n;
/** Rounding left in backing + free beyond the positions' collateral: at most this many zatoshi per position. */
const SLACK_PER_POSITION = 2n;
/** The minter's map: factors ONE-scaled, a new frame (epoch) once one leaves [FRAME_FLOOR, FRAME_CEILING]. */
const ONE = 10n ** 36n;
const FRAME_FLOOR = 10n ** 27n;
const FRAME_CEILING = 10n ** 45n;
/** A position under 100% is spread over the others only if they hold at least a millionth of its debt. */
const SPREAD_PPM = 1_000_000n;

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
const abs = (a: bigint) => (a < 0n ? -a : a);

// ------------------------------------------------------------------ pool

/** Opened before the snapshot: every run starts with positions 1..3. */
const OPENED = [
  { amountZat: 10n * ZEC, floorZat: 10n * ZEC, mint: 200n * ZSD, recipient: alice }, // 250%
  { amountZat: 6n * ZEC, floorZat: 4n * ZEC, mint: 130n * ZSD, recipient: bob }, // 153.8%, 2 ZEC change
  { amountZat: 5n * ZEC, floorZat: 5n * ZEC, mint: 160n * ZSD, recipient: alice }, // 156.3%
];
/** Mint proofs a run may use, each at most once (the nullifier). */
const MINTS = [
  { amountZat: 8n * ZEC, floorZat: 5n * ZEC, mint: 100n * ZSD, recipient: bob }, // 250%, 3 ZEC change
  { amountZat: 3n * ZEC, floorZat: 3n * ZEC, mint: 95n * ZSD, recipient: alice }, // 157.9%
  { amountZat: 20n * ZEC, floorZat: 20n * ZEC, mint: 400n * ZSD, recipient: bob }, // 250%
  { amountZat: ZEC / 2n, floorZat: ZEC / 2n, mint: 16n * ZSD, recipient: alice }, // 156.3%
];
/** Top-up proofs, the k-th bound to position k + 1. */
const TOP_UPS = [
  { amountZat: 2n * ZEC, floorZat: 2n * ZEC },
  { amountZat: 3n * ZEC, floorZat: 15n * (ZEC / 10n) },
  { amountZat: ZEC, floorZat: ZEC },
];
/** Note withdrawals, bound to (address, the note's derived owner). */
const WITHDRAWALS = [
  { amountZat: 4n * ZEC, floorZat: 4n * ZEC, zcashAddress: UNPAYABLE },
  { amountZat: 2n * ZEC, floorZat: 15n * (ZEC / 10n), zcashAddress: SAPLING },
];
/** Deposited and never spent. */
const IDLE_ZAT = 7n * ZEC;

interface MintProof {
  note: Note;
  owner: LocalAccount;
  floorZat: bigint;
  mint: bigint;
  proof: SolidityProof;
  request: MintRequest;
}
interface SpendProof {
  note: Note;
  owner: LocalAccount;
  floorZat: bigint;
  /** The plaintext custody would read (SAPLING or UNPAYABLE), for the model. */
  zcashAddress: string;
  sealedAddress: Hex;
  proof: SolidityProof;
  spend: NoteSpend;
}

// ------------------------------------------------------------ chain state

interface PositionView {
  owner: Address;
  status: number;
  collateralZat: bigint;
  debt: bigint;
}
interface Params {
  minCollateralRatioBps: bigint;
  liquidationRatioBps: bigint;
  liquidationBonusBps: bigint;
  systemFloorRatioBps: bigint;
  redistributionRewardBps: bigint;
  redemptionFeeBps: bigint;
}
interface Chain {
  held: bigint;
  unminted: bigint;
  backing: bigint;
  free: bigint;
  pending: bigint;
  supply: bigint;
  debt: bigint;
  payoutCount: bigint;
  price: bigint;
  epoch: bigint;
  params: Params;
  positions: PositionView[];
  /** The registry's queue of leaves waiting for the tree (its counters and chain), and the tree. */
  queuedCount: bigint;
  insertedCount: bigint;
  pendingCount: bigint;
  chainTip: Hex;
  root: bigint;
  treeSize: bigint;
}

const LOW_192 = (1n << 192n) - 1n;
/** The registry's chain over every leaf ever queued: from the empty queue's word (1), each link keccak's low 192 bits. */
const queueChain = (leaves: readonly bigint[]): Hex =>
  leaves.reduce<Hex>(
    (h, leaf) => {
      const link = BigInt(keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "uint256" }], [h, leaf])));
      return `0x${(link & LOW_192).toString(16).padStart(64, "0")}`;
    },
    `0x${"0".repeat(63)}1`,
  );

// ------------------------------------------------------------------ model

/**
 * What the test meant a payout's envelope to be, from what it sealed and for whom: its owner's
 * payable address, its owner's unpayable one, another owner's envelope copied onto this payout,
 * or an envelope its owner already used on an earlier payout.
 */
type Meant = "payable" | "unpayable" | "foreign" | "replay";
interface ModelPayout {
  owner: Address;
  zatDue: bigint;
  status: number;
  /** The envelope the step sent (custody reads its own copy from the chain). */
  envelope: Hex;
  meant: Meant;
}
/** Custody's decision on a payout, reached as the payouts relay reaches it: the address it pays, or why it fails it. */
type Verdict = { address: string } | { why: "unreadable" | "invalid_address" | "replay" | "missing_key" };
/** What the test expects, kept apart from the chain and compared with it after every step. */
interface Model {
  held: bigint;
  supply: bigint;
  unminted: bigint;
  pending: bigint;
  price: bigint;
  params: Params;
  positions: { owner: Address; status: number }[];
  payouts: Map<bigint, ModelPayout>;
  payoutCount: bigint;
  /** Proofs spent in this run. */
  spent: Set<string>;
  /** Payouts a step created or moved: their records are read back. */
  touched: Set<bigint>;
  /** The minter's epoch and its map's factors a and f (exact: the chain's own integer steps). */
  epoch: bigint;
  mapA: bigint;
  mapF: bigint;
  /**
   * How far Σ debts may exceed totalDebt beyond a wei per position: each redistribution multiplies
   * the others' rounding by ceil(total / rest) (≤ 1e6), a par redemption scales it down with the debt.
   */
  debtSlack: bigint;
  /** Custody's side: its verdict on each payout discovered (ids up to `discovered`), and the envelopes that opened. */
  custody: Map<bigint, Verdict>;
  opened: Set<Hex>;
  discovered: bigint;
  /** Every leaf ever queued, change and released notes (index: its sequence), and the head: sequences below it left the queue. */
  queued: bigint[];
  head: number;
}

interface Expected {
  status: number;
  collateral: bigint;
  debt: bigint;
  owner?: Address;
  /** Tolerances (the model of a redemption or redistribution is exact; the chain rounds). */
  tolC?: bigint;
  tolD?: bigint;
  why?: string;
}

type Dest = "note" | "address" | "unpayable";
/** A redirect may also name the failed payout's own envelope again (a wallet retrying as it was). */
type RedirectDest = Dest | "same";
/** A redemption's envelope: fresh, one of the redeemer's earlier payouts, another owner's, or one about to be front-run. */
type Envelope = "address" | "unpayable" | "replay" | "foreign" | "frontrun";
type Outcome = { ok: true; receipt: TransactionReceipt } | { ok: false; error: string };

const stats = {
  steps: 0,
  outcomes: new Map<string, number>(),
  maxSlack: 0n,
  maxSlackPerPosition: 0,
  maxDebtExcess: 0n,
  maxCollateralError: 0n,
  maxDebtError: 0n,
  inlineRedistributions: 0,
  splitChecks: 0,
  maxSplitShortfall: 0n,
  /** Redemptions paid pro rata out of one unspreadable position under 100% (and those it refused). */
  stuckRedemptions: 0,
  stuckRefused: 0,
  /** Redemptions refused for leaving fewer wei than debtors. */
  dustGuards: 0,
  /** Redistributions refused because the others hold under a millionth of the debt (not alone). */
  unspreadableRefusals: 0,
  /** Frames: epochs started while debt remained. */
  frames: 0,
  maxDebtSlack: 0n,
  ambiguousRedemptions: 0,
};
const count = (key: string) => stats.outcomes.set(key, (stats.outcomes.get(key) ?? 0) + 1);

/** The custom error's name a call reverted with, decoded with every contract's errors. */
function revertName(error: unknown): string {
  if (!(error instanceof BaseError)) throw error;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
  const decoded =
    reverted.data ?? (reverted.raw ? decodeErrorResult({ abi: ALL_ERRORS, data: reverted.raw }) : undefined);
  if (!decoded?.errorName) throw error;
  return decoded.errorName;
}

describe("money invariants under random sequences", () => {
  let s: System;
  let base: Hex;
  /** The block of the snapshot every run starts from: payout events are read from there on. */
  let baseBlock: bigint;
  let timelock: Address;
  let initialQueue: bigint[] = [];
  const owners = new Map<Address, LocalAccount>();
  const mints: MintProof[] = [];
  const topUps: SpendProof[] = [];
  const withdrawals: SpendProof[] = [];

  const ownerOf = (note: Note) => {
    const account = privateKeyToAccount(positionOwnerKey(note));
    owners.set(account.address, account);
    return account;
  };
  const keyOf = (address: Address): LocalAccount => {
    const account = owners.get(getAddress(address));
    if (!account) throw new Error(`no key for ${address}`);
    return account;
  };

  beforeAll(async () => {
    s = await deploySystem();
    timelock = s.read.timelock.address;
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
      ownerOf(note);
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
      mints.push({ note, owner: ownerOf(note), floorZat: o.floorZat, mint: o.mint, ...p });
    }
    for (const [i, note] of notes.topUps.entries()) {
      const o = TOP_UPS[i]!;
      const p = await s.proveSpend({
        note,
        amountZat: o.amountZat,
        collateralFloorZat: o.floorZat,
        binding: { chainId, minter, positionId: BigInt(i + 1) },
      });
      topUps.push({ note, owner: ownerOf(note), floorZat: o.floorZat, zcashAddress: "", sealedAddress: "0x", ...p });
    }
    for (const [i, note] of notes.withdrawals.entries()) {
      const o = WITHDRAWALS[i]!;
      const owner = ownerOf(note);
      const sealedAddress = seal(o.zcashAddress, owner.address);
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
    base = await s.snapshot();
    baseBlock = await s.publicClient.getBlockNumber();
    // The opened positions' change, queued before the snapshot: every run starts with it pending.
    const queued = await s.publicClient.getContractEvents({
      address: s.read.registry.address,
      abi: collateralRegistryAbi,
      eventName: "LeafQueued",
      fromBlock: 0n,
    });
    initialQueue = queued.map((e) => e.args.leaf!);
  }, 300_000);

  afterAll(async () => {
    await releaseProver();
    const outcomes = [...stats.outcomes.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    console.log(
      [
        `invariants: ${stats.steps} steps`,
        `  rounding slack (backing + free − Σ collateral): max ${stats.maxSlack} zat, ${stats.maxSlackPerPosition.toFixed(2)} zat per position`,
        `  Σ debt − totalDebt: max ${stats.maxDebtExcess} wei`,
        `  model vs chain after redemptions/redistributions: collateral ${stats.maxCollateralError} zat, debt ${stats.maxDebtError} wei`,
        `  stuck redemptions ${stats.stuckRedemptions} (refused ${stats.stuckRefused}), dust guards ${stats.dustGuards}, unspreadable refusals ${stats.unspreadableRefusals}, frames ${stats.frames}, ambiguous redemptions ${stats.ambiguousRedemptions}, max debt slack ${stats.maxDebtSlack} wei`,
        `  inline redistributions ${stats.inlineRedistributions}, split checks ${stats.splitChecks} (max shortfall of the split ${stats.maxSplitShortfall} zat)`,
        ...outcomes.map(([k, v]) => `  ${k}: ${v}`),
      ].join("\n"),
    );
  });

  // ------------------------------------------------------------ plumbing

  const as = (account: LocalAccount) => s.as(account);
  const minterDomain = () => ({ chainId: s.chainId, verifyingContract: s.read.minter.address });
  const deadline = async () => (await s.publicClient.getBlock()).timestamp + 3600n;

  async function send(write: () => Promise<Hex>): Promise<Outcome> {
    let hash: Hex;
    try {
      hash = await write();
    } catch (error) {
      return { ok: false, error: revertName(error) };
    }
    const receipt = await s.receipt(hash);
    if (receipt.status !== "success") return { ok: false, error: "reverted" };
    return { ok: true, receipt };
  }

  async function simulate(call: () => Promise<unknown>): Promise<string | null> {
    try {
      await call();
      return null;
    } catch (error) {
      return revertName(error);
    }
  }

  /** Asserts the outcome is the predicted error (or success when null). */
  function expectOutcome(label: string, outcome: Outcome, expected: string | null): outcome is Outcome & { ok: true } {
    count(`${label.split("(")[0]}: ${outcome.ok ? "ok" : outcome.error}`);
    expect(outcome.ok ? null : outcome.error, `${label}: outcome`).toBe(expected);
    return outcome.ok;
  }

  async function read(): Promise<Chain> {
    const r = s.read;
    const [held, unminted, backing, free, pending, supply, debt, n, payoutCount, round, epoch] = await Promise.all([
      r.registry.read.totalCollateralZat(),
      r.registry.read.unmintedZat(),
      r.minter.read.backingCollateralZat(),
      r.minter.read.freeCollateralZat(),
      r.redemptions.read.pendingZatDue(),
      r.token.read.totalSupply(),
      r.minter.read.totalDebt(),
      r.minter.read.positionCount(),
      r.redemptions.read.redemptionCount(),
      r.oracle.read.latestRoundData(),
      r.minter.read.epoch(),
    ]);
    const [queuedCount, insertedCount, pendingCount, root, treeSize] = await Promise.all([
      r.registry.read.queuedCount(),
      r.registry.read.insertedCount(),
      r.registry.read.pendingCount(),
      r.registry.read.root(),
      r.registry.read.size(),
    ]);
    const [params, positions] = await Promise.all([
      Promise.all([
        r.minter.read.minCollateralRatioBps(),
        r.minter.read.liquidationRatioBps(),
        r.minter.read.liquidationBonusBps(),
        r.minter.read.systemFloorRatioBps(),
        r.minter.read.redistributionRewardBps(),
        r.redemptions.read.redemptionFeeBps(),
      ]),
      Promise.all(Array.from({ length: Number(n) }, (_, i) => r.minter.read.getPosition([BigInt(i + 1)]))),
    ]);
    const [minCollateralRatioBps, liquidationRatioBps, liquidationBonusBps, systemFloorRatioBps, rewardBps, feeBps] =
      params;
    return {
      held,
      unminted,
      backing,
      free,
      pending,
      supply,
      debt,
      payoutCount,
      price: round[1],
      epoch: BigInt(epoch),
      params: {
        minCollateralRatioBps,
        liquidationRatioBps,
        liquidationBonusBps,
        systemFloorRatioBps,
        redistributionRewardBps: rewardBps,
        redemptionFeeBps: feeBps,
      },
      positions: positions.map((p) => ({ ...p, status: Number(p.status) })),
      queuedCount,
      insertedCount,
      pendingCount,
      chainTip: await r.registry.read.chainAt([queuedCount]),
      root,
      treeSize,
    };
  }

  /** Moves ZSD from the other holders to `to` until it holds `amount` (a market, in short). */
  async function gather(to: Address, amount: bigint) {
    const balance = (a: Address) => s.read.token.read.balanceOf([a]);
    let have = await balance(to);
    if (have >= amount) return;
    const holders = [...owners.values()].filter((a) => a.address !== to);
    const balances = await Promise.all(holders.map((a) => balance(a.address)));
    for (const [i, holder] of holders.entries()) {
      if (have >= amount) break;
      const give = min(balances[i]!, amount - have);
      if (give === 0n) continue;
      await s.receipt(await as(holder).token.write.transfer([to, give]));
      have += give;
    }
    expect(have >= amount, `gather ${amount} for ${to}`).toBe(true);
  }

  /**
   * Every envelope the test sealed: for whom and holding what. The model's intent, kept apart from
   * custody, which learns what an envelope holds only by opening it.
   */
  const sealedFor = new Map<Hex, { owner: Address; plaintext: string }>();
  function seal(plaintext: string, owner: Address): Hex {
    const envelope = s.seal(plaintext, owner);
    sealedFor.set(lower(envelope), { owner: getAddress(owner), plaintext });
    return envelope;
  }
  const lower = (h: Hex) => h.toLowerCase() as Hex;

  /** Where released ZEC goes; an address is sealed for the payout's owner, as a wallet would. */
  function destination(dest: Dest, owner: Address): { sealedAddress: Hex; noteCommitment: bigint } {
    if (dest === "note") return { sealedAddress: "0x", noteCommitment: noteCommitment(createNote()) };
    return { sealedAddress: seal(dest === "address" ? SAPLING : UNPAYABLE, owner), noteCommitment: 0n };
  }

  /** What the test meant by sending `envelope` for a new payout of `owner`, from its own records only. */
  function meant(m: Model, owner: Address, envelope: Hex): Meant {
    const sealed = sealedFor.get(lower(envelope));
    if (!sealed) throw new Error(`an envelope the test did not seal: ${envelope}`);
    if (sealed.owner !== getAddress(owner)) return "foreign";
    if (sealed.plaintext !== SAPLING) return "unpayable";
    // The first payout of its owner with it was payable: any later one of theirs is the replay.
    for (const p of m.payouts.values()) {
      if (p.owner === getAddress(owner) && lower(p.envelope) === lower(envelope)) return "replay";
    }
    return "payable";
  }

  /** The model side of a new payout of `zatDue` to `owner`, to `envelope`. */
  function payout(m: Model, owner: Address, zatDue: bigint, envelope: Hex) {
    const intent = meant(m, owner, envelope);
    const id = ++m.payoutCount;
    m.payouts.set(id, { owner: getAddress(owner), zatDue, status: PAYOUT.Requested, envelope, meant: intent });
    m.pending += zatDue;
    m.touched.add(id);
  }

  /** The model side of released ZEC: a payout to `owner`, or a note (unminted again, its leaf queued like change). */
  function released(m: Model, owner: Address, amountZat: bigint, to: { sealedAddress: Hex; noteCommitment: bigint }) {
    if (amountZat === 0n) return;
    if (to.noteCommitment !== 0n) {
      m.unminted += amountZat;
      m.queued.push(depositLeaf(amountZat, to.noteCommitment));
      return;
    }
    payout(m, owner, amountZat, to.sealedAddress);
  }

  /**
   * Custody's verdict on a payout's envelope, as SealedAddresses.payable and openPayout reach it:
   * an envelope an earlier payout opened is a replay; else it must open with custody's key for the
   * payout's owner (the seal's associated data binds it to them) to a shielded testnet address.
   */
  function custodyVerdict(m: Model, owner: Address, sealed: Hex, hash: Hex): Verdict {
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
   * Custody discovers the payouts a step made, in id order, from their RedemptionRequested events,
   * and decides each; the decision must be what the test meant: paid to the address it sealed, or
   * failed for the reason its records give (a copy of an envelope its owner already used is a replay
   * to custody before it is another owner's).
   */
  async function discover(m: Model, label: string) {
    for (let id = m.discovered + 1n; id <= m.payoutCount; id++) {
      const events = await s.publicClient.getContractEvents({
        address: s.read.redemptions.address,
        abi: redemptionsAbi,
        eventName: "RedemptionRequested",
        args: { id },
        fromBlock: baseBlock,
      });
      expect(events.length, `${label}: RedemptionRequested events of payout ${id}`).toBe(1);
      const { owner, sealedAddress, sealedAddressHash } = events[0]!.args;
      const mp = m.payouts.get(id)!;
      expect(
        { owner, sealedAddress: lower(sealedAddress!), hash: sealedAddressHash },
        `${label}: payout ${id} on the chain`,
      ).toEqual({ owner: mp.owner, sealedAddress: lower(mp.envelope), hash: keccak256(sealedAddress!) });
      const verdict = custodyVerdict(m, owner!, sealedAddress!, sealedAddressHash!);
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

  const value = (c: Chain, zat: bigint) => zat * c.price * ZAT_PRICE_TO_USD18;

  /** Recovery mode for exits, as the minter computes it. */
  function exitError(c: Chain, collateralOut: bigint, debtOut: bigint): string | null {
    const backingAfter = c.backing - min(collateralOut, c.backing);
    const debtAfter = c.debt - debtOut;
    if (debtAfter === 0n || backingAfter * c.debt >= c.backing * debtAfter) return null;
    if (value(c, backingAfter) * BPS < debtAfter * c.params.systemFloorRatioBps) return "SystemRatioTooLow";
    return null;
  }

  // ------------------------------------------------ model of the redemption map

  /** Whether the others hold at least a millionth of a position's debt (the minter's _spreadable). */
  const spreadable = (debt: bigint, totalDebt: bigint) => (totalDebt - debt) * SPREAD_PPM >= debt;

  /** The map after a step: a new frame (an epoch that keeps the debt) once a factor leaves its range. */
  function setMap(m: Model, a: bigint, f: bigint) {
    if (a >= FRAME_FLOOR && f >= FRAME_FLOOR && f <= FRAME_CEILING) {
      m.mapA = a;
      m.mapF = f;
      return;
    }
    stats.frames++;
    count("frame: new epoch keeping the debt");
    m.epoch++;
    m.mapA = ONE;
    m.mapF = ONE;
  }
  /** All debt redeemed: a new epoch, nothing carried. */
  function endEpoch(m: Model) {
    m.epoch++;
    m.mapA = ONE;
    m.mapF = ONE;
    m.debtSlack = 0n;
  }
  /** A redistribution of `debt` (as read) out of `total`, among `n` positions. */
  function redistributedInModel(m: Model, total: bigint, debt: bigint, n: bigint) {
    const rest = total - debt;
    m.debtSlack = (m.debtSlack + n) * ceilDiv(total, rest);
    stats.maxDebtSlack = max(stats.maxDebtSlack, m.debtSlack);
    setMap(m, m.mapA, ceilDiv(m.mapF * total, rest));
  }

  interface Exact {
    id: bigint;
    c: bigint;
    d: bigint;
    tolD: bigint;
    status: number;
  }

  /** Positions with debt now, in exact (scaled) arithmetic. */
  function exactOf(c: Chain): Exact[] {
    return c.positions.flatMap((p, i) =>
      p.status === STATUS.Open && p.debt > 0n
        ? [{ id: BigInt(i + 1), c: p.collateralZat * SCALE, d: p.debt * SCALE, tolD: 2n, status: STATUS.Open }]
        : [],
    );
  }

  /** Spreads position `id`'s debt and its collateral less `reward` over the others in proportion to debt. */
  function spread(xs: Exact[], id: bigint, totalDebt: bigint, reward: bigint) {
    const t = xs.find((x) => x.id === id)!;
    const rest = totalDebt * SCALE - t.d;
    const give = t.c - reward * SCALE;
    for (const x of xs) {
      if (x === t || x.d === 0n) continue;
      x.c += (give * x.d) / rest;
      x.tolD = ceilDiv(x.tolD * totalDebt * SCALE, rest) + 1n;
      x.d = (x.d * totalDebt * SCALE) / rest;
    }
    t.c = 0n;
    t.d = 0n;
    t.status = STATUS.Liquidated;
  }

  const underwater = (x: Exact, price: bigint) => x.c * price * ZAT_PRICE_TO_USD18 < x.d;
  /**
   * Within a few units of 100% (5 zatoshi of value, a millionth of the debt): the chain's rounding
   * may put it on either side, and a redemption may settle such a position to be safe from its reads.
   */
  const borderline = (x: Exact, price: bigint) =>
    abs(x.c * price * ZAT_PRICE_TO_USD18 - x.d) <=
    (5n * price * ZAT_PRICE_TO_USD18 + x.tolD) * SCALE + x.d / 1_000_000n;

  function expectedOf(xs: Exact[], why: string, totalDebt: bigint): Map<bigint, Expected> {
    const out = new Map<bigint, Expected>();
    const n = BigInt(xs.length);
    for (const x of xs) {
      if (x.c < -TOL_C * SCALE) {
        throw new Error(`${why}: position ${x.id} would be charged beyond its collateral (${x.c / SCALE} zat)`);
      }
      out.set(x.id, {
        status: x.status,
        collateral: x.c < 0n ? 0n : x.c / SCALE,
        // A read is capped at totalDebt (less a wei for each other debtor): the last debtor owes what is left.
        debt: min(x.d / SCALE, totalDebt),
        tolC: TOL_C,
        tolD: x.tolD + n,
        why,
      });
    }
    return out;
  }

  // ------------------------------------------------------------ checks

  function checkPositions(before: Chain, after: Chain, expected: Map<bigint, Expected>, label: string) {
    expect(after.positions.length >= before.positions.length, `${label}: position count`).toBe(true);
    for (const [i, p] of after.positions.entries()) {
      const id = BigInt(i + 1);
      const e = expected.get(id);
      if (!e) {
        // Everything a step does not name stays exactly as it was (a failed payout moves no position),
        // but for a few wei of debt: a read is capped at totalDebt, and totalDebt falls by the others'
        // rounded-up debts as they leave, so the last position's debt can read up to one wei per
        // position less (or more again when the cap lifts).
        const was = before.positions[i]!;
        const debtors = (c: Chain) => c.positions.filter((q) => q.debt > 0n).length;
        const capped = after.debt !== before.debt || debtors(after) !== debtors(before);
        const drift = p.debt !== was.debt && p.debt > 0n && was.debt > 0n && abs(p.debt - was.debt);
        const debt = capped && drift && drift <= BigInt(after.positions.length) ? was.debt : p.debt;
        if (debt !== p.debt) count("debt read moved by the totalDebt cap");
        expect({ ...p, debt }, `${label}: position ${id} unchanged`).toEqual(was);
        continue;
      }
      const where = `${label}: position ${id}${e.why ? ` (${e.why})` : ""}`;
      expect(p.status, `${where} status`).toBe(e.status);
      if (e.owner) expect(p.owner, `${where} owner`).toBe(e.owner);
      const errC = abs(p.collateralZat - e.collateral);
      const errD = abs(p.debt - e.debt);
      if (e.tolC !== undefined) {
        stats.maxCollateralError = max(stats.maxCollateralError, errC);
        stats.maxDebtError = max(stats.maxDebtError, errD);
      }
      expect(errC <= (e.tolC ?? 0n), `${where} collateral ${p.collateralZat}, model ${e.collateral}`).toBe(true);
      expect(errD <= (e.tolD ?? 0n), `${where} debt ${p.debt}, model ${e.debt}`).toBe(true);
    }
  }

  async function checkInvariants(m: Model, c: Chain, label: string) {
    // ZEC held = unminted notes + positions (backing and free) + owed payouts, exactly.
    expect(c.held, `${label}: held = unminted + backing + free + pending`).toBe(
      c.unminted + c.backing + c.free + c.pending,
    );
    // The model's totals: deposits in, spends and payouts out, nothing else.
    expect(c.held, `${label}: totalCollateralZat (model)`).toBe(m.held);
    expect(c.unminted, `${label}: unmintedZat (model)`).toBe(m.unminted);
    expect(c.pending, `${label}: pendingZatDue (model)`).toBe(m.pending);
    expect(c.payoutCount, `${label}: redemptionCount (model)`).toBe(m.payoutCount);
    expect(c.price, `${label}: price`).toBe(m.price);
    expect(c.epoch, `${label}: epoch (model)`).toBe(m.epoch);
    expect(c.params, `${label}: parameters`).toEqual(m.params);
    expect(c.supply, `${label}: totalSupply = totalDebt`).toBe(c.debt);
    // Change waits in the queue, in the order spent, until someone inserts it.
    expect([c.queuedCount, c.insertedCount], `${label}: queued and inserted (model)`).toEqual([
      BigInt(m.queued.length),
      BigInt(m.head),
    ]);
    expect(c.pendingCount, `${label}: pendingCount`).toBe(c.queuedCount - c.insertedCount);
    expect(c.chainTip, `${label}: chainAt(queuedCount) (model)`).toBe(queueChain(m.queued));
    expect(c.supply, `${label}: totalSupply (model)`).toBe(m.supply);

    const n = BigInt(c.positions.length);
    let debts = 0n;
    let collateral = 0n;
    expect(c.positions.length, `${label}: positions (model)`).toBe(m.positions.length);
    for (const [i, p] of c.positions.entries()) {
      const mp = m.positions[i]!;
      expect({ owner: p.owner, status: p.status }, `${label}: position ${i + 1} owner and status (model)`).toEqual(mp);
      if (p.status !== STATUS.Open) expect(p.debt, `${label}: position ${i + 1} not open owes nothing`).toBe(0n);
      if (p.status === STATUS.Closed) expect(p.collateralZat, `${label}: position ${i + 1} closed`).toBe(0n);
      debts += p.debt;
      collateral += p.collateralZat;
    }
    // Debt rounds up per position, by at most one wei each, plus what redistributions multiplied
    // of the others' rounding (total / rest each, tracked in the model).
    const excess = debts - c.debt;
    stats.maxDebtExcess = max(stats.maxDebtExcess, excess);
    if (c.debt === 0n) m.debtSlack = 0n;
    expect(
      excess >= 0n && excess <= n + m.debtSlack,
      `${label}: Σ debt ${debts} within [totalDebt ${c.debt}, + ${n} + redistribution slack ${m.debtSlack}]`,
    ).toBe(true);
    // Collateral rounds down per position: the totals hold at least the sum, and little more.
    const slack = c.backing + c.free - collateral;
    stats.maxSlack = max(stats.maxSlack, slack);
    if (n > 0n) stats.maxSlackPerPosition = Math.max(stats.maxSlackPerPosition, Number(slack) / Number(n));
    expect(slack >= 0n, `${label}: Σ collateral ${collateral} <= backing + free ${c.backing + c.free}`).toBe(true);
    expect(
      slack <= SLACK_PER_POSITION * n,
      `${label}: backing + free exceeds Σ collateral by ${slack} zat (> ${SLACK_PER_POSITION} per position)`,
    ).toBe(true);

    // Owed payouts are the model's requested and failed ones, and each record is as the model says.
    let owed = 0n;
    for (const p of m.payouts.values())
      if (p.status === PAYOUT.Requested || p.status === PAYOUT.Failed) owed += p.zatDue;
    expect(owed, `${label}: Σ owed payouts (model) = pendingZatDue`).toBe(c.pending);
    for (const id of m.touched) {
      const r = await s.read.redemptions.read.getRedemption([id]);
      const mp = m.payouts.get(id)!;
      expect(
        { owner: r.owner, status: Number(r.status), zatDue: BigInt(r.zatDue) },
        `${label}: payout ${id} (model)`,
      ).toEqual({ owner: mp.owner, status: mp.status, zatDue: mp.zatDue });
    }
    m.touched.clear();
  }

  /** Liquidation possible exactly under the liquidation ratio; redistribution exactly under 100%. */
  async function probe(c: Chain, label: string) {
    const checks = c.positions.map(async (p, i) => {
      if (p.status !== STATUS.Open) return;
      const id = BigInt(i + 1);
      const v = value(c, p.collateralZat);
      const to = { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n };
      const liquidatable = p.debt !== 0n && v * BPS < p.debt * c.params.liquidationRatioBps;
      const liquidation = await simulate(() =>
        s.publicClient.simulateContract({
          address: s.read.minter.address,
          abi: stableMinterAbi,
          functionName: "liquidate",
          args: [id, to],
          account: PROBE,
        }),
      );
      // Past the ratio check the burn refuses the probe, which holds no ZSD.
      expect(liquidation, `${label}: liquidation probe of position ${id} (${v} vs debt ${p.debt})`).toBe(
        liquidatable ? "ERC20InsufficientBalance" : "PositionNotLiquidatable",
      );
      const expected =
        p.debt === 0n || v >= p.debt
          ? "PositionNotUnderwater"
          : !spreadable(p.debt, c.debt)
            ? "NoDebtToRedistributeTo"
            : null;
      const redistribution = await simulate(() =>
        s.publicClient.simulateContract({
          address: s.read.minter.address,
          abi: stableMinterAbi,
          functionName: "redistribute",
          args: [id, to],
          account: PROBE,
        }),
      );
      expect(redistribution, `${label}: redistribution probe of position ${id}`).toBe(expected);
    });
    await Promise.all(checks);
  }

  // ------------------------------------------------------------ the world

  class World {
    chain: Chain | undefined;

    /** Runs one step: `body` sends it and says how each position changes; then everything is checked. */
    async step(m: Model, label: string, body: (c: Chain) => Promise<Map<bigint, Expected>>, probeAfter = false) {
      stats.steps++;
      const before = this.chain ?? (await read());
      this.chain = undefined;
      const expected = await body(before);
      const after = await read();
      await discover(m, label);
      checkPositions(before, after, expected, label);
      await checkInvariants(m, after, label);
      if (probeAfter) await probe(after, label);
      this.chain = after;
    }
  }

  abstract class Step implements fc.AsyncCommand<Model, World> {
    check() {
      return true;
    }
    abstract run(m: Model, w: World): Promise<void>;
    abstract toString(): string;
  }

  /** The position a step acts on: by id, or (for keepers) riskiest first. */
  function pick(c: Chain, index: number, riskiest = false): bigint {
    const ids = c.positions.map((_, i) => BigInt(i + 1));
    if (riskiest) {
      const key = (id: bigint) => {
        const p = c.positions[Number(id) - 1]!;
        if (p.status !== STATUS.Open || p.debt === 0n) return Number.POSITIVE_INFINITY;
        return Number(value(c, p.collateralZat)) / Number(p.debt);
      };
      ids.sort((a, b) => key(a) - key(b));
    }
    return ids[index % ids.length]!;
  }

  // ------------------------------------------------------------ steps

  class Deposit extends Step {
    constructor(readonly amountZat: bigint) {
      super();
    }
    toString() {
      return `Deposit(${this.amountZat})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async () => {
        await s.deposit(createNote(), this.amountZat);
        count("Deposit: ok");
        m.held += this.amountZat;
        m.unminted += this.amountZat;
        return new Map();
      });
    }
  }

  /**
   * The attestor records deposits in one batch (recordDeposits: the total only).
   * With `repeat`, the batch holds its first leaf twice: refused as a second
   * claim on the same ZEC, and nothing moves.
   */
  class DepositBatch extends Step {
    constructor(
      readonly amounts: bigint[],
      readonly repeat: boolean,
    ) {
      super();
    }
    toString() {
      return `DepositBatch(${this.amounts.join(", ")}${this.repeat ? ", repeated" : ""})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async () => {
        const leaves = this.amounts.map((a) => depositLeaf(a, noteCommitment(createNote())));
        if (this.repeat) leaves.push(leaves[0]!);
        const total = this.amounts.reduce((a, b) => a + b, 0n) + (this.repeat ? this.amounts[0]! : 0n);
        const outcome = await send(() => as(attestor).registry.write.recordDeposits([leaves, total]));
        if (!expectOutcome(this.toString(), outcome, this.repeat ? "DepositAlreadyRecorded" : null)) {
          return new Map();
        }
        m.held += total;
        m.unminted += total;
        return new Map();
      });
    }
  }

  class Mint extends Step {
    constructor(readonly k: number) {
      super();
    }
    toString() {
      return `Mint(${this.k})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const p = mints[this.k]!;
        const v = value(c, p.floorZat);
        const systemValue = value(c, c.backing + p.floorZat);
        let expected: string | null = null;
        if (v * BPS < p.mint * c.params.minCollateralRatioBps) expected = "InsufficientCollateralValue";
        else if (
          systemValue * BPS < (c.debt + p.mint) * c.params.systemFloorRatioBps &&
          v * BPS < p.mint * c.params.systemFloorRatioBps
        ) {
          expected = "SystemRatioTooLow";
        } else if (m.spent.has(`mint${this.k}`)) expected = "NullifierAlreadySpent";
        const outcome = await send(() => as(relayer).minter.write.mint([p.proof, p.request]));
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        m.spent.add(`mint${this.k}`);
        m.unminted -= p.floorZat;
        m.supply += p.mint;
        if (p.request.changeLeaf !== 0n) m.queued.push(p.request.changeLeaf);
        m.positions.push({ owner: p.owner.address, status: STATUS.Open });
        const id = BigInt(c.positions.length + 1);
        return new Map([[id, { status: STATUS.Open, owner: p.owner.address, collateral: p.floorZat, debt: p.mint }]]);
      });
    }
  }

  /**
   * Several mints in one mintBatch (a k twice is a replay): every nullifier is
   * checked before any proof, then each item is minted in order as Mint is,
   * against the totals the earlier items left; one refusal refuses them all.
   */
  class MintBatch extends Step {
    constructor(readonly ks: number[]) {
      super();
    }
    toString() {
      return `MintBatch(${this.ks.join(", ")})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const items = this.ks.map((k) => mints[k]!);
        let expected: string | null = null;
        if (this.ks.some((k, j) => m.spent.has(`mint${k}`) || this.ks.indexOf(k) !== j)) {
          expected = "NullifierAlreadySpent";
        }
        let [backing, debt] = [c.backing, c.debt];
        for (const p of items) {
          if (expected) break;
          const v = value(c, p.floorZat);
          if (v * BPS < p.mint * c.params.minCollateralRatioBps) expected = "InsufficientCollateralValue";
          else if (
            value(c, backing + p.floorZat) * BPS < (debt + p.mint) * c.params.systemFloorRatioBps &&
            v * BPS < p.mint * c.params.systemFloorRatioBps
          ) {
            expected = "SystemRatioTooLow";
          }
          [backing, debt] = [backing + p.floorZat, debt + p.mint];
        }
        const outcome = await send(() =>
          as(relayer).minter.write.mintBatch([items.map((p) => p.proof), items.map((p) => p.request)]),
        );
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        const changes = new Map<bigint, Expected>();
        for (const [j, p] of items.entries()) {
          m.spent.add(`mint${this.ks[j]}`);
          m.unminted -= p.floorZat;
          m.supply += p.mint;
          if (p.request.changeLeaf !== 0n) m.queued.push(p.request.changeLeaf);
          m.positions.push({ owner: p.owner.address, status: STATUS.Open });
          changes.set(BigInt(c.positions.length + 1 + j), {
            status: STATUS.Open,
            owner: p.owner.address,
            collateral: p.floorZat,
            debt: p.mint,
          });
        }
        return changes;
      });
    }
  }

  class TopUp extends Step {
    constructor(readonly k: number) {
      super();
    }
    toString() {
      return `TopUp(${this.k})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const p = topUps[this.k]!;
        const id = BigInt(this.k + 1);
        const position = c.positions[this.k];
        let expected: string | null = null;
        if (position?.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (m.spent.has(`topUp${this.k}`)) expected = "NullifierAlreadySpent";
        const outcome = await send(() => as(bob).minter.write.topUp([p.proof, p.spend, id]));
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        m.spent.add(`topUp${this.k}`);
        m.unminted -= p.floorZat;
        if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
        return new Map([
          [id, { status: STATUS.Open, collateral: position!.collateralZat + p.floorZat, debt: position!.debt }],
        ]);
      });
    }
  }

  class Repay extends Step {
    constructor(
      readonly index: number,
      readonly whole: boolean,
      readonly fractionBps: bigint,
      readonly bySig: boolean,
    ) {
      super();
    }
    toString() {
      return `Repay(${this.index}, ${this.whole ? "whole" : `${this.fractionBps}bps`}${this.bySig ? ", sig" : ""})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const id = pick(c, this.index);
        const p = c.positions[Number(id) - 1]!;
        const amount = this.whole ? p.debt : max(1n, (p.debt * this.fractionBps) / BPS);
        let expected: string | null = null;
        if (p.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (amount === 0n || amount > p.debt) expected = "InvalidRepayAmount";
        else if (amount === p.debt) expected = exitError(c, p.collateralZat, p.debt);
        const payer = this.bySig ? bob : alice;
        if (expected === null) await gather(payer.address, amount);
        const outcome = await send(async () => {
          if (!this.bySig) return as(alice).minter.write.repay([id, amount]);
          const typed = repayTypedData(minterDomain(), {
            positionId: id,
            amount,
            payer: bob.address,
            nonce: await s.read.minter.read.nonces([bob.address]),
            deadline: await deadline(),
          });
          const signature = await bob.signTypedData(typed);
          return as(relayer).minter.write.repayWithSig([id, amount, bob.address, typed.message.deadline, signature]);
        });
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        m.supply -= amount;
        return new Map([[id, { status: STATUS.Open, collateral: p.collateralZat, debt: p.debt - amount }]]);
      });
    }
  }

  type Caller = "owner" | "ownerSig" | "stranger" | "strangerSig";

  class Withdraw extends Step {
    constructor(
      readonly index: number,
      readonly fractionBps: bigint,
      readonly dest: Dest,
      readonly caller: Caller,
    ) {
      super();
    }
    toString() {
      return `Withdraw(${this.index}, ${this.fractionBps}bps, ${this.dest}, ${this.caller})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const id = pick(c, this.index);
        const p = c.positions[Number(id) - 1]!;
        const owner = keyOf(p.owner);
        const amount = max(1n, (p.collateralZat * this.fractionBps) / BPS);
        const left = p.collateralZat - amount;
        let expected: string | null = null;
        if (this.caller === "strangerSig") expected = "InvalidAuthorization";
        else if (p.status !== STATUS.Open) expected = "PositionNotOpen";
        else if (this.caller === "stranger") expected = "NotPositionOwner";
        else if (amount > p.collateralZat) expected = "InvalidWithdrawAmount";
        else if (p.debt !== 0n && value(c, left) * BPS < p.debt * c.params.minCollateralRatioBps) {
          expected = "PositionUndercollateralized";
        } else if (p.debt !== 0n) expected = exitError(c, amount, 0n);
        const to = destination(this.dest, p.owner);
        const outcome = await send(async () => {
          if (this.caller === "owner") return as(owner).minter.write.withdrawCollateral([id, amount, to]);
          if (this.caller === "stranger") return as(carol).minter.write.withdrawCollateral([id, amount, to]);
          const signer = this.caller === "ownerSig" ? owner : carol;
          const typed = withdrawCollateralTypedData(minterDomain(), {
            positionId: id,
            amountZat: amount,
            ...to,
            nonce: await s.read.minter.read.nonces([p.owner]),
            deadline: await deadline(),
          });
          const signature = await signer.signTypedData(typed);
          return as(relayer).minter.write.withdrawCollateralWithSig([
            id,
            amount,
            to,
            typed.message.deadline,
            signature,
          ]);
        });
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        released(m, p.owner, amount, to);
        return new Map([[id, { status: STATUS.Open, collateral: left, debt: p.debt }]]);
      });
    }
  }

  class Close extends Step {
    constructor(
      readonly index: number,
      readonly dest: Dest,
      readonly caller: Caller,
    ) {
      super();
    }
    toString() {
      return `Close(${this.index}, ${this.dest}, ${this.caller})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const id = pick(c, this.index);
        const p = c.positions[Number(id) - 1]!;
        const owner = keyOf(p.owner);
        let expected: string | null = null;
        if (this.caller === "strangerSig") expected = "InvalidAuthorization";
        else if (p.status !== STATUS.Open && p.status !== STATUS.Liquidated) expected = "PositionNotOpen";
        else if (this.caller === "stranger") expected = "NotPositionOwner";
        else if (p.debt !== 0n) expected = exitError(c, p.collateralZat, p.debt);
        if (expected === null) await gather(p.owner, p.debt);
        const to = destination(this.dest, p.owner);
        const outcome = await send(async () => {
          if (this.caller === "owner") return as(owner).minter.write.close([id, to]);
          if (this.caller === "stranger") return as(carol).minter.write.close([id, to]);
          const signer = this.caller === "ownerSig" ? owner : carol;
          const typed = closeTypedData(minterDomain(), {
            positionId: id,
            ...to,
            nonce: await s.read.minter.read.nonces([p.owner]),
            deadline: await deadline(),
          });
          const signature = await signer.signTypedData(typed);
          return as(relayer).minter.write.closeWithSig([id, to, typed.message.deadline, signature]);
        });
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        m.positions[Number(id) - 1]!.status = STATUS.Closed;
        m.supply -= p.debt;
        released(m, p.owner, p.collateralZat, to);
        return new Map([[id, { status: STATUS.Closed, collateral: 0n, debt: 0n }]]);
      });
    }
  }

  class Liquidate extends Step {
    constructor(
      readonly index: number,
      readonly dest: Dest,
    ) {
      super();
    }
    toString() {
      return `Liquidate(${this.index}, ${this.dest})`;
    }
    async run(m: Model, w: World) {
      await w.step(
        m,
        this.toString(),
        async (c) => {
          const id = pick(c, this.index, true);
          const p = c.positions[Number(id) - 1]!;
          let expected: string | null = null;
          if (p.status !== STATUS.Open) expected = "PositionNotOpen";
          else if (p.debt === 0n || value(c, p.collateralZat) * BPS >= p.debt * c.params.liquidationRatioBps) {
            expected = "PositionNotLiquidatable";
          }
          if (expected === null) await gather(carol.address, p.debt);
          const to = destination(this.dest, carol.address);
          const outcome = await send(() => as(carol).minter.write.liquidate([id, to]));
          if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
          const seized = min(
            p.collateralZat,
            (p.debt * (BPS + c.params.liquidationBonusBps)) / BPS / (c.price * ZAT_PRICE_TO_USD18),
          );
          const [event] = parseEventLogs({
            abi: stableMinterAbi,
            logs: outcome.receipt.logs,
            eventName: "PositionLiquidated",
          });
          expect(event!.args).toMatchObject({ debt: p.debt, seizedZat: seized, surplusZat: p.collateralZat - seized });
          m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
          released(m, carol.address, seized, to);
          m.supply -= p.debt;
          return new Map([[id, { status: STATUS.Liquidated, collateral: p.collateralZat - seized, debt: 0n }]]);
        },
        true,
      );
    }
  }

  class Redistribute extends Step {
    constructor(
      readonly index: number,
      readonly dest: Dest,
    ) {
      super();
    }
    toString() {
      return `Redistribute(${this.index}, ${this.dest})`;
    }
    async run(m: Model, w: World) {
      await w.step(
        m,
        this.toString(),
        async (c) => {
          const id = pick(c, this.index, true);
          const p = c.positions[Number(id) - 1]!;
          let expected: string | null = null;
          if (p.status !== STATUS.Open) expected = "PositionNotOpen";
          else if (p.debt === 0n || value(c, p.collateralZat) >= p.debt) expected = "PositionNotUnderwater";
          else if (!spreadable(p.debt, c.debt)) {
            expected = "NoDebtToRedistributeTo";
            if (p.debt < c.debt) stats.unspreadableRefusals++;
          }
          const to = destination(this.dest, bob.address);
          const outcome = await send(() => as(bob).minter.write.redistribute([id, to]));
          if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
          const reward = (p.collateralZat * c.params.redistributionRewardBps) / BPS;
          const [event] = parseEventLogs({
            abi: stableMinterAbi,
            logs: outcome.receipt.logs,
            eventName: "PositionRedistributed",
          });
          expect(event!.args).toMatchObject({
            positionId: id,
            caller: bob.address,
            debt: p.debt,
            collateralZat: p.collateralZat,
            rewardZat: reward,
          });
          const xs = exactOf(c);
          spread(xs, id, c.debt, reward);
          redistributedInModel(m, c.debt, p.debt, BigInt(c.positions.length));
          m.positions[Number(id) - 1]!.status = STATUS.Liquidated;
          released(m, bob.address, reward, to);
          return expectedOf(xs, "redistribution", c.debt);
        },
        true,
      );
    }
  }

  type Size = "tiny" | "small" | "large" | "whole" | "over";

  class Redeem extends Step {
    constructor(
      readonly size: Size,
      readonly raw: bigint,
      readonly redeemer: 0 | 1 | 2,
      readonly dest: Envelope,
      readonly splitBps: bigint,
    ) {
      super();
    }
    toString() {
      return `Redeem(${this.size}, ${this.raw}, ${this.redeemer}, ${this.dest}, split ${this.splitBps})`;
    }
    amount(c: Chain) {
      switch (this.size) {
        case "tiny":
          return this.raw;
        case "small":
        case "large":
          return max(1n, (c.debt * this.raw) / BPS);
        case "whole":
          return c.debt;
        case "over":
          return c.debt + 1n;
      }
    }
    /** The envelope the redeemer sends: fresh, or one already on the chain (its own, or another owner's). */
    envelope(m: Model, redeemer: Address): Hex {
      if (this.dest === "replay" || this.dest === "foreign") {
        const mine = this.dest === "replay";
        const on = [...m.payouts.values()].filter((p) => (p.owner === getAddress(redeemer)) === mine);
        if (on.length > 0) return on[Number((this.raw + this.splitBps) % BigInt(on.length))]!.envelope;
        count(`Redeem: no envelope to ${this.dest}, a fresh one`);
      }
      return seal(this.dest === "unpayable" ? UNPAYABLE : SAPLING, redeemer);
    }
    async run(m: Model, w: World) {
      const redeemer = [alice, bob, carol][this.redeemer]!;
      if (this.dest !== "frontrun") return this.redeem(m, w, redeemer, this.envelope(m, redeemer.address), "");
      // The victim's request seen in the mempool: its envelope copied onto the attacker's
      // redemption, mined first; then the victim's own lands.
      const victim = [alice, bob, carol][(this.redeemer + 1) % 3]!;
      const envelope = seal(SAPLING, victim.address);
      const before = m.payoutCount;
      await this.redeem(m, w, redeemer, envelope, ", the copy");
      const copy = m.payoutCount > before ? m.payoutCount : undefined;
      await this.redeem(m, w, victim, envelope, ", its owner's");
      const own = m.payoutCount > (copy ?? before) ? m.payoutCount : undefined;
      // Custody settles both: the copy fails for the one who sent it, the owner's own is paid.
      for (const id of [copy, own])
        if (id !== undefined) await settle(m, w, id, false, `${this.toString()}, settle ${id}`);
      if (copy !== undefined) expect(m.payouts.get(copy)!.status, `${this.toString()}: the copy`).toBe(PAYOUT.Failed);
      if (own !== undefined) {
        expect(m.payouts.get(own)!.status, `${this.toString()}: the owner's own`).toBe(PAYOUT.Completed);
        if (copy !== undefined) count("Redeem: front-run copy failed, the owner's own paid");
      }
    }
    async redeem(m: Model, w: World, redeemer: LocalAccount, address: Hex, part: string) {
      const label = `${this.toString()}${part}`;
      await w.step(
        m,
        label,
        async (c) => {
          const amount = this.amount(c);
          const fee = c.params.redemptionFeeBps;
          // The quote, from the contract's formula: par less a fee rounded up while the
          // positions are worth their debt, pro rata without a fee when they are not.
          const quote = (a: bigint, backing: bigint, debt: bigint) => {
            const solvent = value(c, backing) >= debt;
            if (!solvent) return { zatDue: (a * backing) / debt, feeZat: 0n, solvent };
            const gross = a / (c.price * ZAT_PRICE_TO_USD18);
            const feeZat = ceilDiv(gross * fee, BPS);
            return { zatDue: gross - feeZat, feeZat, solvent };
          };
          // What a position's debt may read as, from the model (exact but for its tolerance).
          const n = BigInt(c.positions.length);
          const debtRange = (x: Exact) => [
            max(0n, x.d / SCALE - x.tolD - n),
            min(c.debt, ceilDiv(x.d, SCALE) + x.tolD + n),
          ];
          const spreadability = (x: Exact): "yes" | "no" | "maybe" => {
            const [lo, hi] = debtRange(x);
            if (spreadable(hi, c.debt)) return "yes";
            if (!spreadable(lo, c.debt)) return "no";
            return "maybe";
          };
          // A redemption out of one stuck position alone: refused past its debt, too small at 0 zatoshi.
          const stuckOutcomes = (x: Exact, a: bigint): Set<string | null> => {
            const [lo, hi] = debtRange(x);
            const out = new Set<string | null>();
            if (a > lo) out.add("RedemptionExceedsDebt");
            if (a <= hi) {
              const cLo = max(0n, x.c / SCALE - TOL_C);
              const cHi = x.c / SCALE + TOL_C;
              if (hi > 0n && (cHi * a) / max(lo, 1n) >= 1n) out.add(null);
              if (hi > 0n && (cLo * a) / hi === 0n) out.add("RedemptionTooSmall");
            }
            return out;
          };
          /**
           * The settle walk of a solvent redemption on the model, riskiest first: stops at the first
           * safe position, redistributes an unsafe spreadable one, sticks at an unsafe unspreadable one.
           * Ambiguous when a decision is within the chain's rounding of the model.
           */
          const settleWalk = (): { stuck?: Exact; ambiguous: boolean; heavy?: Exact } => {
            const ys = exactOf(c);
            for (let i = 0; i <= 24; i++) {
              const live = ys.filter((x) => x.d > 0n);
              const heavy = live.find((x) => spreadability(x) !== "yes");
              if (live.length === 0) return { ambiguous: false };
              const r = live.reduce((a, b) => (b.c * a.d < a.c * b.d ? b : a));
              const under = underwater(r, c.price);
              const edge = borderline(r, c.price);
              if (!under && !edge) return { ambiguous: false };
              const sp = spreadability(r);
              if (edge || sp === "maybe") return { ambiguous: true, heavy };
              if (sp === "no") return { stuck: r, ambiguous: false };
              spread(ys, r.id, c.debt, 0n);
            }
            return { ambiguous: true, heavy: ys.find((x) => x.d > 0n && spreadability(x) !== "yes") };
          };
          const debtors = BigInt(c.positions.filter((p) => p.debt > 0n).length);
          let allowed = new Set<string | null>([null]);
          let walk: ReturnType<typeof settleWalk> = { ambiguous: false };
          let q = { zatDue: 0n, feeZat: 0n, solvent: true };
          if (amount === 0n) allowed = new Set(["InvalidAmount"]);
          else if (amount > c.debt) allowed = new Set(["RedemptionExceedsDebt"]);
          else if (amount !== c.debt && c.debt - amount < debtors) {
            // Every position with debt owes at least a wei: no redemption may leave fewer wei than debtors.
            allowed = new Set(["RedemptionExceedsDebt"]);
            stats.dustGuards++;
            count("Redeem: dust guard (fewer wei left than debtors)");
          } else {
            q = quote(amount, c.backing, c.debt);
            if (q.zatDue === 0n) allowed = new Set(["RedemptionTooSmall"]);
            else if (q.solvent) {
              walk = settleWalk();
              if (!walk.ambiguous && walk.stuck) allowed = stuckOutcomes(walk.stuck, amount);
              else if (walk.ambiguous) {
                allowed = new Set<string | null>([null]);
                if (walk.heavy) for (const o of stuckOutcomes(walk.heavy, amount)) allowed.add(o);
              }
            }
          }
          const sure = allowed.size === 1;
          const expected = sure ? [...allowed][0]! : null;
          if (allowed.has(null)) await gather(redeemer.address, amount);
          const redeem = (a: bigint) => send(() => as(redeemer).redemptions.write.redeem([a, address]));

          // Splitting never pays more: two redemptions of the parts, then back to before them.
          let splitPaid: bigint | undefined;
          if (sure && expected === null && this.splitBps > 0n && this.size !== "whole") {
            const first = max(1n, (amount * this.splitBps) / BPS);
            const snapshot = await s.snapshot();
            splitPaid = 0n;
            for (const part of [first, amount - first]) {
              if (part === 0n) continue;
              const o = await redeem(part);
              if (o.ok) {
                const [e] = parseEventLogs({
                  abi: redemptionsAbi,
                  logs: o.receipt.logs,
                  eventName: "RedemptionRequested",
                });
                splitPaid += e!.args.zatDue!;
              } else {
                expect(o.error, `${label}: a part of the split`).toBe("RedemptionTooSmall");
              }
            }
            await s.revert(snapshot);
          }

          const outcome = await redeem(amount);
          if (outcome.ok === false && outcome.error === "UnderwaterPositionsPending") {
            // Allowed only when a bounded walk could not settle them all.
            const k = exactOf(c).length;
            expect(k * k > 24, `${label}: UnderwaterPositionsPending with ${k} positions`).toBe(true);
            count("Redeem: UnderwaterPositionsPending");
            return new Map();
          }
          if (!sure) {
            stats.ambiguousRedemptions++;
            const got = outcome.ok ? null : outcome.error;
            count(`Redeem: ambiguous walk: ${got ?? "ok"}`);
            expect(allowed.has(got), `${label}: outcome ${got} not in ${[...allowed].join(", ")}`).toBe(true);
            if (!outcome.ok) return new Map();
          } else {
            if (!outcome.ok && walk.stuck && outcome.error !== "RedemptionTooSmall") stats.stuckRefused++;
            if (!expectOutcome(label, outcome, expected)) return new Map();
          }
          if (!outcome.ok) return new Map();
          const [event] = parseEventLogs({
            abi: redemptionsAbi,
            logs: outcome.receipt.logs,
            eventName: "RedemptionRequested",
          });
          const paid = event!.args.zatDue!;
          expect(event!.args.price, `${label}: price`).toBe(c.price);

          // The model of the map: positions under 100% redistributed first (par only), lowest ratio first.
          const xs = exactOf(c);
          const redistributed = parseEventLogs({
            abi: stableMinterAbi,
            logs: outcome.receipt.logs,
            eventName: "PositionRedistributed",
          });
          if (!q.solvent) expect(redistributed, `${label}: no redistribution when pro rata`).toEqual([]);
          for (const r of redistributed) {
            stats.inlineRedistributions++;
            const x = xs.find((y) => y.id === r.args.positionId);
            const where = `${label}: inline redistribution of position ${r.args.positionId}`;
            expect(x && x.d > 0n, `${where} (has debt)`).toBe(true);
            expect(underwater(x!, c.price) || borderline(x!, c.price), `${where} (under 100%)`).toBe(true);
            expect(abs(r.args.debt! * SCALE - x!.d) <= x!.tolD * SCALE, `${where}: debt`).toBe(true);
            expect(abs(r.args.collateralZat! * SCALE - x!.c) <= TOL_C * SCALE, `${where}: collateral`).toBe(true);
            expect(r.args.rewardZat, `${where}: no reward`).toBe(0n);
            expect(spreadable(r.args.debt!, c.debt), `${where}: spreadable`).toBe(true);
            spread(xs, x!.id, c.debt, 0n);
            redistributedInModel(m, c.debt, r.args.debt!, n);
            m.positions[Number(x!.id) - 1]!.status = STATUS.Liquidated;
          }
          const withDebt = xs.filter((x) => x.d > 0n);
          const debtAfter = c.debt - amount;

          // Which path the chain took: par over everyone, or pro rata out of one stuck position. The
          // stuck position's read before is its read after plus what it paid (written at the current map).
          let stuck: Exact | undefined;
          const stuckFits = (x: Exact) => {
            const p = after0.positions[Number(x.id) - 1]!;
            const cRead = p.collateralZat + paid;
            const dRead = p.debt + amount;
            return (
              event!.args.feeZat === 0n &&
              paid === (cRead * amount) / dRead &&
              abs(cRead * SCALE - x.c) <= TOL_C * SCALE &&
              abs(dRead * SCALE - x.d) <= (x.tolD + n) * SCALE
            );
          };
          const after0 = await read();
          const parFits = paid === q.zatDue && event!.args.feeZat === q.feeZat;
          if (q.solvent && !walk.ambiguous && walk.stuck) {
            stuck = xs.find((x) => x.id === walk.stuck!.id);
            expect(stuck && stuck.d > 0n, `${label}: stuck position ${walk.stuck.id} still has debt`).toBe(true);
          } else if (q.solvent && walk.ambiguous) {
            const heavy = withDebt.find((x) => spreadability(x) !== "yes");
            const others = withDebt.filter((x) => x !== heavy);
            const untouched = others.every(
              (x) => abs(after0.positions[Number(x.id) - 1]!.collateralZat * SCALE - x.c) <= TOL_C * SCALE,
            );
            if (heavy && stuckFits(heavy) && (!parFits || untouched)) stuck = heavy;
          }
          if (stuck) {
            // Under 100% and holding all but a millionth of the debt: it alone pays, pro rata, no fee.
            const where = `${label}: pro rata out of stuck position ${stuck.id}`;
            expect(stuckFits(stuck), `${where} (paid ${paid}, fee ${event!.args.feeZat})`).toBe(true);
            expect(spreadability(stuck) !== "yes", `${where}: unspreadable`).toBe(true);
            expect(underwater(stuck, c.price) || borderline(stuck, c.price), `${where}: under 100%`).toBe(true);
            stats.stuckRedemptions++;
            count(`Redeem: stuck, pro rata from one position${debtAfter === 0n ? ", whole supply (new epoch)" : ""}`);
            stuck.c -= paid * SCALE;
            stuck.d -= amount * SCALE;
            if (stuck.d < 0n) stuck.d = 0n;
            if (debtAfter === 0n) endEpoch(m);
          } else {
            expect(
              { zatDue: paid, feeZat: event!.args.feeZat },
              `${label}: ${q.solvent ? "par" : "pro rata"} quote`,
            ).toEqual({ zatDue: q.zatDue, feeZat: q.feeZat });
            count(`Redeem: ${q.solvent ? "par" : "pro rata"}${amount === c.debt ? ", whole supply (new epoch)" : ""}`);
            if (q.solvent && withDebt.length > 1) {
              for (const x of withDebt) {
                expect(
                  !underwater(x, c.price) || borderline(x, c.price),
                  `${label}: position ${x.id} left under 100% to pay at par`,
                ).toBe(true);
              }
            }
            for (const x of withDebt) {
              if (q.solvent) x.c -= (q.zatDue * x.d) / c.debt;
              else x.c = (x.c * (c.backing - q.zatDue)) / c.backing;
              x.d = (x.d * debtAfter) / c.debt;
            }
            const a = q.solvent ? m.mapA : (m.mapA * (c.backing - q.zatDue)) / c.backing;
            const f = ceilDiv(m.mapF * debtAfter, c.debt);
            m.debtSlack = ceilDiv(m.debtSlack * debtAfter, c.debt);
            if (debtAfter === 0n) endEpoch(m);
            else setMap(m, a, f);
          }
          if (splitPaid !== undefined) {
            stats.splitChecks++;
            stats.maxSplitShortfall = max(stats.maxSplitShortfall, paid - splitPaid);
            expect(
              splitPaid <= paid,
              `${label}: split paid ${splitPaid} > whole ${paid} (${stuck ? "stuck" : q.solvent ? "par" : "pro rata"})`,
            ).toBe(true);
          }
          payout(m, redeemer.address, paid, address);
          m.supply -= amount;
          return expectedOf(
            xs,
            stuck ? "stuck redemption" : q.solvent ? "par redemption" : "pro rata redemption",
            debtAfter,
          );
        },
        true,
      );
    }
  }

  /**
   * Custody settles payout `id` (one not pending is refused): it fails what it could not open to a
   * payable address (its verdict, reached from the chain when the payout was made), and pays the
   * rest unless `refuse` (its wallet refusing an address it could open).
   */
  async function settle(m: Model, w: World, id: bigint, refuse: boolean, label: string) {
    await w.step(m, label, async () => {
      const p = m.payouts.get(id);
      const verdict = m.custody.get(id);
      const unreadable = verdict !== undefined && !("address" in verdict);
      const fail = refuse || unreadable;
      const expected = p?.status === PAYOUT.Requested ? null : "RedemptionNotPending";
      const outcome = await send(() =>
        fail
          ? as(attestor).redemptions.write.failRedemption([id, unreadable ? "unreadable_address" : "address refused"])
          : as(attestor).redemptions.write.completeRedemption([id, `0x${"ab".repeat(32)}`]),
      );
      if (!expectOutcome(`${fail ? "Fail" : "Complete"}(${id})`, outcome, expected)) return new Map();
      m.touched.add(id);
      if (fail) {
        // Held for its owner: nothing moves, no position changes.
        p!.status = PAYOUT.Failed;
      } else {
        p!.status = PAYOUT.Completed;
        m.pending -= p!.zatDue;
        m.held -= p!.zatDue;
      }
      return new Map();
    });
  }

  class Settle extends Step {
    constructor(
      readonly index: number,
      readonly fail: boolean,
      readonly stale: boolean,
    ) {
      super();
    }
    toString() {
      return `Settle(${this.index}, ${this.fail ? "fail" : "pay"}${this.stale ? ", stale" : ""})`;
    }
    async run(m: Model, w: World) {
      const ids = [...m.payouts.entries()]
        .filter(([, p]) => (p.status === PAYOUT.Requested) !== this.stale)
        .map(([id]) => id);
      const id = ids.length ? ids[this.index % ids.length]! : m.payoutCount + 1n;
      await settle(m, w, id, this.fail, this.toString());
    }
  }

  class Redirect extends Step {
    constructor(
      readonly index: number,
      readonly dest: RedirectDest,
      readonly by: Caller,
      readonly stale: boolean,
    ) {
      super();
    }
    toString() {
      return `Redirect(${this.index}, ${this.dest}, ${this.by}${this.stale ? ", stale" : ""})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async () => {
        const ids = [...m.payouts.entries()]
          .filter(([, p]) => (p.status === PAYOUT.Failed) !== this.stale)
          .map(([id]) => id);
        if (ids.length === 0) {
          count("Redirect: nothing failed");
          return new Map();
        }
        const id = ids[this.index % ids.length]!;
        const p = m.payouts.get(id)!;
        const owner = keyOf(p.owner);
        const stranger = p.owner === carol.address ? alice : carol;
        const to =
          this.dest === "same" ? { sealedAddress: p.envelope, noteCommitment: 0n } : destination(this.dest, p.owner);
        let expected: string | null = null;
        if (this.by === "strangerSig") expected = "InvalidRedirectSignature";
        else if (p.status !== PAYOUT.Failed) expected = "PayoutNotFailed";
        else if (this.by === "stranger") expected = "NotPayoutOwner";
        const outcome = await send(async () => {
          if (this.by === "owner")
            return as(owner).redemptions.write.redirect([id, to.sealedAddress, to.noteCommitment]);
          if (this.by === "stranger") {
            return as(stranger).redemptions.write.redirect([id, to.sealedAddress, to.noteCommitment]);
          }
          const signer = this.by === "ownerSig" ? owner : stranger;
          const message = {
            id,
            sealedAddress: to.sealedAddress,
            noteCommitment: to.noteCommitment,
            nonce: await s.read.redemptions.read.nonces([p.owner]),
            deadline: await deadline(),
          };
          const signature = await signer.signTypedData(
            redirectTypedData({ chainId: s.chainId, verifyingContract: s.read.redemptions.address }, message),
          );
          return as(relayer).redemptions.write.redirectWithSig([
            id,
            to.sealedAddress,
            to.noteCommitment,
            message.deadline,
            signature,
          ]);
        });
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        if (this.dest === "same") count("Redirect: to the failed payout's own envelope again");
        // The held ZEC moves whole: to a new payout of the same owner, or into a note.
        p.status = PAYOUT.Redirected;
        m.touched.add(id);
        m.pending -= p.zatDue;
        released(m, p.owner, p.zatDue, to);
        const [event] = parseEventLogs({
          abi: redemptionsAbi,
          logs: outcome.receipt.logs,
          eventName: "PayoutRedirected",
        });
        expect(event!.args.newId, `${this.toString()}: new payout`).toBe(this.dest === "note" ? 0n : m.payoutCount);
        return new Map();
      });
    }
  }

  class WithdrawNote extends Step {
    constructor(
      readonly k: number,
      readonly wrongOwner: boolean,
    ) {
      super();
    }
    toString() {
      return `WithdrawNote(${this.k}${this.wrongOwner ? ", wrong owner" : ""})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async () => {
        const p = withdrawals[this.k]!;
        const owner = this.wrongOwner ? carol.address : p.owner.address;
        let expected: string | null = null;
        if (m.spent.has(`withdraw${this.k}`)) expected = "NullifierAlreadySpent";
        else if (this.wrongOwner) expected = "InvalidProof";
        const outcome = await send(() =>
          as(relayer).minter.write.withdrawNote([p.proof, p.spend, p.sealedAddress, owner]),
        );
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        m.spent.add(`withdraw${this.k}`);
        m.unminted -= p.floorZat;
        if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
        released(m, p.owner.address, p.floorZat, { sealedAddress: p.sealedAddress, noteCommitment: 0n });
        return new Map();
      });
    }
  }

  /**
   * Top-ups and note withdrawals sent together (spendBatch): refused at the first item a single
   * call would refuse (a closed position, a nullifier spent before or earlier in the batch);
   * else each item moves the books as its single call would, change queued in item order.
   */
  class SpendBatch extends Step {
    constructor(readonly picks: { topUp: boolean; k: number }[]) {
      super();
    }
    toString() {
      return `SpendBatch(${this.picks.map((p) => `${p.topUp ? "topUp" : "withdraw"}${p.k}`).join(", ")})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const items = this.picks.map(({ topUp, k }) => {
          const p = topUp ? topUps[k]! : withdrawals[k]!;
          const key = `${topUp ? "topUp" : "withdraw"}${k}`;
          const positionId = topUp ? BigInt(k + 1) : 0n;
          return { p, key, positionId, owner: topUp ? zeroAddress : p.owner.address };
        });
        let expected: string | null = null;
        const seen = new Set<string>();
        for (const { key, positionId } of items) {
          if (positionId !== 0n && c.positions[Number(positionId) - 1]?.status !== STATUS.Open) {
            expected = "PositionNotOpen";
          } else if (m.spent.has(key) || seen.has(key)) expected = "NullifierAlreadySpent";
          if (expected) break;
          seen.add(key);
        }
        const outcome = await send(() =>
          as(relayer).minter.write.spendBatch([
            items.map(({ p }) => p.proof),
            items.map(({ p, positionId, owner }) => ({
              spend: p.spend,
              positionId,
              sealedAddress: positionId === 0n ? p.sealedAddress : "0x",
              owner,
            })),
          ]),
        );
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        const changes = new Map<bigint, Expected>();
        for (const { p, key, positionId } of items) {
          m.spent.add(key);
          m.unminted -= p.floorZat;
          if (p.spend.changeLeaf !== 0n) m.queued.push(p.spend.changeLeaf);
          if (positionId === 0n) {
            released(m, p.owner.address, p.floorZat, { sealedAddress: p.sealedAddress, noteCommitment: 0n });
            continue;
          }
          const position = c.positions[Number(positionId) - 1]!;
          changes.set(positionId, {
            status: STATUS.Open,
            collateral: position.collateralZat + p.floorZat,
            debt: position.debt,
          });
        }
        return changes;
      });
    }
  }

  type Tamper = "none" | "stale" | "leaf" | "gap" | "empty";
  /**
   * Anyone inserts the first `shareBps` of the queued change leaves (at least
   * one) with one walk: the root becomes the reference LeanIMT's over every
   * leaf the registry's events name, the rest stays queued, and no total
   * moves. A stretch read before an earlier insertion ("stale": it starts two
   * below the head) goes through, skipping what went in; leaves that are not
   * the queued ones, a stretch starting past the head, or none at all are
   * refused, and nothing moves.
   */
  class InsertPending extends Step {
    constructor(
      readonly shareBps: bigint,
      readonly tamper: Tamper,
    ) {
      super();
    }
    toString() {
      return `InsertPending(${this.shareBps}${this.tamper === "none" ? "" : `, ${this.tamper}`})`;
    }
    async run(m: Model, w: World) {
      await w.step(m, this.toString(), async (c) => {
        const head = m.head;
        const pending = m.queued.length - head;
        const n = Math.max(1, Math.ceil((pending * Number(this.shareBps)) / 10_000));
        const end = Math.min(head + n, m.queued.length);
        let from = head;
        if (this.tamper === "stale") from = Math.max(0, head - 2);
        if (this.tamper === "gap") from = head + 1;
        let list = m.queued.slice(from, Math.max(from, end));
        if (this.tamper === "empty") list = [];
        if (this.tamper === "leaf" && list.length > 0) list[list.length - 1] = list.at(-1)! + 1n;
        let expected: string | null = null;
        if (from > head || from + list.length <= head) expected = "InvalidPendingRange";
        else if (this.tamper === "leaf") expected = "PendingLeavesMismatch";
        const outcome = await send(() => as(carol).registry.write.insertPendingLeaves([BigInt(from), list]));
        if (!expectOutcome(this.toString(), outcome, expected)) return new Map();
        const inserted = m.queued.slice(head, from + list.length);
        m.head = from + list.length;
        const [event] = parseEventLogs({
          abi: collateralRegistryAbi,
          logs: outcome.receipt.logs,
          eventName: "PendingLeavesInserted",
        });
        // Change and released notes are fresh notes: none is in the tree already, so none is dropped.
        expect(event?.args, `${this.toString()}: event`).toMatchObject({
          firstIndex: c.treeSize,
          leaves: inserted,
          consumed: BigInt(inserted.length),
        });
        const events = await s.publicClient.getContractEvents({
          address: s.read.registry.address,
          abi: collateralRegistryAbi,
          fromBlock: 0n,
        });
        const tree = new DepositTree(registryLeaves(events));
        expect(await s.read.registry.read.root(), `${this.toString()}: root`).toBe(tree.root);
        expect(event?.args.root, `${this.toString()}: event root`).toBe(tree.root);
        return new Map();
      });
    }
  }

  class Price extends Step {
    constructor(
      readonly kind: "move" | "crash" | "recover",
      readonly bps: bigint,
    ) {
      super();
    }
    toString() {
      return `Price(${this.kind}, ${this.bps})`;
    }
    async run(m: Model, w: World) {
      await w.step(
        m,
        this.toString(),
        async (c) => {
          let next = this.kind === "recover" ? (BASE_PRICE * this.bps) / BPS : (c.price * (BPS + this.bps)) / BPS;
          next = max(next, MIN_PRICE);
          await s.receipt(await as(oracleUpdater).oracle.write.setPrice([next]));
          count(`Price: ${this.kind}`);
          m.price = next;
          return new Map();
        },
        true,
      );
    }
  }

  /** The price at a position's liquidation ratio or at 100%, or one unit under it: the probes then check both sides. */
  class Edge extends Step {
    constructor(
      readonly index: number,
      readonly ratio: "liquidation" | "100%",
      readonly below: boolean,
    ) {
      super();
    }
    toString() {
      return `Edge(${this.index}, ${this.ratio}, ${this.below ? "below" : "at"})`;
    }
    async run(m: Model, w: World) {
      await w.step(
        m,
        this.toString(),
        async (c) => {
          const id = pick(c, this.index, true);
          const p = c.positions[Number(id) - 1]!;
          if (p.status !== STATUS.Open || p.debt === 0n || p.collateralZat === 0n) {
            count("Edge: no position with debt");
            return new Map();
          }
          const ratioBps = this.ratio === "liquidation" ? c.params.liquidationRatioBps : BPS;
          // The lowest price at which collateral × price × 100 × BPS >= debt × ratio.
          const at = ceilDiv(p.debt * ratioBps, p.collateralZat * ZAT_PRICE_TO_USD18 * BPS);
          const next = this.below ? at - 1n : at;
          if (next <= 0n) return new Map();
          await s.receipt(await as(oracleUpdater).oracle.write.setPrice([next]));
          count(`Edge: ${this.ratio}`);
          m.price = next;
          const error = await simulate(() =>
            s.publicClient.simulateContract({
              address: s.read.minter.address,
              abi: stableMinterAbi,
              functionName: this.ratio === "liquidation" ? "liquidate" : "redistribute",
              args: [id, { sealedAddress: s.sealed(SAPLING, PROBE), noteCommitment: 0n }],
              account: PROBE,
            }),
          );
          const possible = this.ratio === "liquidation" ? "ERC20InsufficientBalance" : null;
          const refused = this.ratio === "liquidation" ? "PositionNotLiquidatable" : "PositionNotUnderwater";
          // Under 100% while the others hold under a millionth of its debt there is no one to redistribute to.
          const alone = this.ratio === "100%" && !spreadable(p.debt, c.debt);
          expect(error, `${this.toString()}: position ${id} at price ${next}`).toBe(
            this.below ? (alone ? "NoDebtToRedistributeTo" : possible) : refused,
          );
          return new Map();
        },
        true,
      );
    }
  }

  const GOVERNED = {
    setLiquidationBonus: { field: "liquidationBonusBps", lo: 0n, hi: 2_000n },
    setRedemptionFee: { field: "redemptionFeeBps", lo: 0n, hi: 1_000n },
    setSystemFloorRatio: { field: "systemFloorRatioBps", lo: 10_000n, hi: 100_000n },
    setRedistributionReward: { field: "redistributionRewardBps", lo: 0n, hi: 500n },
    setLiquidationRatio: { field: "liquidationRatioBps", lo: 10_000n, hi: 100_000n },
  } as const;
  type Setter = keyof typeof GOVERNED;

  class Govern extends Step {
    constructor(
      readonly setter: Setter,
      readonly v: bigint,
    ) {
      super();
    }
    toString() {
      return `Govern(${this.setter}, ${this.v})`;
    }
    async run(m: Model, w: World) {
      await w.step(
        m,
        this.toString(),
        async (c) => {
          const g = GOVERNED[this.setter];
          let expected: string | null = this.v < g.lo || this.v > g.hi ? "InvalidParameter" : null;
          if (this.setter === "setLiquidationRatio" && this.v > c.params.minCollateralRatioBps) {
            expected = "InvalidParameter";
          }
          const wallet = as(carol).wallet;
          const outcome = await send(() => {
            const common = { account: timelock, chain: wallet.chain } as const;
            const minter = s.read.minter.address;
            switch (this.setter) {
              case "setRedemptionFee":
                return wallet.writeContract({
                  ...common,
                  address: s.read.redemptions.address,
                  abi: redemptionsAbi,
                  functionName: "setRedemptionFee",
                  args: [this.v],
                });
              case "setLiquidationBonus":
                return wallet.writeContract({
                  ...common,
                  address: minter,
                  abi: stableMinterAbi,
                  functionName: "setLiquidationBonus",
                  args: [this.v],
                });
              case "setSystemFloorRatio":
                return wallet.writeContract({
                  ...common,
                  address: minter,
                  abi: stableMinterAbi,
                  functionName: "setSystemFloorRatio",
                  args: [this.v],
                });
              case "setRedistributionReward":
                return wallet.writeContract({
                  ...common,
                  address: minter,
                  abi: stableMinterAbi,
                  functionName: "setRedistributionReward",
                  args: [this.v],
                });
              case "setLiquidationRatio":
                return wallet.writeContract({
                  ...common,
                  address: minter,
                  abi: stableMinterAbi,
                  functionName: "setLiquidationRatio",
                  args: [this.v],
                });
            }
          });
          if (expectOutcome(this.toString(), outcome, expected)) m.params = { ...m.params, [g.field]: this.v };
          return new Map();
        },
        true,
      );
    }
  }

  // ------------------------------------------------------------ arbitraries

  const index = fc.nat({ max: 7 });
  /** Keepers go for the riskiest positions. */
  const riskiest = fc.nat({ max: 2 });
  const dest = fc.constantFrom<Dest>("note", "address", "unpayable");
  const caller = fc.constantFrom<Caller>("owner", "owner", "ownerSig", "stranger", "strangerSig");
  const rarely = fc.nat({ max: 4 }).map((n) => n === 0);
  const bps = (lo: number, hi: number) => fc.integer({ min: lo, max: hi }).map(BigInt);
  const steps: fc.Arbitrary<Step>[] = [
    fc.bigInt(1n, 50n * ZEC).map((a) => new Deposit(a)),
    fc
      .tuple(fc.array(fc.bigInt(1n, 50n * ZEC), { minLength: 1, maxLength: 5 }), rarely)
      .map(([amounts, repeat]) => new DepositBatch(amounts, repeat)),
    fc.nat({ max: MINTS.length - 1 }).map((k) => new Mint(k)),
    fc.nat({ max: MINTS.length - 1 }).map((k) => new Mint(k)),
    fc.array(fc.nat({ max: MINTS.length - 1 }), { minLength: 1, maxLength: 4 }).map((ks) => new MintBatch(ks)),
    fc.nat({ max: TOP_UPS.length - 1 }).map((k) => new TopUp(k)),
    fc
      .array(
        fc.oneof(
          fc.nat({ max: TOP_UPS.length - 1 }).map((k) => ({ topUp: true, k })),
          fc.nat({ max: WITHDRAWALS.length - 1 }).map((k) => ({ topUp: false, k })),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((picks) => new SpendBatch(picks)),
    fc.tuple(index, fc.boolean(), bps(1, 9_999), fc.boolean()).map((a) => new Repay(...a)),
    fc.tuple(index, fc.oneof(bps(1, 2_000), bps(1, 10_000)), dest, caller).map((a) => new Withdraw(...a)),
    fc.tuple(index, dest, caller).map((a) => new Close(...a)),
    fc.tuple(riskiest, dest).map((a) => new Liquidate(...a)),
    fc.tuple(riskiest, dest).map((a) => new Redistribute(...a)),
    fc
      .oneof(
        fc.tuple(fc.constant<Size>("tiny"), fc.bigInt(1n, 10n ** 13n)),
        fc.tuple(fc.constant<Size>("small"), bps(1, 500)),
        fc.tuple(fc.constant<Size>("large"), bps(2_000, 9_000)),
        fc.tuple(fc.constant<Size>("whole"), fc.constant(0n)),
        fc.tuple(fc.constant<Size>("over"), fc.constant(0n)),
      )
      .chain(([size, raw]) =>
        fc
          .tuple(
            fc.constantFrom<0 | 1 | 2>(0, 1, 2),
            fc.constantFrom<Envelope>("address", "unpayable", "address", "replay", "foreign", "frontrun"),
            fc.oneof(fc.constant(0n), bps(1_000, 9_000)),
          )
          .map(([who, to, split]) => new Redeem(size, raw, who, to, split)),
      ),
    fc
      .tuple(fc.constantFrom<Size>("small", "large"), bps(1, 9_000), fc.constantFrom<0 | 1 | 2>(0, 1, 2))
      .map(([size, raw, who]) => new Redeem(size, size === "small" ? (raw % 500n) + 1n : raw, who, "address", 0n)),
    // Envelopes replayed by their owner or copied onto another's redemption (after the owner's, or
    // front-running it), on redemptions small enough to go through.
    fc
      .tuple(
        bps(1, 500),
        fc.constantFrom<0 | 1 | 2>(0, 1, 2),
        fc.constantFrom<Envelope>("replay", "foreign", "frontrun"),
      )
      .map(([raw, who, envelope]) => new Redeem("small", raw, who, envelope, 0n)),
    fc.tuple(index, fc.boolean(), rarely).map((a) => new Settle(...a)),
    fc.tuple(index, fc.boolean()).map(([i, fail]) => new Settle(i, fail, false)),
    fc.tuple(index, dest, caller, rarely).map((a) => new Redirect(...a)),
    fc
      .tuple(
        index,
        fc.constantFrom<RedirectDest>("note", "address", "unpayable", "same"),
        fc.constantFrom<Caller>("owner", "ownerSig"),
      )
      .map((a) => new Redirect(...a, false)),
    fc.tuple(fc.nat({ max: WITHDRAWALS.length - 1 }), fc.boolean()).map(([k, wrong]) => new WithdrawNote(k, wrong)),
    // Twice: change is queued by four kinds of step, and inserting it is how it becomes spendable.
    ...[0, 1].map(() =>
      fc
        .tuple(bps(1, 10_000), fc.constantFrom<Tamper>("none", "none", "stale", "stale", "leaf", "gap", "empty"))
        .map(([share, tamper]) => new InsertPending(share, tamper)),
    ),
    fc.oneof(
      bps(-2_500, 2_500).map((b) => new Price("move", b)),
      bps(6_000, 8_000).map((b) => new Price("crash", -b)),
      bps(8_000, 13_000).map((b) => new Price("recover", b)),
    ),
    fc
      .tuple(riskiest, fc.constantFrom<"liquidation" | "100%">("liquidation", "100%"), fc.boolean())
      .map((a) => new Edge(...a)),
    // Falls that put the thinner positions under 100% and leave the thicker ones above.
    bps(-5_000, -3_000).map((b) => new Price("move", b)),
    fc
      .constantFrom<Setter>(
        "setLiquidationBonus",
        "setRedemptionFee",
        "setSystemFloorRatio",
        "setRedistributionReward",
        "setLiquidationRatio",
      )
      .chain((setter) => {
        const g = GOVERNED[setter];
        const hi = setter === "setSystemFloorRatio" ? 25_000n : setter === "setLiquidationRatio" ? 16_000n : g.hi;
        return fc.bigInt(g.lo === 0n ? 0n : g.lo - 1_000n, hi + hi / 4n).map((v) => new Govern(setter, v));
      }),
  ];

  it(
    `keeps the books over ${RUNS} random sequences of up to ${STEPS} steps (seed ${SEED})`,
    async () => {
      const world = new World();
      const initial = await read();
      await fc.assert(
        fc.asyncProperty(
          fc.commands(steps, { maxCommands: STEPS, size: "max", replayPath: REPLAY }),
          async (commands) => {
            await s.revert(base);
            base = await s.snapshot();
            await s.testClient.impersonateAccount({ address: timelock });
            // A fresh price (the snapshot's may be older than maxPriceAge by now).
            await s.receipt(await as(oracleUpdater).oracle.write.setPrice([BASE_PRICE]));
            world.chain = undefined;
            const model: Model = {
              held: initial.held,
              supply: initial.supply,
              unminted: initial.unminted,
              pending: initial.pending,
              price: BASE_PRICE,
              params: { ...initial.params },
              positions: initial.positions.map((p) => ({ owner: p.owner, status: p.status })),
              payouts: new Map(),
              payoutCount: initial.payoutCount,
              spent: new Set(),
              touched: new Set(),
              epoch: initial.epoch,
              mapA: ONE,
              mapF: ONE,
              debtSlack: 0n,
              custody: new Map(),
              opened: new Set(),
              discovered: initial.payoutCount,
              queued: [...initialQueue],
              head: 0,
            };
            await fc.asyncModelRun(() => ({ model, real: world }), commands);
          },
        ),
        { numRuns: RUNS, seed: SEED, path: PATH, verbose: 1 },
      );
    },
    Math.max(120_000, RUNS * STEPS * 3_000),
  );
});
