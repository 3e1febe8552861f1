// Gas of the main transactions, circuit size and prover speed.
// Writes bench/results/contracts.json and prints a table. `npm run bench:contracts`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Hex, parseEventLogs, zeroAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  changeNote,
  closeTypedData,
  liquidateTypedData,
  positionManagerAbi,
  positionOwnerKey,
  repayTypedData,
  stableMinterAbi,
  withdrawCollateralTypedData,
} from "@zsd/sdk";
import { readManifest } from "../scripts/lib/circuit.ts";
import { startHardhatNode } from "../scripts/lib/hardhat-node.ts";
import { ROOT } from "../scripts/lib/paths.ts";
import {
  createNote,
  depositLeaf,
  noteCommitment,
  proveCollateral,
  releaseProver,
  verifyCollateralProof,
} from "@zsd/sdk/notes";
import { PROVING_ARTIFACTS, VERIFICATION_KEY, ZEC, ZSD, accounts, createSystem, crowdedWriteGas } from "@zsd/testkit";
import { summarize } from "./stats.ts";

const TARGETS = { mintGas: 290_000, proofMedianMs: 1_000, verifyMedianMs: 50 };
const PROOF_RUNS = 9;
const TREE_LEAVES = 1_024;

const node = await startHardhatNode();
try {
  const s = await createSystem(node.rpcUrl);
  const { alice, bob, carol, relayer, custody, deployer } = accounts;
  const gas = async (hash: Hex) => Number((await s.receipt(hash)).gasUsed);

  // Record-deposit at an empty tree, then at >= 1,000 leaves.
  const depositEmpty = Number((await s.deposit(createNote(), ZEC)).receipt.gasUsed);
  const registry = s.as(custody).registry;
  let last: Hex | undefined;
  for (let i = 1; i < TREE_LEAVES; i++) {
    const amountZat = 1_000n + BigInt(i);
    last = await s.sendDeposits([depositLeaf(amountZat, noteCommitment(createNote()))], amountZat);
  }
  await s.receipt(last!);
  const depositFull: number[] = [];
  for (let i = 0; i < 8; i++) depositFull.push(Number((await s.deposit(createNote(), ZEC)).receipt.gasUsed));

  // Mints against the 1,032-leaf tree: a first one (recipient and relayer
  // new to the token), then a typical one (the relayer already holds fees).
  const mintFirst = await s.depositAndMint({
    amountZat: 10n * ZEC,
    mintAmount: 300n * ZSD,
    recipient: alice.address,
    relayer: relayer.address,
    fee: ZSD,
  });
  const mintTypical = await s.depositAndMint({
    amountZat: 10n * ZEC,
    mintAmount: 300n * ZSD,
    recipient: bob.address,
    relayer: relayer.address,
    fee: ZSD,
  });
  const mintNoFee = await s.depositAndMint({ amountZat: 10n * ZEC, mintAmount: 300n * ZSD, recipient: carol.address });

  // Withdraw addresses go sealed to custody's key: a Sapling address (88 characters) is a 153-byte envelope.
  const SAPLING = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
  const redeemGas = await gas(
    await s.as(alice).redemptions.write.redeem([100n * ZSD, s.sealed(SAPLING, alice.address)]),
  );
  // Signed at the quote, as a client that accepts no slippage does.
  const [minZatOut] = await s.read.redemptions.read.quote([100n * ZSD]);
  const sig = await s.signedRedeem(bob, 100n * ZSD, s.sealed(SAPLING, bob.address), bob.address, minZatOut);
  const redeemPermitGas = await gas(
    await s
      .as(relayer)
      .redemptions.write.redeemWithPermit([
        bob.address,
        100n * ZSD,
        minZatOut,
        s.sealed(SAPLING, bob.address),
        sig.deadline,
        sig.v,
        sig.r,
        sig.s,
      ]),
  );
  const completeGas = await gas(await s.as(custody).redemptions.write.completePayout([1n, `0x${"ab".repeat(32)}`]));
  const failGas = await gas(await s.as(custody).redemptions.write.failPayout([2n, "bench"]));

  await s.receipt(await s.as(deployer).governanceToken.write.delegate([deployer.address]));
  await s.mineBlocks(1);
  const g = s.as(deployer).governor;
  await s.receipt(await g.write.propose([[s.read.minter.address], [0n], ["0x"], "bench"]));
  const proposalId = (
    await s.publicClient.getContractEvents({ address: g.address, abi: g.abi, eventName: "ProposalCreated" })
  )[0]!.args.proposalId!;
  await s.mineBlocks(2);
  const castVoteGas = await gas(await g.write.castVote([proposalId, 1]));

  // Positions: each action once, with real proofs; the owner's actions signed and sent by the relayer.
  type To = { sealedAddress: Hex; noteCommitment: bigint };
  const toAddress = (owner: Hex): To => ({ sealedAddress: s.sealed(SAPLING, owner), noteCommitment: 0n });
  const toNote = (): To => ({ sealedAddress: "0x", noteCommitment: noteCommitment(createNote()) });
  const minter = s.read.minter.address;
  const domain = { chainId: s.chainId, verifyingContract: minter };
  const deadline = async () => (await s.publicClient.getBlock()).timestamp + 3600n;
  const nonce = (signer: Hex) => s.read.minter.read.nonces([signer]);
  const open = async (amountZat: bigint, mint: bigint, floor = amountZat) => {
    const m = await s.depositAndMint({
      amountZat,
      collateralFloorZat: floor,
      mintAmount: mint,
      recipient: alice.address,
    });
    const [opened] = parseEventLogs({ abi: positionManagerAbi, logs: m.receipt.logs, eventName: "PositionOpened" });
    const owner = privateKeyToAccount(positionOwnerKey(m.note));
    return { note: m.note, id: opened!.args.positionId, owner, gas: Number(m.receipt.gasUsed) };
  };
  const withChange = await open(10n * ZEC, 100n * ZSD, 6n * ZEC);
  // Its change leaf was queued: one leaf inserted alone (the most a queued leaf can cost), then spendable.
  const insertOneGas = Number((await s.insertPending())!.gasUsed);
  const topUp = await s.proveSpend({
    note: changeNote(withChange.note),
    amountZat: 4n * ZEC,
    collateralFloorZat: 4n * ZEC,
    binding: { chainId: BigInt(s.chainId), minter, positionId: withChange.id },
  });
  const topUpGas = await gas(await s.as(relayer).minter.write.topUp([topUp.proof, topUp.spend, withChange.id, 0n]));
  const unminted = createNote();
  await s.deposit(unminted, 3n * ZEC);
  const out = await s.proveWithdraw({
    note: unminted,
    amountZat: 3n * ZEC,
    collateralFloorZat: 3n * ZEC,
    sealedAddress: s.sealed(SAPLING, alice.address),
    owner: alice.address,
  });
  const withdrawNoteGas = await gas(
    await s
      .as(relayer)
      .minter.write.withdrawNote([out.proof, out.spend, s.sealed(SAPLING, alice.address), alice.address]),
  );
  const p = withChange;
  const repayGas = await gas(await s.as(alice).minter.write.repay([p.id, 10n * ZSD, 0n]));
  let d = await deadline();
  const repaySig = await alice.signTypedData(
    repayTypedData(domain, {
      positionId: p.id,
      maxAmount: 10n * ZSD,
      payer: alice.address,
      nonce: await nonce(alice.address),
      deadline: d,
    }),
  );
  const repayWithSigGas = await gas(
    await s.as(relayer).minter.write.repayWithSig([p.id, 10n * ZSD, alice.address, d, repaySig, 0n]),
  );
  const withdrawSigned = async (to: To) => {
    d = await deadline();
    const signature = await p.owner.signTypedData(
      withdrawCollateralTypedData(domain, {
        positionId: p.id,
        amountZat: ZEC,
        ...to,
        nonce: await nonce(p.owner.address),
        deadline: d,
      }),
    );
    return gas(await s.as(relayer).minter.write.withdrawCollateralWithSig([p.id, ZEC, to, d, signature, 0n]));
  };
  const withdrawToAddressGas = await withdrawSigned(toAddress(p.owner.address));
  const withdrawToNoteGas = await withdrawSigned(toNote());
  const closeSigned = async (q: typeof p, to: To) => {
    // The owner holds no ZSD: a payer repays the rest first, then the owner closes.
    const left = (await s.read.positions.read.getPosition([q.id])).debt;
    if (left > 0n) await s.receipt(await s.as(alice).minter.write.repay([q.id, left, 0n]));
    d = await deadline();
    // Bounded at what the owner reads: no debt, all the collateral.
    const { debt: maxDebt, collateralZat: minZatOut } = await s.read.positions.read.getPosition([q.id]);
    const signature = await q.owner.signTypedData(
      closeTypedData(domain, {
        positionId: q.id,
        maxDebt,
        minZatOut,
        ...to,
        nonce: await nonce(q.owner.address),
        deadline: d,
      }),
    );
    return gas(await s.as(relayer).minter.write.closeWithSig([q.id, maxDebt, minZatOut, to, d, signature]));
  };
  const closeToAddressGas = await closeSigned(p, toAddress(p.owner.address));
  const closeToNoteGas = await closeSigned(await open(4n * ZEC, 50n * ZSD), toNote());
  const risky = await open(4n * ZEC, 130n * ZSD);
  const riskySigned = await open(4n * ZEC, 130n * ZSD);
  await s.setPrice(38n * 100_000_000n);
  // A keeper's bounds from what it read at $38: the debt it saw, the ZEC that buys (debt plus the 5% bonus),
  // and break-even value.
  const boundsOf = async (id: bigint) => {
    const { debt } = await s.read.positions.read.getPosition([id]);
    return {
      maxDebt: debt,
      minSeizedZat: (debt * 10_500n) / 10_000n / (38n * 100_000_000n * 100n),
      minSeizedValue: debt,
    };
  };
  const b = await boundsOf(risky.id);
  const liquidateGas = await gas(await s.as(alice).minter.write.liquidate([risky.id, b, toAddress(alice.address)]));
  const signedBounds = await boundsOf(riskySigned.id);
  d = await deadline();
  const liquidateSig = await alice.signTypedData(
    liquidateTypedData(domain, {
      positionId: riskySigned.id,
      ...signedBounds,
      ...toAddress(alice.address),
      nonce: await nonce(alice.address),
      deadline: d,
    }),
  );
  const liquidateWithSigGas = await gas(
    await s
      .as(relayer)
      .minter.write.liquidateWithSig([
        riskySigned.id,
        alice.address,
        signedBounds,
        toAddress(alice.address),
        d,
        liquidateSig,
      ]),
  );
  const redeemFromPositionsGas = await gas(
    await s.as(alice).redemptions.write.redeem([10n * ZSD, s.sealed(SAPLING, alice.address)]),
  );
  // The first write after a redemption saves the map's snapshot; later ones share it (as `risky` did).
  const mintAfterRedemption = await open(10n * ZEC, 200n * ZSD);
  // Under 100%: a keeper spreads one (paid 0.5% to its address); a redemption spreads the other first.
  await s.setPrice(50n * 100_000_000n);
  const sunk = [await open(4n * ZEC, 130n * ZSD), await open(4n * ZEC, 130n * ZSD)];
  await s.setPrice(32n * 100_000_000n);
  const redistributeGas = await gas(
    await s.as(carol).minter.write.redistribute([sunk[0]!.id, toAddress(carol.address)]),
  );
  const redeemSpreadingGas = await gas(
    await s.as(alice).redemptions.write.redeem([10n * ZSD, s.sealed(SAPLING, alice.address)]),
  );
  // Bob's redemption that custody failed above: he sends the held ZEC elsewhere.
  const redirectGas = await gas(await s.as(bob).redemptions.write.redirect([2n, s.sealed(SAPLING, bob.address), 0n]));

  // Last, so that the figures above are measured at the same tree size as before
  // (a leaf's insertion cost depends on its index), and at $50 again.
  await s.setPrice(50n * 100_000_000n);
  // The queue's checkpoints live in a ring of 1,025 slots: each of the first 1,025 leaves ever
  // queued writes a new slot (22.1k gas), every later one updates one (5k). A live system is past
  // that round within its first thousand spends with change, so the ring is filled once here (an
  // account given the note role queues leaves, and they are inserted) before the figures below.
  const ringFirstRound = { queuedPerLeaf: 0, at: 0 };
  {
    await s.grantRegistryRole(await s.read.registry.read.NOTE_ROLE(), carol.address);
    const queued = Number(await s.read.registry.read.queuedCount());
    const filler = s.as(carol).registry;
    for (let left = 1_025 - queued; left > 0; left -= 205) {
      const leaves = Array.from({ length: Math.min(205, left) }, () => noteCommitment(createNote()));
      const used = await gas(await filler.write.queueLeaves([leaves], { gas: 15_000_000n }));
      if (ringFirstRound.queuedPerLeaf === 0) ringFirstRound.queuedPerLeaf = Math.round(used / leaves.length);
    }
    while ((await s.read.registry.read.pendingCount()) > 0n) await s.insertPending(64);
    ringFirstRound.at = Number(await s.read.registry.read.size());
  }

  // A wallet's single mint that leaves change, as the typical mint above (relayer and recipient hold
  // ZSD), beside the same mint without change: what queueing the change leaf adds to a mint (its
  // insertion is paid later, by the inserter). A mint first takes the redemptions above into the
  // positions' map, which the first write after them pays for.
  // Both at one collateral ratio (500%), so both file their positions in the same ratio bucket.
  const typical = (floor: bigint) =>
    s.depositAndMint({
      amountZat: 10n * ZEC,
      collateralFloorZat: floor,
      mintAmount: (floor * 10n * ZSD) / ZEC,
      recipient: bob.address,
      relayer: relayer.address,
      fee: ZSD,
    });
  await typical(10n * ZEC);
  const mintTypicalWithChange = await typical(6n * ZEC);
  const mintTypicalAgain = await typical(10n * ZEC);
  // mintBatch: gas per mint for batches of 1, 4, 8 and 16 relayed mints
  // (a fee to a relayer that already holds ZSD), with a change leaf (3.1 of a
  // 4 ZEC deposit, as zsd.mint proves a round floor) and without. Every note is
  // deposited before any is proved, so all prove against one root.
  const batchSizes = [1, 4, 8, 16] as const;
  const batchGas: Record<string, Record<string, number>> = { withChange: {}, withoutChange: {} };
  for (const [flavour, floor] of [
    ["withChange", 31n * (ZEC / 10n)],
    ["withoutChange", 4n * ZEC],
  ] as const) {
    const total = batchSizes.reduce((a, b) => a + b, 0);
    const notes = Array.from({ length: total }, () => createNote());
    for (const note of notes) await s.deposit(note, 4n * ZEC);
    const proved = [];
    for (const note of notes) {
      proved.push(
        await s.prove({
          note,
          amountZat: 4n * ZEC,
          collateralFloorZat: floor,
          mintAmount: 100n * ZSD,
          recipient: carol.address,
          relayer: relayer.address,
          fee: ZSD,
        }),
      );
    }
    for (const size of batchSizes) {
      const items = proved.splice(0, size);
      // A set gas limit: the node's estimate for a batch of 16 came out over the 2^24 per-transaction cap.
      const hash = await s
        .as(relayer)
        .minter.write.mintBatch([items.map((i) => i.proof), items.map((i) => i.request)], { gas: 16_000_000n });
      batchGas[flavour]![String(size)] = Math.round((await gas(hash)) / size);
      console.log(`mintBatch ${flavour} ${size}: ${batchGas[flavour]![String(size)]} gas per mint`);
    }
  }

  // spendBatch: top-ups of one open position, each from its own note leaving change
  // (3.1 of 4 ZEC, as a wallet proves a round floor), one alone (topUp) and in batches of 1, 4, 8
  // and 16: gas per top-up. Proved against one root, as the mints above.
  const spendBatchGas: Record<string, number> = {};
  let topUpWithChangeGas = 0;
  {
    const target = await open(10n * ZEC, 100n * ZSD);
    const notes = Array.from({ length: 1 + batchSizes.reduce((a, b) => a + b, 0) }, () => createNote());
    for (const note of notes) await s.deposit(note, 4n * ZEC);
    const proved = [];
    for (const note of notes) {
      proved.push(
        await s.proveSpend({
          note,
          amountZat: 4n * ZEC,
          collateralFloorZat: 31n * (ZEC / 10n),
          binding: { chainId: BigInt(s.chainId), minter, positionId: target.id },
        }),
      );
    }
    const alone = proved.shift()!;
    topUpWithChangeGas = await gas(await s.as(relayer).minter.write.topUp([alone.proof, alone.spend, target.id, 0n]));
    for (const size of batchSizes) {
      const items = proved.splice(0, size);
      const hash = await s.as(relayer).minter.write.spendBatch(
        [
          items.map((i) => i.proof),
          items.map((i) => ({
            spend: i.spend,
            positionId: target.id,
            sealedAddress: "0x" as Hex,
            owner: zeroAddress,
            hint: 0n,
          })),
        ],
        { gas: 16_000_000n },
      );
      spendBatchGas[String(size)] = Math.round((await gas(hash)) / size);
      console.log(`spendBatch of top-ups ${size}: ${spendBatchGas[String(size)]} gas per top-up`);
    }
  }

  // The queued change of the mints above, inserted in batches of 1, 4, 8 and 16
  // as anyone may (insertPendingLeaves): gas per leaf, the transaction's base cost
  // included. 29 leaves are queued; each batch takes the queue's head.
  const insertBatchGas: Record<string, number> = {};
  for (const size of batchSizes) {
    const receipt = (await s.insertPending(size))!;
    insertBatchGas[String(size)] = Math.round(Number(receipt.gasUsed) / size);
    console.log(`insertPendingLeaves ${size}: ${insertBatchGas[String(size)]} gas per leaf`);
  }

  // Leaves in batches: the attestors' quorum (2 signatures) records 1, 4, 8 and 16
  // deposits at once (recordDeposits); gas per leaf, the transaction's base cost and the signature checks included.
  const leafBatchGas: Record<string, number> = {};
  for (const size of batchSizes) {
    const leaves = Array.from({ length: size }, (_, i) => depositLeaf(ZEC + BigInt(i), noteCommitment(createNote())));
    const total = leaves.reduce((sum, _, i) => sum + ZEC + BigInt(i), 0n);
    leafBatchGas[String(size)] = Math.round((await gas(await s.sendDeposits(leaves, total))) / size);
    console.log(`recordDeposits ${size}: ${leafBatchGas[String(size)]} gas per leaf`);
  }

  // Writes landing in one crowded bucket of the ratio order, each with its hint, against the same
  // writes into an empty bucket (testkit's crowd: a PositionManager of its own, filed without proofs).
  const crowdedBucket = {
    empty: await crowdedWriteGas(s, 0),
    of500: await crowdedWriteGas(s, 500),
    of5000: await crowdedWriteGas(s, 5_000),
  };
  for (const [size, g] of Object.entries(crowdedBucket)) {
    console.log(
      `bucket ${size}: mint ${g.mint}, repay ${g.repay}, top-up ${g.topUp}, mint without hint ${g.mintUnhinted}`,
    );
  }

  // Prover: warm-up once (curve set-up), then PROOF_RUNS timed proofs.
  const note = createNote();
  const amountZat = 3n * ZEC;
  await s.deposit(note, amountZat);
  const tree = await s.depositTree();
  const path = tree.path({ leaf: depositLeaf(amountZat, noteCommitment(note)) });
  const binding = {
    chainId: BigInt(s.chainId),
    minter: s.read.minter.address,
    recipient: alice.address,
    relayer: relayer.address,
    fee: 1n,
    mintAmount: 10n * ZSD,
    owner: alice.address,
  };
  const input = { note, amountZat, path, collateralFloorZat: amountZat, binding };
  await proveCollateral(input, PROVING_ARTIFACTS);
  const proveMs: number[] = [];
  const verifyMs: number[] = [];
  for (let i = 0; i < PROOF_RUNS; i++) {
    const t0 = performance.now();
    const { proof, publicSignals } = await proveCollateral(input, PROVING_ARTIFACTS);
    const t1 = performance.now();
    if (!(await verifyCollateralProof(VERIFICATION_KEY, proof, publicSignals))) throw new Error("proof did not verify");
    proveMs.push(t1 - t0);
    verifyMs.push(performance.now() - t1);
  }

  const median = (v: number[]) => summarize(v).median;
  const results = {
    measuredAt: new Date().toISOString(),
    machine: "2 cores; timings are noisy, medians reported",
    gas: {
      recordDepositEmptyTree: depositEmpty,
      recordDepositAt1024Leaves: {
        median: median(depositFull),
        min: Math.min(...depositFull),
        max: Math.max(...depositFull),
      },
      mintFirstRecipientAndRelayer: Number(mintFirst.receipt.gasUsed),
      mintTypical: Number(mintTypical.receipt.gasUsed),
      /** The typical mint leaving change (queued, not inserted). */
      mintTypicalWithChange: Number(mintTypicalWithChange.receipt.gasUsed),
      /** The same mint without change, just after it: the baseline of the one above. */
      mintTypicalWithoutChange: Number(mintTypicalAgain.receipt.gasUsed),
      mintWithoutFee: Number(mintNoFee.receipt.gasUsed),
      redeem: redeemGas,
      redeemWithPermit: redeemPermitGas,
      completePayout: completeGas,
      failPayout: failGas,
      redirectFailedPayout: redirectGas,
      castVote: castVoteGas,
      /** A top-up leaving change, sent alone (topUp), at the state of the batches below. */
      topUpWithChange: topUpWithChangeGas,
      /** Gas per top-up of a spendBatch of 1, 4, 8 and 16 top-ups leaving change. */
      spendBatchPerTopUp: spendBatchGas,
      /** Gas per mint of a mintBatch of 1, 4, 8 and 16 relayed mints. */
      mintBatchPerMint: batchGas,
      /** Gas per leaf of recordDeposits with 1, 4, 8 and 16 leaves, after the batches of mints. */
      recordDepositsPerLeaf: leafBatchGas,
      /** Gas per leaf of queueLeaves while the checkpoint ring is written the first time (then filled, before the figures below). */
      queueLeafFirstRound: ringFirstRound.queuedPerLeaf,
      /** The tree's size once the ring was filled and its leaves inserted: where the figures below are measured. */
      treeSizeAfterRing: ringFirstRound.at,
      /** Gas per leaf of insertPendingLeaves taking 1, 4, 8 and 16 queued change leaves (the mints' change). */
      insertPendingPerLeaf: insertBatchGas,
      /**
       * What a mint with change costs in all, in a mintBatch of 8 whose change is inserted in
       * batches of 16: the mint's own share plus one leaf's share of that insertion.
       */
      mintBatchOf8WithChangeAndInsertion: batchGas.withChange!["8"]! + insertBatchGas["16"]!,
      positions: {
        /** A single mint that queues its change leaf (no insertion). */
        mintWithChangeLeaf: withChange.gas,
        /** That change leaf inserted alone. */
        insertOneQueuedLeaf: insertOneGas,
        topUp: topUpGas,
        withdrawNote: withdrawNoteGas,
        repay: repayGas,
        repayWithSig: repayWithSigGas,
        withdrawCollateralWithSigToAddress: withdrawToAddressGas,
        withdrawCollateralWithSigToNote: withdrawToNoteGas,
        closeWithSigToAddress: closeToAddressGas,
        closeWithSigToNote: closeToNoteGas,
        liquidateToAddress: liquidateGas,
        liquidateWithSigToAddress: liquidateWithSigGas,
        redeemAcrossPositions: redeemFromPositionsGas,
        mintWithoutFeeToHolder: risky.gas,
        mintWithoutFeeToHolderFirstAfterRedemption: mintAfterRedemption.gas,
        redistributeToAddress: redistributeGas,
        redeemThatFirstSpreadsAPosition: redeemSpreadingGas,
      },
      /**
       * Whole transactions through testkit's DirectMinter that land in a bucket of the ratio order
       * holding no, 500 or 5,000 positions: a mint, a repayment and a top-up with their hints, and
       * the mint without one. The real minter adds the same note spend and token moves to each.
       */
      crowdedBucket: Object.fromEntries(
        Object.entries(crowdedBucket).map(([size, g]) => [
          size,
          {
            mint: Number(g.mint),
            repay: Number(g.repay),
            topUp: Number(g.topUp),
            // Not measured past UNHINTED_CROWD_MAX: over the per-transaction gas cap.
            mintUnhinted: g.mintUnhinted === undefined ? null : Number(g.mintUnhinted),
          },
        ]),
      ),
    },
    circuit: { constraints: readManifest().constraints, publicSignals: readManifest().publicSignals.length },
    proveMs: summarize(proveMs),
    verifyMs: summarize(verifyMs),
    targets: TARGETS,
  };
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "contracts.json"), JSON.stringify(results, null, 2) + "\n");

  const rows: [string, string, string][] = [
    ["record deposit, empty tree (gas)", String(depositEmpty), ""],
    [`record deposit, ${TREE_LEAVES}+ leaves (gas, median)`, String(results.gas.recordDepositAt1024Leaves.median), ""],
    [
      "mint, first for recipient and relayer (gas)",
      String(results.gas.mintFirstRecipientAndRelayer),
      `<= ${TARGETS.mintGas}`,
    ],
    ["mint, relayer already holds ZSD (gas)", String(results.gas.mintTypical), `<= ${TARGETS.mintGas}`],
    [
      "a typical mint leaving change, queued (gas)",
      `${results.gas.mintTypicalWithChange} (${results.gas.mintTypicalWithoutChange} without change)`,
      "<= 400000",
    ],
    ["mint without relayer fee (gas)", String(results.gas.mintWithoutFee), `<= ${TARGETS.mintGas}`],
    ["redeem (gas)", String(redeemGas), ""],
    ["redeem with permit (gas)", String(redeemPermitGas), ""],
    ["complete redemption (gas)", String(completeGas), ""],
    ["fail redemption (gas)", String(failGas), ""],
    ["redirect a failed payout to an address (gas)", String(redirectGas), ""],
    ["cast vote (gas)", String(castVoteGas), ""],
    ...batchSizes.flatMap((size): [string, string, string][] => [
      [`mintBatch of ${size}, with change, per mint (gas)`, String(batchGas.withChange![String(size)]), ""],
      [`mintBatch of ${size}, no change, per mint (gas)`, String(batchGas.withoutChange![String(size)]), ""],
    ]),
    ["top up leaving change, alone (gas)", String(topUpWithChangeGas), ""],
    ...batchSizes.map((size): [string, string, string] => [
      `spendBatch of ${size} top-up${size === 1 ? "" : "s"} leaving change, per top-up (gas)`,
      String(spendBatchGas[String(size)]),
      "",
    ]),
    ...batchSizes.map((size): [string, string, string] => [
      `insert ${size} queued leaf${size === 1 ? "" : "s"}, per leaf (gas)`,
      String(insertBatchGas[String(size)]),
      "",
    ]),
    [
      "mint with change in a batch of 8, plus its leaf's share of an insertion of 16 (gas)",
      String(results.gas.mintBatchOf8WithChangeAndInsertion),
      "<= 260000",
    ],
    ...batchSizes.map((size): [string, string, string] => [
      `record ${size} deposit${size === 1 ? "" : "s"} in a batch, per leaf (gas)`,
      String(leafBatchGas[String(size)]),
      "",
    ]),
    ["mint opening a position with change, queued (gas)", String(withChange.gas), ""],
    ["its change leaf inserted alone (gas)", String(insertOneGas), ""],
    [
      "queue a leaf while the checkpoint ring is new (gas, then filled)",
      String(ringFirstRound.queuedPerLeaf),
      `tree of ${ringFirstRound.at} after`,
    ],
    ["top up a position (gas)", String(topUpGas), ""],
    ["withdraw a note to a Zcash address (gas)", String(withdrawNoteGas), ""],
    ["repay (gas)", String(repayGas), ""],
    ["repay with signature (gas)", String(repayWithSigGas), ""],
    ["withdraw collateral, signed, to an address (gas)", String(withdrawToAddressGas), ""],
    ["withdraw collateral, signed, to a note (gas)", String(withdrawToNoteGas), ""],
    ["close, signed, to an address (gas)", String(closeToAddressGas), ""],
    ["close, signed, to a note (gas)", String(closeToNoteGas), ""],
    ["liquidate, to an address (gas)", String(liquidateGas), ""],
    ["liquidate, signed, to an address (gas)", String(liquidateWithSigGas), ""],
    ["redeem across positions, later (gas)", String(redeemFromPositionsGas), ""],
    ["mint without fee to a holder (gas)", String(risky.gas), ""],
    ["the same, first write after a redemption (gas)", String(mintAfterRedemption.gas), ""],
    ["redistribute a position under 100%, to an address (gas)", String(redistributeGas), ""],
    ["redeem that first spreads a position under 100% (gas)", String(redeemSpreadingGas), ""],
    ["circuit constraints", String(results.circuit.constraints), "<= 8192 (2^13 ptau)"],
    [
      `proof generation, ${PROOF_RUNS} warm (ms)`,
      `median ${results.proveMs.median}, min ${results.proveMs.min}, max ${results.proveMs.max}`,
      `<= ${TARGETS.proofMedianMs}`,
    ],
    [
      "off-chain verification (ms)",
      `median ${results.verifyMs.median}, min ${results.verifyMs.min}, max ${results.verifyMs.max}`,
      `<= ${TARGETS.verifyMedianMs}`,
    ],
  ];
  console.log("\n" + rows.map(([a, b, c]) => `${a.padEnd(50)} ${b.padEnd(36)} ${c}`).join("\n"));
  console.log("\nwrote bench/results/contracts.json");
} finally {
  await releaseProver();
  await node.stop();
}
