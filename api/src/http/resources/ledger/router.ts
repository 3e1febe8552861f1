import { formatUnits } from "viem";
import { ZSD_DECIMALS, formatPrice, formatZec, formatZsd } from "@zsd/sdk/units";
import type { ApiKey } from "../../../domain/accounts/keys.ts";
import { problems } from "../../problems.ts";
import { type AnyRoute, route } from "../../routes.ts";
import type { IndexedBlock, Upstreams } from "../../../adapters/upstreams.ts";
import { pendingLeaves } from "../../../domain/deposits/deposits.ts";
import {
  addressParams,
  balancesSchema,
  collateralSchema,
  leavesQuery,
  leavesSchema,
  pegSchema,
  pendingLeavesSchema,
  supplySchema,
} from "./schema.ts";

interface IndexerSupply {
  minted: string;
  burned: string;
  circulating: string;
  holders: number;
}
interface IndexerCollateral {
  depositedZat: string;
  paidOutZat: string;
  outstandingZat: string;
  pendingRedemptionZat: string;
  price: string;
  priceUpdatedAt: string | null;
  valueUsd: string;
  circulatingSupply: string;
  collateralRatioBps: string | null;
}

// The indexer answers integers as decimal strings.
const zec = (zat: string) => formatZec(BigInt(zat));
const zsd = (wei: string) => formatZsd(BigInt(wei));
const usd8 = (value: string) => formatPrice(BigInt(value));

/** Every ledger answer says which block it is as of, and how old that block is. */
function asOf(block: IndexedBlock) {
  return {
    asOfBlock: block.number,
    asOfBlockTime: new Date(block.timestamp * 1000).toISOString(),
    asOfBlockAgeSeconds: Math.max(0, Math.floor(Date.now() / 1000) - block.timestamp),
  };
}

const AS_OF = { asOfBlock: 1204, asOfBlockTime: "2026-03-02T10:15:00.000Z", asOfBlockAgeSeconds: 4 };

interface IndexerDeposits {
  deposits: { index: number; leaf: string; root: string; amountZat: string; noteCommitment: string }[];
  next: number | null;
}

/** Ledger reads, served from the indexer's derived tables. */
/** `split` of GET /v1/collateral: where the ZEC is, from the contracts (domain/positions/positions.ts). */
export type CollateralSplit = () => Promise<Record<string, unknown> | null>;

/** The account's own deposits among leaves from..to (domain/deposits/deposits.ts ownLeaves). */
type OwnLeaves = (
  accountId: string,
  from: number,
  to: number,
) => Promise<Map<number, { amountZat: string; noteCommitment: string }>>;

export function ledgerRoutes(
  upstreams: Upstreams,
  split: CollateralSplit = async () => null,
  ownLeaves: OwnLeaves = async () => new Map(),
): AnyRoute[] {
  return [
    route({
      method: "get",
      path: "/deposits/leaves",
      operationId: "listDepositLeaves",
      summary:
        "Every deposit leaf in tree order, to rebuild the deposit tree and prove locally " +
        "(a wallet fetches them all: asking for one deposit's path would say which is its own)",
      tag: "Ledger",
      auth: true,
      query: leavesQuery,
      responses: {
        200: {
          description: "A page of leaves",
          schema: leavesSchema,
          example: {
            object: "deposit_leaves",
            data: [
              {
                index: 0,
                leaf: "9310212785467612390829371018263547581920384756102938475610293847561029",
                amountZat: "400000000",
                noteCommitment: "14744269619966411208579211824598458697587494354926760081771325075741142829156",
              },
            ],
            root: "2150831829738264937502917346018264739102837465019283746501928374650192837465",
            next: null,
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ query }, _req, res) => {
        const [page, block] = await Promise.all([
          upstreams.indexer<IndexerDeposits>(`/deposits?from=${query.from}&limit=${query.limit}`),
          upstreams.indexedBlock(),
        ]);
        // The caller's own deposits get back the amount and commitment the chain no longer shows.
        const own =
          page.deposits.length === 0
            ? new Map()
            : await ownLeaves(
                (res.locals.apiKey as ApiKey).accountId,
                page.deposits[0]!.index,
                page.deposits.at(-1)!.index,
              );
        // "0": the page ends inside a batch of leaves entered together, where the registry had no root.
        const root = page.deposits.at(-1)?.root;
        return {
          status: 200,
          body: {
            object: "deposit_leaves",
            data: page.deposits.map((d) => ({
              index: d.index,
              leaf: d.leaf,
              amountZat: own.get(d.index)?.amountZat ?? d.amountZat,
              noteCommitment: own.get(d.index)?.noteCommitment ?? d.noteCommitment,
            })),
            root: root === undefined || root === "0" ? null : root,
            next: page.next,
            ...asOf(block),
          },
        };
      },
    }),
    route({
      method: "get",
      path: "/deposits/pending",
      operationId: "listPendingLeaves",
      summary:
        "Change leaves queued for the tree and not in it yet: a note whose leaf is here waits for an insertion " +
        "(no path, not spendable); one neither here nor among the deposit leaves is unknown to the chain",
      tag: "Ledger",
      auth: true,
      responses: {
        200: {
          description: "The queue, oldest first",
          schema: pendingLeavesSchema,
          example: {
            object: "pending_leaves",
            data: [
              {
                sequence: 41,
                leaf: "20421781347291640815378512470965137620987316580934811254093871561987435098712",
                queuedAt: "2026-03-02T10:14:48.000Z",
              },
            ],
            queuedCount: 42,
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async () => {
        const [queue, block] = await Promise.all([pendingLeaves(upstreams), upstreams.indexedBlock()]);
        return { status: 200, body: { object: "pending_leaves", ...queue, ...asOf(block) } };
      },
    }),
    route({
      method: "get",
      path: "/supply",
      operationId: "getSupply",
      summary: "Supply of the stable token",
      tag: "Ledger",
      auth: true,
      responses: {
        200: {
          description: "Supply",
          schema: supplySchema,
          example: {
            object: "supply",
            symbol: "ZSD",
            decimals: 18,
            circulating: "1250.5",
            minted: "1500.5",
            burned: "250.0",
            holders: 7,
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async () => {
        const [s, block] = await Promise.all([upstreams.indexer<IndexerSupply>("/supply"), upstreams.indexedBlock()]);
        return {
          status: 200,
          body: {
            object: "supply",
            symbol: "ZSD",
            decimals: ZSD_DECIMALS,
            circulating: zsd(s.circulating),
            minted: zsd(s.minted),
            burned: zsd(s.burned),
            holders: s.holders,
            ...asOf(block),
          },
        };
      },
    }),
    route({
      method: "get",
      path: "/collateral",
      operationId: "getCollateral",
      summary: "System-wide ZEC backing",
      tag: "Ledger",
      auth: true,
      responses: {
        200: {
          description: "Collateral",
          schema: collateralSchema,
          example: {
            object: "collateral",
            asset: "ZEC",
            depositedZec: "60.0",
            paidOutZec: "5.0",
            outstandingZec: "55.0",
            pendingRedemptionZec: "1.5",
            valueUsd: "2337.5",
            circulatingSupply: "1250.5",
            collateralRatio: "1.8692",
            split: {
              inPositionsZec: "44.0",
              claimableZec: "1.5",
              unmintedZec: "8.0",
              pendingPayoutZec: "1.5",
              positionsValueUsd: "1870.0",
              systemRatio: "1.4954",
              systemFloorRatio: "1.5",
              recoveryMode: true,
              keeperRewardFloorZec: "0.00125",
            },
            price: { zecUsd: "42.5", updatedAt: "2026-03-02T10:10:00.000Z", ageSeconds: 304 },
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async () => {
        const [c, block, where] = await Promise.all([
          upstreams.indexer<IndexerCollateral>("/collateral"),
          upstreams.indexedBlock(),
          split(),
        ]);
        const updatedAt = c.priceUpdatedAt ? Number(c.priceUpdatedAt) : null;
        return {
          status: 200,
          body: {
            object: "collateral",
            asset: "ZEC",
            depositedZec: zec(c.depositedZat),
            paidOutZec: zec(c.paidOutZat),
            outstandingZec: zec(c.outstandingZat),
            pendingRedemptionZec: zec(c.pendingRedemptionZat),
            valueUsd: zsd(c.valueUsd),
            circulatingSupply: zsd(c.circulatingSupply),
            collateralRatio: c.collateralRatioBps === null ? null : formatUnits(BigInt(c.collateralRatioBps), 4),
            split: where,
            price: {
              zecUsd: usd8(c.price),
              updatedAt: updatedAt === null ? null : new Date(updatedAt * 1000).toISOString(),
              ageSeconds: updatedAt === null ? null : Math.max(0, Math.floor(Date.now() / 1000) - updatedAt),
            },
            ...asOf(block),
          },
        };
      },
    }),
    route({
      method: "get",
      path: "/prices/peg",
      operationId: "getPegPrice",
      summary: "Peg target and the ZEC/USD oracle price",
      tag: "Ledger",
      auth: true,
      responses: {
        200: {
          description: "Peg price",
          schema: pegSchema,
          example: {
            object: "peg_price",
            pegPrice: "1.00",
            zecUsd: "42.5",
            updatedAt: "2026-03-02T10:10:00.000Z",
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async () => {
        const [latest, block] = await Promise.all([
          upstreams.indexer<{ price?: string; updatedAt: string }>("/prices/latest"),
          upstreams.indexedBlock(),
        ]);
        if (!latest.price) throw problems.upstreamUnavailable("The price feed");
        return {
          status: 200,
          body: {
            object: "peg_price",
            pegPrice: "1.00",
            zecUsd: usd8(latest.price),
            updatedAt: new Date(Number(latest.updatedAt) * 1000).toISOString(),
            ...asOf(block),
          },
        };
      },
    }),
    route({
      method: "get",
      path: "/wallets/:address/balances",
      operationId: "getWalletBalances",
      summary: "Stable-token balances of a wallet (zero for an address never seen)",
      tag: "Ledger",
      auth: true,
      params: addressParams,
      responses: {
        200: {
          description: "Balances",
          schema: balancesSchema,
          example: {
            object: "balances",
            address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
            balances: [{ asset: "ZSD", amount: "99.5", decimals: 18, raw: "99500000000000000000" }],
            ...AS_OF,
          },
        },
      },
      problems: ["upstream_unavailable"],
      handler: async ({ params }) => {
        const [account, block] = await Promise.all([
          upstreams.indexer<{ balance: string }>(`/accounts/${params.address}`),
          upstreams.indexedBlock(),
        ]);
        return {
          status: 200,
          body: {
            object: "balances",
            address: params.address,
            balances: [{ asset: "ZSD", amount: zsd(account.balance), decimals: ZSD_DECIMALS, raw: account.balance }],
            ...asOf(block),
          },
        };
      },
    }),
  ];
}
