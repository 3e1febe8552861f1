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
 * and the notes the minter adds (a spend's change, collateral released to a note).
 */
export const deposit = onchainTable("deposit", (t) => ({
  index: t.integer().primaryKey(),
  leaf: t.bigint().notNull(),
  /** deposit | change (amount private: 0 here) | note */
  kind: t.text().notNull(),
  noteCommitment: t.bigint().notNull(),
  amountZat: t.bigint().notNull(),
  root: t.bigint().notNull(),
  blockNumber: t.bigint().notNull(),
  timestamp: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));

/** One row ("ZEC"): collateral totals and the latest ZEC/USD price. */
export const collateral = onchainTable("collateral", (t) => ({
  id: t.text().primaryKey(),
  depositedZat: t.bigint().notNull(),
  paidOutZat: t.bigint().notNull(),
  /** Held in custody: deposited - paid out (the registry's totalCollateralZat). */
  outstandingZat: t.bigint().notNull(),
  /** Promised to requested redemptions that are not yet paid or failed. */
  pendingRedemptionZat: t.bigint().notNull(),
  deposits: t.integer().notNull(),
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
    withdrawAddress: t.text().notNull(),
    /** requested → paid | failed */
    status: t.text().notNull(),
    zcashTxId: t.hex(),
    failureReason: t.text(),
    requestedAtBlock: t.bigint().notNull(),
    requestedAt: t.bigint().notNull(),
    requestTxHash: t.hex().notNull(),
    settledAtBlock: t.bigint(),
    settledAt: t.bigint(),
    settleTxHash: t.hex(),
  }),
  (table) => ({ ownerIdx: index().on(table.owner), statusIdx: index().on(table.status) }),
);

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
