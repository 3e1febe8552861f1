// A crowd in one bucket of the ratio order, for the tests and the benchmark of insert hints: a
// PositionManager of its own beside a deployed system (its price feed and RatioBuckets library),
// driven by contracts/mocks/DirectMinter.sol, so that thousands of positions are filed in a few
// transactions instead of one proof each. Its books are its own: it mints no ZSD.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Address, type Hex, getAddress, getContract, parseAbi, parseEventLogs } from "viem";
import { positionManagerAbi } from "@zsd/sdk/abis";
import { findInsertHint } from "@zsd/sdk";
import { linkBytecode, readArtifact } from "../../scripts/lib/artifacts.ts";
import { ARTIFACTS_DIR } from "../../scripts/lib/paths.ts";
import { type System, ZEC, ZSD, accounts } from "./system.ts";

export const directMinterAbi = parseAbi([
  "function positions() view returns (address)",
  "function openMany(address owner, uint256 collateralZat, uint256 firstDebt, uint256 debtStep, uint256 count) returns (uint256)",
  "function open(address owner, uint256 collateralZat, uint256 debt, uint256 hint) returns (uint256)",
  "function topUp(uint256 positionId, uint256 amountZat, uint256 hint)",
  "function repay(uint256 positionId, uint256 amount, uint256 hint)",
  "function withdraw(uint256 positionId, uint256 amountZat, uint256 hint)",
]);

/** Positions `openMany` files in one transaction: about 110k gas each, under the node's 2^24 cap on one transaction. */
export const CROWD_PER_TRANSACTION = 100;

/** Deploys a PositionManager on `s`'s price feed with a DirectMinter as its minter, from the deployer. */
export async function deployCrowd(s: System) {
  const wallet = s.read.wallet;
  const account = wallet.account!;
  const deployed = async (abi: readonly unknown[], bytecode: Hex, args: readonly unknown[]) => {
    const hash = await wallet.deployContract({ account, chain: wallet.chain, abi: abi as never, bytecode, args });
    return getAddress((await s.receipt(hash)).contractAddress!);
  };
  const manager = readArtifact("PositionManager");
  const minCollateralRatioBps = await s.read.positions.read.minCollateralRatioBps();
  const positionsAddress = await deployed(
    manager.abi,
    linkBytecode(manager, { RatioBuckets: s.deployment.contracts.RatioBuckets.address }),
    [account.address, s.read.priceFeed.address, minCollateralRatioBps],
  );
  const minterArtifact = JSON.parse(
    readFileSync(join(ARTIFACTS_DIR, "contracts", "mocks", "DirectMinter.sol", "DirectMinter.json"), "utf8"),
  ) as { abi: readonly unknown[]; bytecode: Hex };
  const minterAddress = await deployed(minterArtifact.abi, minterArtifact.bytecode, [positionsAddress]);
  const client = { public: s.publicClient, wallet };
  const positions = getContract({ address: positionsAddress, abi: positionManagerAbi, client });
  const minter = getContract({ address: minterAddress, abi: directMinterAbi, client });
  await s.receipt(await positions.write.setMinter([minterAddress]));

  /** Opens `count` positions of `collateralZat` each, debts from `firstDebt` up by `debtStep`: each the riskiest yet. */
  async function fill(owner: Address, collateralZat: bigint, firstDebt: bigint, debtStep: bigint, count: number) {
    for (let done = 0; done < count; done += CROWD_PER_TRANSACTION) {
      const n = Math.min(CROWD_PER_TRANSACTION, count - done);
      const first = firstDebt + BigInt(done) * debtStep;
      await s.receipt(
        await minter.write.openMany([owner, collateralZat, first, debtStep, BigInt(n)], { gas: 16_000_000n }),
      );
    }
  }

  /** The hint a write leaving position `positionId` (0: a new one) at (collateralZat, debt) takes. */
  const hintFor = (position: { positionId?: bigint; collateralZat: bigint; debt: bigint }) =>
    findInsertHint(s.publicClient, positionsAddress, position);

  return { positions, minter, fill, hintFor };
}

export type Crowd = Awaited<ReturnType<typeof deployCrowd>>;

/**
 * The crowd's layout at $50: 10 ZEC against 307-314 ZSD (159-163%) all fall in one bucket, whose keys
 * run from 3,169,126 to 3,268,162 zatoshi per ZSD; 318.5-320 ZSD (156-157%) fall in the one below.
 */
export const CROWD_LAYOUT = {
  collateralZat: 10n * ZEC,
  firstDebt: 307n * ZSD,
  lastDebt: 314n * ZSD,
  /** A fresh mint above the whole crowd, in its bucket. */
  freshDebt: 306n * ZSD + ZSD / 2n,
  /** The mover's debt, in the bucket below, and what its repayment and top-up take it to: the crowd's middle. */
  moverDebt: 318n * ZSD + ZSD / 2n,
  repay: 8n * ZSD + ZSD / 2n,
  topUpZat: (3n * ZEC) / 10n,
} as const;

/** The largest crowd `crowdedWriteGas` sends an unhinted mint into. */
export const UNHINTED_CROWD_MAX = 2_000;

/**
 * Gas of a mint, a repayment and a top-up (each from the same state) that land in a bucket holding
 * `crowdSize` positions, each with the hint `findInsertHint` gives, and of the mint without one (up to
 * UNHINTED_CROWD_MAX). The
 * repayment and top-up move a position from the bucket below into the middle of the crowd, so with
 * no crowd every write lands in an empty bucket. Whole transactions through DirectMinter: the real
 * minter's note spend and token moves add the same to each whatever the crowd.
 */
export async function crowdedWriteGas(s: System, crowdSize: number) {
  const L = CROWD_LAYOUT;
  const owner = accounts.deployer.address;
  const outer = await s.snapshot();
  try {
    const c = await deployCrowd(s);
    const open = async (debt: bigint, hint: bigint) => {
      const receipt = await s.receipt(await c.minter.write.open([owner, L.collateralZat, debt, hint]));
      const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
      return { id: opened!.args.positionId!, gas: receipt.gasUsed };
    };
    await open(320n * ZSD, 0n);
    await open(319n * ZSD, 0n);
    const mover = (await open(L.moverDebt, 0n)).id;
    if (crowdSize > 0) {
      const step = (L.lastDebt - L.firstDebt) / BigInt(crowdSize);
      await c.fill(owner, L.collateralZat, L.firstDebt, step, crowdSize);
    }
    const once = async (send: () => Promise<bigint>) => {
      const id = await s.snapshot();
      try {
        return await send();
      } finally {
        await s.revert(id);
      }
    };
    const gasOf = async (hash: Hex) => (await s.receipt(hash)).gasUsed;
    const fresh = { collateralZat: L.collateralZat, debt: L.freshDebt };
    const mint = await once(async () => (await open(L.freshDebt, await c.hintFor(fresh))).gas);
    // Without a hint a mint walks the whole crowd, about 4,500 gas a position: past 3,000 or so it
    // needs more than the 2^24 gas one transaction may use, so it cannot be sent at all.
    const mintUnhinted =
      crowdSize <= UNHINTED_CROWD_MAX ? await once(async () => (await open(L.freshDebt, 0n)).gas) : undefined;
    const repaid = { positionId: mover, collateralZat: L.collateralZat, debt: L.moverDebt - L.repay };
    const repay = await once(async () => gasOf(await c.minter.write.repay([mover, L.repay, await c.hintFor(repaid)])));
    const toppedUp = { positionId: mover, collateralZat: L.collateralZat + L.topUpZat, debt: L.moverDebt };
    const topUp = await once(async () =>
      gasOf(await c.minter.write.topUp([mover, L.topUpZat, await c.hintFor(toppedUp)])),
    );
    return { mint, repay, topUp, mintUnhinted };
  } finally {
    await s.revert(outer);
  }
}
