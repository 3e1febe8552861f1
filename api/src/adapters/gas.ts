// Gas limits for transactions whose cost can grow between eth_estimateGas and
// inclusion: a leaf another transaction inserts first can make our insertion
// carry through more LeanIMT levels, a position filed meanwhile lengthens a
// sorted-list walk, and a redemption may settle (redistribute) positions
// inline that went under 100% since. A limit is the estimate plus headroom
// that holds for any state, so such a transaction never runs out of gas.

/** The most gas one transaction may take (the node's per-transaction cap, EIP-7825's 2^24). */
export const TX_GAS_CAP = 16_777_216n;

/**
 * A whole full-depth (20-level) LeanIMT insertion, whatever the estimate
 * already held. Measured on the Hardhat node (a one-leaf recordDeposits into a
 * fresh registry, as test/api/workers/gas-headroom.test.ts sends it): the 16th, 32nd,
 * 64th and 128th leaf (carrying through 4, 5, 6 and 7 levels) cost 196,848,
 * 218,861, 240,874 and 262,888 gas, i.e. 22,013 per level carried (a
 * PoseidonT3 hash and a side node's write), while the 129th (no carry) costs
 * 193,836 and the 2nd, the cheapest, 168,024. A 20-level carry is then
 * 262,888 + 13 × 22,013 ≈ 549,060 gas for the whole call; 600,000 covers it
 * (the growth alone, over the cheapest insertion, is about 381,000).
 */
export const INSERTION_HEADROOM = 600_000n;

/**
 * A change leaf queued by a spend (CollateralRegistry.queueLeaf/queueLeaves): the
 * queue's checkpoint slot (22,100 gas while the ring of checkpoints is written the
 * first time, an update after), the previous checkpoint and the leaf's tree slot
 * read cold, a keccak link and the event. bench:contracts measured 27,265 a leaf
 * in that first round and ~12,000 after (a mintBatch of 8 with change against one
 * without); no tree walk, whatever the tree holds.
 */
export const CHANGE_QUEUE_GAS = 60_000n;

/**
 * A position filed in its sorted list: the walk to its place grows with the
 * positions filed meanwhile. Not measured per step; ~95 cold reads (2,100 gas
 * each) of walk beyond the estimate's.
 */
export const WALK_HEADROOM = 200_000n;

/**
 * PositionManager.redeem redistributes up to MAX_SETTLED = 24
 * positions under 100% inline before it charges. A keeper's whole
 * redistribution transaction costs 156,885 gas (bench/results/contracts.json,
 * redistributeToAddress, its 21,000 base included), an inline one ~50,000
 * (redeemThatFirstSpreadsAPosition − redeemAcrossPositions): 24 × 160,000.
 */
export const SETTLEMENT_HEADROOM = 24n * 160_000n;

/** Headroom of every relayed transaction (tree insertions and position writes). */
export const RELAY_HEADROOM = INSERTION_HEADROOM + WALK_HEADROOM;
/** Headroom of a redemption: the same, and the settlement bound. */
export const REDEMPTION_HEADROOM = RELAY_HEADROOM + SETTLEMENT_HEADROOM;

/**
 * A spendBatch of `n` top-ups and note withdrawals: each top-up re-files its position in the sorted
 * list (a walk each), and the change is only queued (no tree walk).
 */
export function spendBatchHeadroom(n: number): bigint {
  return RELAY_HEADROOM + BigInt(Math.max(0, n - 1)) * WALK_HEADROOM;
}

/** The gas limit to send with: the estimate plus headroom, never above the per-transaction cap. */
export function gasLimit(estimate: bigint, headroom: bigint = RELAY_HEADROOM): bigint {
  const limit = estimate + headroom;
  return limit > TX_GAS_CAP ? TX_GAS_CAP : limit;
}

/** Whether a send failed for want of gas (Hardhat and geth word it differently). */
export function isOutOfGas(error: unknown): boolean {
  const text =
    error instanceof Error ? `${error.message} ${String((error as { details?: unknown }).details ?? "")}` : "";
  return /out of gas|ran out of gas|gas required exceeds|intrinsic gas too low/i.test(text);
}
