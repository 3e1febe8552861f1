import { index, onchainTable } from "ponder";

/** Every stable-token holder that ever held a balance. */
export const account = onchainTable("account", (t) => ({
  address: t.hex().primaryKey(),
  balance: t.bigint().notNull(),
  updatedAtBlock: t.bigint().notNull(),
}));

/** One row ("ZSD"): token supply from Transfer events. circulating = minted - burned. */
export const supply = onchainTable("supply", (t) => ({
  id: t.text().primaryKey(),
  minted: t.bigint().notNull(),
  burned: t.bigint().notNull(),
  holders: t.integer().notNull(),
  updatedAtBlock: t.bigint().notNull(),
}));

/**
 * One row per leaf of the registry's tree, in leaf order: attested ZEC deposits
 * and the queued leaves inserted after them (a spend's change, a note of
 * released collateral or of a redirected payout).
 */
export const deposit = onchainTable(
  "deposit",
  (t) => ({
    index: t.integer().primaryKey(),
    leaf: t.bigint().notNull(),
    /** batch-deposit (a deposit, recorded in a batch: amount private, 0 here) | change (amount private: 0 here) | note */
    kind: t.text().notNull(),
    noteCommitment: t.bigint().notNull(),
    amountZat: t.bigint().notNull(),
    /**
     * The most this leaf can hold as far as the chain shows: its amount where
     * public; for a batched deposit, the batch's total less a zatoshi for each
     * other leaf (each holds at least one); 0 for a change leaf (unbounded, never counted).
     */
    maxAmountZat: t.bigint().notNull(),
    /** The registry's root right after this leaf; 0 inside a batch of leaves (no root existed there). */
    root: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  // GET /anonymity counts the notes whose amount reaches a floor.
  (table) => ({ maxAmountIdx: index().on(table.maxAmountZat) }),
);

/**
 * One row per batch of deposits (`DepositsRecorded`), keyed by its first leaf's
 * index: the chain publishes the batch's total only, so however its leaves
 * split it, at most floor(total / F) of them can each hold F. GET /anonymity
 * counts min(size, floor(total / F)) per batch, not every leaf whose bound
 * reaches F (dust beside a large deposit would otherwise count as large).
 */
export const depositBatch = onchainTable(
  "deposit_batch",
  (t) => ({
    firstIndex: t.integer().primaryKey(),
    /** Its leaves, at `firstIndex` onwards in the `deposit` table. */
    size: t.integer().notNull(),
    totalZat: t.bigint().notNull(),
    /** The most one of its leaves can hold: the total less a zatoshi for each other leaf (each leaf's `maxAmountZat`). */
    maxAmountZat: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  // GET /anonymity sums the batches whose bound reaches a floor.
  (table) => ({ maxAmountIdx: index().on(table.maxAmountZat) }),
);

/**
 * One row per leaf queued for the tree (`LeafQueued`: a spend's change, a note of released
 * collateral or of a redirected payout) and not inserted yet: no path, not spendable.
 * `PendingLeavesInserted` removes the lowest `consumed` sequences (inserted or dropped).
 */
export const pendingLeaf = onchainTable("pending_leaf", (t) => ({
  /** Counts every leaf ever queued, from 0. */
  sequence: t.bigint().primaryKey(),
  leaf: t.bigint().notNull(),
  /**
   * A released note's amount (public, unminted since it was queued); 0 for change (private).
   * Its `deposit` row, once inserted, takes it (kind "note").
   */
  amountZat: t.bigint().notNull(),
  blockNumber: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));

/**
 * One row ("queue"): how many leaves were ever queued (the registry's queuedCount). The
 * `pending_leaf` rows leave once inserted, so the count cannot be read from them.
 */
export const leafQueue = onchainTable("leaf_queue", (t) => ({
  id: t.text().primaryKey(),
  queuedCount: t.bigint().notNull(),
}));

/** One row ("ZEC"): collateral totals and the latest ZEC/USD price. */
export const collateral = onchainTable("collateral", (t) => ({
  id: t.text().primaryKey(),
  depositedZat: t.bigint().notNull(),
  paidOutZat: t.bigint().notNull(),
  /** Held in custody: deposited - paid out (the registry's totalCollateralZat). */
  outstandingZat: t.bigint().notNull(),
  /**
   * Owed to payout owners (Redemptions' pendingZatDue): payouts requested and
   * not yet paid, and failed ones held for their owners until redirected. A
   * redirect to an address moves the amount to a new payout (the total stays);
   * one into a note moves it to `unmintedZat`.
   */
  pendingRedemptionZat: t.bigint().notNull(),
  /** The part of `pendingRedemptionZat` that failed and waits for its owner to redirect it. */
  heldPayoutZat: t.bigint().notNull(),
  deposits: t.integer().notNull(),
  /**
   * In notes not yet spent into a position or paid out (the registry's
   * unmintedZat): deposits and notes of released collateral and redirected
   * payouts (counted when queued, before they enter the tree), less what spends took.
   */
  unmintedZat: t.bigint().notNull(),
  /**
   * Held by the minter's positions, liquidated surplus included (the minter's
   * totalPositionCollateralZat): what positions opened and topped up, less
   * what they released and what redemptions took. A redistribution moves a
   * position's collateral into the others, so only its reward leaves (with
   * the CollateralReleased that pays it).
   */
  positionCollateralZat: t.bigint().notNull(),
  /**
   * `positionCollateralZat` split as the minter splits it: backing the debt
   * (backingCollateralZat) and free (freeCollateralZat: positions without debt,
   * liquidated surplus). A full repayment moves a position's live collateral,
   * which no event carries, so both are read from the minter at the block of
   * each minter event: exact as of `updatedAtBlock`.
   */
  backingCollateralZat: t.bigint().notNull(),
  freeCollateralZat: t.bigint().notNull(),
  /** USD per ZEC × 1e8 (0 until the first price). */
  price: t.bigint().notNull(),
  priceUpdatedAt: t.bigint().notNull(),
  updatedAtBlock: t.bigint().notNull(),
}));

export const mint = onchainTable(
  "mint",
  (t) => ({
    nullifierHash: t.bigint().primaryKey(),
    recipient: t.hex().notNull(),
    relayer: t.hex().notNull(),
    amount: t.bigint().notNull(),
    fee: t.bigint().notNull(),
    collateralFloorZat: t.bigint().notNull(),
    root: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    timestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({ recipientIdx: index().on(table.recipient), txIdx: index().on(table.txHash) }),
);

export const redemption = onchainTable(
  "redemption",
  (t) => ({
    id: t.bigint().primaryKey(),
    owner: t.hex().notNull(),
    amount: t.bigint().notNull(),
    zatDue: t.bigint().notNull(),
    feeZat: t.bigint().notNull(),
    price: t.bigint().notNull(),
    /**
     * keccak256 of the sealed withdraw address: the address itself
     * is sealed to custody's key and never kept here.
     */
    sealedAddressHash: t.hex().notNull(),
    /**
     * requested → paid, or requested → failed (the ZEC held for the owner) →
     * redirected (to the payout `redirectedToId`, or into the note queued as
     * `redirectNoteSequence`)
     */
    status: t.text().notNull(),
    zcashTxId: t.hex(),
    failureReason: t.text(),
    requestedAtBlock: t.bigint().notNull(),
    requestedAt: t.bigint().notNull(),
    requestTxHash: t.hex().notNull(),
    /** When the attestor marked it paid or failed. */
    settledAtBlock: t.bigint(),
    settledAt: t.bigint(),
    settleTxHash: t.hex(),
    /** The failed payout this one replaces (a redirect to an address; amount 0 here). */
    redirectedFromId: t.bigint(),
    /** The new payout record of a redirect to an address. */
    redirectedToId: t.bigint(),
    /** The queue sequence (`LeafQueued`) of the note a redirect went into; its leaf index comes with its insertion. */
    redirectNoteSequence: t.bigint(),
    redirectedAtBlock: t.bigint(),
    redirectedAt: t.bigint(),
    redirectTxHash: t.hex(),
  }),
  (table) => ({ ownerIdx: index().on(table.owner), statusIdx: index().on(table.status) }),
);

/**
 * One row per position of the minter. Debt and collateral are the values the
 * position's own events carry (as opened, plus top-ups, `debtLeft` after a
 * repayment, `collateralLeft` after a release, zero once closed, the surplus
 * once liquidated). A redemption lowers the debt and collateral of every
 * position with debt in proportion, without an event per position, so after
 * one these are not the live values: `StableMinter.getPosition` is.
 */
export const position = onchainTable(
  "position",
  (t) => ({
    id: t.bigint().primaryKey(),
    owner: t.hex().notNull(),
    /** open → liquidated (by a liquidation or a redistribution) → closed, or open → closed */
    status: t.text().notNull(),
    collateralZat: t.bigint().notNull(),
    debt: t.bigint().notNull(),
    openedAtBlock: t.bigint().notNull(),
    updatedAtBlock: t.bigint().notNull(),
    lastTxHash: t.hex().notNull(),
  }),
  (table) => ({ statusIdx: index().on(table.status) }),
);

/**
 * One row per event of a position (id: Ponder's event id, in chain order).
 * `amount` is in the token's unit, `amountZat` in zatoshi; `debt` and
 * `collateralZat` are the position's row after the event.
 *
 * | kind          | account    | amount     | amountZat     | also                     |
 * | opened        | owner      | debt       | collateral    |                          |
 * | toppedUp      |            |            | added         | nullifierHash            |
 * | repaid        | payer      | repaid     |               |                          |
 * | released      |            |            | released      | payoutId or noteSequence |
 * | closed        |            | debt burnt | collateral    |                          |
 * | liquidated    | liquidator | debt       | seized        | price                    |
 * | redistributed | caller     | debt       | collateral    | rewardZat                |
 *
 * A redistribution (a position under 100%) spreads the debt and the
 * collateral less the reward over every other position; the reward leaves
 * with the `released` row that follows (none when 0). Inside a par
 * redemption the caller is the Redemptions contract and the reward 0.
 */
export const positionEvent = onchainTable(
  "position_event",
  (t) => ({
    id: t.text().primaryKey(),
    positionId: t.bigint().notNull(),
    /** opened | toppedUp | repaid | released | closed | liquidated | redistributed */
    kind: t.text().notNull(),
    account: t.hex(),
    amount: t.bigint(),
    amountZat: t.bigint(),
    nullifierHash: t.bigint(),
    /** The Redemptions record paying released collateral to a Zcash address. */
    payoutId: t.bigint(),
    /** The queue sequence (`LeafQueued`) of the note collateral was released to; its leaf index comes with its insertion. */
    noteSequence: t.bigint(),
    /** USD per ZEC × 1e8 at a liquidation. */
    price: t.bigint(),
    /** The caller's reward out of a redistributed position's collateral. */
    rewardZat: t.bigint(),
    debt: t.bigint().notNull(),
    collateralZat: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    logIndex: t.integer().notNull(),
    timestamp: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({ positionIdx: index().on(table.positionId), txIdx: index().on(table.txHash) }),
);

/** A note's ZEC paid out to a Zcash address without opening a position (`withdrawNote`). */
export const noteWithdrawal = onchainTable("note_withdrawal", (t) => ({
  nullifierHash: t.bigint().primaryKey(),
  amountZat: t.bigint().notNull(),
  /** The Redemptions record custody pays (a `redemption` row with amount 0). */
  payoutId: t.bigint().notNull(),
  /** The payout's owner, bound by the proof (who may redirect it if custody cannot pay), not the sender. */
  owner: t.hex().notNull(),
  blockNumber: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));

export const priceUpdate = onchainTable("price_update", (t) => ({
  roundId: t.bigint().primaryKey(),
  price: t.bigint().notNull(),
  updatedAt: t.bigint().notNull(),
  blockNumber: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));

export const proposal = onchainTable("proposal", (t) => ({
  id: t.bigint().primaryKey(),
  proposer: t.hex().notNull(),
  description: t.text().notNull(),
  targets: t.hex().array().notNull(),
  values: t.bigint().array().notNull(),
  calldatas: t.hex().array().notNull(),
  voteStart: t.bigint().notNull(),
  voteEnd: t.bigint().notNull(),
  /** Votes needed (for + abstain), from the governance token's supply at creation. */
  quorum: t.bigint().notNull(),
  forVotes: t.bigint().notNull(),
  againstVotes: t.bigint().notNull(),
  abstainVotes: t.bigint().notNull(),
  /** Timelock eta (seconds) once queued. */
  eta: t.bigint(),
  queuedAt: t.bigint(),
  executedAt: t.bigint(),
  canceledAt: t.bigint(),
  createdAtBlock: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));

export const vote = onchainTable(
  "vote",
  (t) => ({
    id: t.text().primaryKey(),
    proposalId: t.bigint().notNull(),
    voter: t.hex().notNull(),
    /** 0 against, 1 for, 2 abstain */
    support: t.integer().notNull(),
    weight: t.bigint().notNull(),
    reason: t.text().notNull(),
    blockNumber: t.bigint().notNull(),
    txHash: t.hex().notNull(),
  }),
  (table) => ({ proposalIdx: index().on(table.proposalId) }),
);
