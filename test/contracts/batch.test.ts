// mintBatch and the batch Groth16 check. Four proofs made
// once in beforeAll serve every test: each starts from the same snapshot, so no
// nullifier is spent twice across tests.
import { type Hex, concatHex, getContract, numberToHex, parseEventLogs, sliceHex, zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  collateralRegistryAbi,
  groth16BatchVerifierAbi,
  groth16VerifierAbi,
  positionManagerAbi,
  stableMinterAbi,
} from "@zsd/sdk/abis";
import { type Note, changeNote, createNote, releaseProver } from "@zsd/sdk/notes";
import {
  type System,
  VERIFICATION_KEY,
  ZEC,
  ZSD,
  accounts,
  deploySystem,
  expectRevert,
  snapshots,
} from "../helpers/fixtures.ts";

const { alice, bob, carol, relayer } = accounts;
const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
type Point = readonly [bigint, bigint];
type Proof = {
  a: readonly [bigint, bigint];
  b: readonly [readonly [bigint, bigint], readonly [bigint, bigint]];
  c: Point;
};
type Proved = Awaited<ReturnType<System["prove"]>>;

const flat = (p: Proof) => [p.a[0], p.a[1], p.b[0][0], p.b[0][1], p.b[1][0], p.b[1][1], p.c[0], p.c[1]] as const;

/** A deterministic stream of numbers in [0, 1) (mulberry32), so a failing draw can be replayed. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("mintBatch and the batch proof check", () => {
  let s: System;
  const items: Proved[] = [];
  let notes: Note[] = [];
  let signals: (readonly [bigint, bigint, bigint, bigint, bigint])[] = [];

  // The EVM's own curve arithmetic (precompiles 0x06, 0x07, 0x08), through eth_call.
  const precompile = async (address: Hex, data: Hex) => (await s.publicClient.call({ to: address, data })).data ?? "0x";
  const word = (v: bigint) => numberToHex(v, { size: 32 });
  const point = (data: Hex): Point => [BigInt(sliceHex(data, 0, 32)), BigInt(sliceHex(data, 32, 64))];
  const ecAdd = async (p: Point, q: Point) =>
    point(await precompile("0x0000000000000000000000000000000000000006", concatHex([p, q].flat().map(word))));
  const ecMul = async (p: Point, k: bigint) =>
    point(await precompile("0x0000000000000000000000000000000000000007", concatHex([...p, k].map(word))));

  const vk = VERIFICATION_KEY as {
    vk_alpha_1: string[];
    vk_beta_2: string[][];
    vk_gamma_2: string[][];
    vk_delta_2: string[][];
    IC: string[][];
  };
  const g1 = (p: string[]): Point => [BigInt(p[0]!), BigInt(p[1]!)];
  const g2 = (p: string[][]) => [p[0]![1]!, p[0]![0]!, p[1]![1]!, p[1]![0]!].map(BigInt);

  /** The check a batch verifier with every coefficient 1 would make: Π e(−Aᵢ, Bᵢ)·e(N·α, β)·e(Σ vk(sᵢ), γ)·e(Σ Cᵢ, δ) = 1. */
  async function naiveBatchHolds(proofs: Proof[], batchSignals: (readonly bigint[])[]) {
    let vkSum: Point = [0n, 0n];
    let cSum: Point = [0n, 0n];
    const words: bigint[] = [];
    for (const [i, p] of proofs.entries()) {
      let x = g1(vk.IC[0]!);
      for (const [j, v] of batchSignals[i]!.entries()) x = await ecAdd(x, await ecMul(g1(vk.IC[j + 1]!), v));
      vkSum = await ecAdd(vkSum, x);
      cSum = await ecAdd(cSum, p.c);
      words.push(p.a[0], (Q - p.a[1]) % Q, p.b[0][0], p.b[0][1], p.b[1][0], p.b[1][1]);
    }
    words.push(...(await ecMul(g1(vk.vk_alpha_1), BigInt(proofs.length))), ...g2(vk.vk_beta_2));
    words.push(...vkSum, ...g2(vk.vk_gamma_2), ...cSum, ...g2(vk.vk_delta_2));
    const out = await precompile("0x0000000000000000000000000000000000000008", concatHex(words.map(word)));
    return BigInt(out) === 1n;
  }

  const batchVerifier = () =>
    getContract({
      address: s.deployment.contracts.Groth16BatchVerifier.address,
      abi: groth16BatchVerifierAbi,
      client: s.publicClient,
    });
  const singleVerifier = () =>
    getContract({
      address: s.deployment.contracts.Groth16Verifier.address,
      abi: groth16VerifierAbi,
      client: s.publicClient,
    });
  const send = (proofs: Proof[], requests: Proved["request"][]) =>
    s.as(relayer).minter.write.mintBatch([proofs, requests]);

  beforeAll(async () => {
    s = await deploySystem();
    // Two mints leave a change note (a floor under the deposit), two do not; two pay the relayer a fee.
    const plans = [
      { amountZat: 4n * ZEC, collateralFloorZat: 3n * ZEC, mintAmount: 90n * ZSD, recipient: alice.address, fee: ZSD },
      { amountZat: 5n * ZEC, mintAmount: 150n * ZSD, recipient: bob.address },
      { amountZat: 6n * ZEC + 7n, collateralFloorZat: 5n * ZEC, mintAmount: 100n * ZSD, recipient: carol.address },
      { amountZat: 3n * ZEC, mintAmount: 60n * ZSD, recipient: alice.address, fee: 2n * ZSD },
    ];
    notes = plans.map(() => createNote());
    for (const [i, plan] of plans.entries()) await s.deposit(notes[i]!, plan.amountZat);
    for (const [i, plan] of plans.entries()) {
      items.push(await s.prove({ ...plan, note: notes[i]!, relayer: plan.fee ? relayer.address : undefined }));
    }
    signals = await Promise.all(
      items.map(async ({ request: r }) => {
        const binding = await s.read.minter.read.mintBinding([r.recipient, r.relayer, r.fee, r.mintAmount, r.owner]);
        return [r.changeLeaf, r.root, r.nullifierHash, r.collateralFloorZat, binding] as const;
      }),
    );
  }, 60_000);
  beforeEach(snapshots(() => s));
  afterAll(releaseProver);

  it("mints every item as a single mint would: its own position, events, nullifier and fee", async () => {
    const supplyBefore = await s.read.token.read.totalSupply();
    const tree = await s.depositTree();
    const receipt = await s.receipt(
      await send(
        items.map((i) => i.proof),
        items.map((i) => i.request),
      ),
    );
    const minted = parseEventLogs({ abi: stableMinterAbi, logs: receipt.logs, eventName: "Minted" });
    const opened = parseEventLogs({ abi: positionManagerAbi, logs: receipt.logs, eventName: "PositionOpened" });
    expect(minted.map((e) => e.args.nullifierHash)).toEqual(items.map((i) => i.request.nullifierHash));
    expect(opened.map((e) => [e.args.owner, e.args.collateralZat, e.args.debt])).toEqual(
      items.map(({ request: r }) => [r.owner, r.collateralFloorZat, r.mintAmount]),
    );
    const first = opened[0]!.args.positionId;
    expect(opened.map((e) => e.args.positionId)).toEqual([first, first + 1n, first + 2n, first + 3n]);
    for (const { request: r } of items) {
      expect(await s.read.minter.read.isSpent([r.nullifierHash])).toBe(true);
    }
    expect(await s.read.token.read.balanceOf([relayer.address])).toBe(3n * ZSD);
    expect(await s.read.token.read.balanceOf([alice.address])).toBe(89n * ZSD + 58n * ZSD);
    expect(await s.read.token.read.totalSupply()).toBe(supplyBefore + 400n * ZSD);
    expect(await s.read.positions.read.totalDebt()).toBe(400n * ZSD);
    // The change leaves of items 0 and 2 are queued together, in item order: not in the tree
    // until someone inserts them (one walk, one new root), then spendable.
    const events = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs });
    expect(events.map((e) => e.eventName)).toEqual([
      "NoteSpent",
      "NoteSpent",
      "NoteSpent",
      "NoteSpent",
      "LeafQueued",
      "LeafQueued",
    ]);
    const changeLeaves = [items[0]!.request.changeLeaf, items[2]!.request.changeLeaf];
    expect(events.slice(4).map((e) => (e.args as { leaf: bigint }).leaf)).toEqual(changeLeaves);
    expect(await s.read.registry.read.root()).toBe(tree.root);
    expect(await s.pendingLeaves()).toEqual(changeLeaves);
    const inserted = parseEventLogs({
      abi: collateralRegistryAbi,
      logs: (await s.insertPending())!.logs,
      eventName: "PendingLeavesInserted",
    });
    tree.insert(changeLeaves[0]!);
    tree.insert(changeLeaves[1]!);
    expect(inserted[0]!.args).toEqual({ firstIndex: 4n, leaves: changeLeaves, consumed: 2n, root: tree.root });
    expect(await s.read.registry.read.root()).toBe(tree.root);
    const change = await s.prove({
      note: changeNote(notes[2]!),
      amountZat: ZEC + 7n,
      mintAmount: 20n * ZSD,
      recipient: bob.address,
    });
    expect(change.request.root).toBe(tree.root);
    await s.receipt(await s.as(relayer).minter.write.mint([change.proof, change.request]));
    expect(await s.read.token.read.balanceOf([bob.address])).toBe(170n * ZSD);
  });

  it("refuses a batch with one invalid proof, wherever it stands", async () => {
    for (let bad = 0; bad < items.length; bad++) {
      // The proof of another item: valid, but not for this item's signals.
      const proofs = items.map((item, i) => (i === bad ? items[(i + 1) % items.length]!.proof : item.proof));
      await expectRevert(
        send(
          proofs,
          items.map((i) => i.request),
        ),
        "InvalidProof",
      );
    }
    // A request changed after proving (another recipient): its binding no longer matches.
    const requests = items.map((i) => i.request);
    requests[2] = { ...requests[2]!, recipient: relayer.address };
    await expectRevert(
      send(
        items.map((i) => i.proof),
        requests,
      ),
      "InvalidProof",
    );
  });

  it("refuses two invalid proofs crafted to cancel under fixed coefficients", async () => {
    // C₀ + G and C₁ − G: each proof is wrong, their sum is not.
    const g: Point = [1n, 2n];
    const p0 = items[0]!.proof;
    const p1 = items[1]!.proof;
    const forged: Proof[] = [
      { ...p0, c: await ecAdd(p0.c, g) },
      { ...p1, c: await ecAdd(p1.c, [1n, Q - 2n]) },
    ];
    for (const [i, p] of forged.entries()) {
      expect(await singleVerifier().read.verifyProof([p.a, p.b, p.c, signals[i]!])).toBe(false);
    }
    // A batch check with coefficients anyone can predict (all 1) accepts the pair...
    expect(await naiveBatchHolds(forged, signals.slice(0, 2))).toBe(true);
    // ...this one does not, nor does the minter.
    expect(await batchVerifier().read.verifyProofs([forged.map(flat), signals.slice(0, 2)])).toBe(false);
    await expectRevert(send(forged, [items[0]!.request, items[1]!.request]), "InvalidProof");
  });

  it("refuses a replayed or reordered item", async () => {
    const proofs = items.map((i) => i.proof);
    const requests = items.map((i) => i.request);
    // The same item twice in one batch: its nullifier is spent by the first.
    await expectRevert(send([proofs[0]!, proofs[0]!], [requests[0]!, requests[0]!]), "NullifierAlreadySpent", [
      requests[0]!.nullifierHash,
    ]);
    // Proofs reordered against their requests.
    await expectRevert(send([proofs[1]!, proofs[0]!], [requests[0]!, requests[1]!]), "InvalidProof");
    // A batch that went through, sent again; and one of its items sent alone.
    await s.receipt(await send(proofs.slice(0, 2), requests.slice(0, 2)));
    await expectRevert(send(proofs.slice(0, 2), requests.slice(0, 2)), "NullifierAlreadySpent", [
      requests[0]!.nullifierHash,
    ]);
    await expectRevert(s.as(relayer).minter.write.mint([proofs[1]!, requests[1]!]), "NullifierAlreadySpent", [
      requests[1]!.nullifierHash,
    ]);
  });

  it("refuses an empty batch, one over the limit, and proofs that do not match the requests in number", async () => {
    await expectRevert(send([], []), "InvalidBatchSize", [0n, 32n]);
    const many = Array.from({ length: 33 }, () => items[0]!);
    await expectRevert(
      send(
        many.map((i) => i.proof),
        many.map((i) => i.request),
      ),
      "InvalidBatchSize",
      [33n, 32n],
    );
    await expectRevert(
      send(
        [items[0]!.proof],
        items.slice(0, 2).map((i) => i.request),
      ),
      "BatchLengthMismatch",
      [1n, 2n],
    );
  });

  it("gives the same answer as N single checks on random valid and invalid batches", async () => {
    const next = random(22);
    const pick = (n: number) => Math.floor(next() * n);
    const corruptions: ((p: Proof, sig: readonly bigint[]) => Promise<[Proof, readonly bigint[]]>)[] = [
      async (p, sig) => [p, sig],
      async (p, sig) => [{ ...p, c: await ecAdd(p.c, [1n, 2n]) }, sig],
      async (p, sig) => [{ ...p, a: await ecMul(p.a, 2n) }, sig],
      async (p, sig) => [p, sig.map((v, j) => (j === 4 ? v + 1n : v))],
      async (p, sig) => [items[(items.findIndex((i) => i.proof === p) + 1) % items.length]!.proof, sig],
    ];
    let invalidBatches = 0;
    for (let trial = 0; trial < 16; trial++) {
      const size = 1 + pick(6);
      const proofs: Proof[] = [];
      const batchSignals: (readonly bigint[])[] = [];
      for (let k = 0; k < size; k++) {
        const i = pick(items.length);
        // Valid half the time, else one of the corruptions.
        const corrupt = next() < 0.5 ? corruptions[0]! : corruptions[1 + pick(corruptions.length - 1)]!;
        const [p, sig] = await corrupt(items[i]!.proof, signals[i]!);
        proofs.push(p);
        batchSignals.push(sig);
      }
      const singles = await Promise.all(
        proofs.map((p, k) =>
          singleVerifier().read.verifyProof([p.a, p.b, p.c, batchSignals[k] as unknown as (typeof signals)[number]]),
        ),
      );
      const batch = await batchVerifier().read.verifyProofs([
        proofs.map(flat),
        batchSignals as unknown as (typeof signals)[number][],
      ]);
      expect(batch, `trial ${trial}: singles ${singles.join(",")}`).toBe(singles.every(Boolean));
      if (!batch) invalidBatches++;
    }
    // The draw covers both answers.
    expect(invalidBatches).toBeGreaterThan(0);
    expect(invalidBatches).toBeLessThan(16);
  });

  it("refuses signals outside the field and points off the curve", async () => {
    const p = items[0]!.proof;
    const sig = signals[0]!;
    const r = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
    expect(await batchVerifier().read.verifyProofs([[flat(p)], [sig]])).toBe(true);
    expect(await batchVerifier().read.verifyProofs([[flat(p)], [[sig[0], sig[1], sig[2], sig[3], sig[4] + r]]])).toBe(
      false,
    );
    expect(await batchVerifier().read.verifyProofs([[flat({ ...p, a: [p.a[0], p.a[1] + 1n] })], [sig]])).toBe(false);
    expect(await batchVerifier().read.verifyProofs([[flat({ ...p, a: [p.a[0], p.a[1] + Q] })], [sig]])).toBe(false);
    expect(await batchVerifier().read.verifyProofs([[], []])).toBe(false);
  });

  it("keeps zeroAddress out of a batch as mint does", async () => {
    const requests = items.map((i) => i.request);
    requests[3] = { ...requests[3]!, recipient: zeroAddress };
    await expectRevert(
      send(
        items.map((i) => i.proof),
        requests,
      ),
      "InvalidRecipient",
      [zeroAddress],
    );
  });
});
