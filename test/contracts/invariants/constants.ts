// The suite's numbers: the pool of notes every run draws its proofs from, the contracts' units and
// statuses, and the tolerances the model allows the chain's rounding.
import type { Address } from "viem";
import { ZEC, ZSD, accounts } from "../../helpers/fixtures.ts";

export const { alice, bob, carol, relayer, custody, oracleUpdater, pauser, guardian } = accounts;
export const BPS = 10_000n;
/** The least debt of a position that owes anything (PositionManager's MIN_DEBT): a repayment may not leave less. */
export const MIN_DEBT = ZSD;
/** Zatoshi a par redemption's walk leaves aside for rounding before it calls a position above 100% (PositionManager). */
export const SETTLE_MARGIN_ZAT = 4n;
/** zatoshi × price (USD × 1e8) × 100 = USD × 1e18. */
export const ZAT_PRICE_TO_USD18 = 100n;
export const BASE_PRICE = 50_00000000n;
export const MIN_PRICE = 50_000000n;
/** A testnet Sapling address (checksum and all): what custody opens a payable envelope to. */
export const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
/** No Bech32 address: it seals, but custody, opening it, finds nothing to pay and fails the payout. */
export const UNPAYABLE = "ztestsapling1unpayableunpayableunpayableunpayableunpayableunpayableunpayableunpaya";
/** Holds no ZSD: simulated liquidations from it pass the ratio check and stop at the burn. */
export const PROBE: Address = "0x000000000000000000000000000000000000dEaD";
export const STATUS = { None: 0, Open: 1, Liquidated: 2, Closed: 3 } as const;
export const PAYOUT = { None: 0, Requested: 1, Completed: 2, Failed: 3, Redirected: 4 } as const;
/** Exact arithmetic for the model of the redemption map: values × 1e18. */
export const SCALE = 10n ** 18n;
/** A position read differs from the model of one step by at most this many zatoshi. */
export const TOL_C = 3n;
/** Rounding left in backing + free beyond the positions' collateral: at most this many zatoshi per position. */
export const SLACK_PER_POSITION = 2n;
/** The position manager's map: factors ONE-scaled, a new frame (epoch) once one leaves [FRAME_FLOOR, FRAME_CEILING]. */
export const ONE = 10n ** 36n;
export const FRAME_FLOOR = 10n ** 27n;
export const FRAME_CEILING = 10n ** 45n;
/** A position under 100% is spread over the others only if they hold at least a millionth of its debt. */
export const SPREAD_PPM = 1_000_000n;

export const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
export const min = (a: bigint, b: bigint) => (a < b ? a : b);
export const max = (a: bigint, b: bigint) => (a > b ? a : b);
export const abs = (a: bigint) => (a < 0n ? -a : a);

// ------------------------------------------------------------------ pool

/** Opened before the snapshot: every run starts with positions 1..3. */
export const OPENED = [
  { amountZat: 10n * ZEC, floorZat: 10n * ZEC, mint: 200n * ZSD, recipient: alice }, // 250%
  { amountZat: 6n * ZEC, floorZat: 4n * ZEC, mint: 130n * ZSD, recipient: bob }, // 153.8%, 2 ZEC change
  { amountZat: 5n * ZEC, floorZat: 5n * ZEC, mint: 160n * ZSD, recipient: alice }, // 156.3%
];
/** Mint proofs a run may use, each at most once (the nullifier). */
export const MINTS = [
  { amountZat: 8n * ZEC, floorZat: 5n * ZEC, mint: 100n * ZSD, recipient: bob }, // 250%, 3 ZEC change
  { amountZat: 3n * ZEC, floorZat: 3n * ZEC, mint: 95n * ZSD, recipient: alice }, // 157.9%
  { amountZat: 20n * ZEC, floorZat: 20n * ZEC, mint: 400n * ZSD, recipient: bob }, // 250%
  { amountZat: ZEC / 2n, floorZat: ZEC / 2n, mint: 16n * ZSD, recipient: alice }, // 156.3%
  // The least debt a position may owe, at 160%: dust a fall puts under 100%, whose 0.5% pays no keeper.
  { amountZat: 3_200_000n, floorZat: 3_200_000n, mint: ZSD, recipient: bob },
];
/** Top-up proofs, the k-th bound to position k + 1. */
export const TOP_UPS = [
  { amountZat: 2n * ZEC, floorZat: 2n * ZEC },
  { amountZat: 3n * ZEC, floorZat: 15n * (ZEC / 10n) },
  { amountZat: ZEC, floorZat: ZEC },
];
/** Note withdrawals, bound to (address, the note's derived owner). */
export const WITHDRAWALS = [
  { amountZat: 4n * ZEC, floorZat: 4n * ZEC, zcashAddress: UNPAYABLE },
  { amountZat: 2n * ZEC, floorZat: 15n * (ZEC / 10n), zcashAddress: SAPLING },
];
/** Deposited and never spent. */
export const IDLE_ZAT = 7n * ZEC;
