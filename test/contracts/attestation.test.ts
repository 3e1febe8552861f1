// Deposits recorded by a quorum of attestors: what is signed binds the chain, the registry, the
// batch's leaves, total and turn; the set is governance's to rotate; no single key records a deposit.
import { type Hex, parseEventLogs, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { collateralRegistryAbi } from "@zsd/sdk/abis";
import { depositBatchMessage, depositBatchTypedData } from "@zsd/sdk";
import { createNote, depositLeaf, noteCommitment } from "@zsd/sdk/notes";
import { type System, ZEC, accounts, deploySystem, expectRevert, snapshots } from "../helpers/fixtures.ts";

const { custody, carol } = accounts;
const [a0, a1, a2] = accounts.attestors as [
  (typeof accounts.attestors)[0],
  (typeof accounts.attestors)[0],
  (typeof accounts.attestors)[0],
];
const byAddress = <T extends { address: string }>(list: T[]) =>
  [...list].sort((x, y) => (BigInt(x.address) < BigInt(y.address) ? -1 : 1));

function batchOf(count: number) {
  const amounts = Array.from({ length: count }, (_, i) => BigInt(i + 1) * ZEC + 7n);
  return {
    leaves: amounts.map((amount) => depositLeaf(amount, noteCommitment(createNote()))),
    total: amounts.reduce((x, y) => x + y, 0n),
  };
}

describe("CollateralRegistry attestation by quorum", () => {
  let s: System;
  beforeAll(async () => {
    s = await deploySystem();
  });
  beforeEach(snapshots(() => s));

  const send = (leaves: bigint[], total: bigint, signatures: Hex[]) =>
    s.as(custody).registry.write.recordDeposits([leaves, total, signatures]);
  const unchanged = async (size: bigint, collateral: bigint, batches: bigint) => {
    expect(await s.read.registry.read.size()).toBe(size);
    expect(await s.read.registry.read.totalCollateralZat()).toBe(collateral);
    expect(await s.read.registry.read.depositBatchCount()).toBe(batches);
  };

  it("records a batch signed by 2 of 3 attestors, sent by anyone, and counts its turn", async () => {
    const { leaves, total } = batchOf(3);
    const signatures = await s.attest(leaves, total, { signers: [a2, a0] });
    // Signatures are what record a batch: a stranger may carry them.
    const receipt = await s.receipt(await s.as(carol).registry.write.recordDeposits([leaves, total, signatures]));
    const [event] = parseEventLogs({ abi: collateralRegistryAbi, logs: receipt.logs, eventName: "DepositsRecorded" });
    expect(event!.args).toMatchObject({ firstIndex: 0n, leaves, totalZat: total, totalCollateralZat: total });
    expect(await s.read.registry.read.depositBatchCount()).toBe(1n);
    expect(await s.read.registry.read.totalDepositedZat()).toBe(total);
    // All three sign: more than the threshold is accepted.
    const next = batchOf(1);
    await s.receipt(
      await send(next.leaves, next.total, await s.attest(next.leaves, next.total, { signers: [a0, a1, a2] })),
    );
    expect(await s.read.registry.read.depositBatchCount()).toBe(2n);
  });

  it("refuses one attestor alone, a signer twice, signers out of order, a non-member and a malformed signature; nothing moves", async () => {
    const { leaves, total } = batchOf(2);
    const one = await s.attest(leaves, total, { signers: [a1] });
    await expectRevert(send(leaves, total, one), "AttestorQuorumNotMet", [1n, 2n]);
    await expectRevert(send(leaves, total, []), "AttestorQuorumNotMet", [0n, 2n]);
    // The same attestor's signature twice counts once: refused as out of order.
    await expectRevert(send(leaves, total, [one[0]!, one[0]!]), "AttestorsOutOfOrder", [1n, a1.address, a1.address]);
    const [low, high] = byAddress([a0, a2]);
    const ordered = await s.attest(leaves, total, { signers: [low!, high!] });
    await expectRevert(send(leaves, total, [ordered[1]!, ordered[0]!]), "AttestorsOutOfOrder", [
      1n,
      low!.address,
      high!.address,
    ]);
    // Carol holds no seat: her signature beside an attestor's is refused by name.
    const withCarol = await s.attest(leaves, total, { signers: [a0, carol] });
    const carolFirst = BigInt(carol.address) < BigInt(a0.address);
    await expectRevert(send(leaves, total, withCarol), "NotAttestor", [carol.address]);
    expect(carolFirst || withCarol.length === 2).toBe(true);
    // 64 bytes, or a high-s twin of a valid signature (malleated): not a signature the registry reads.
    await expectRevert(
      send(leaves, total, [ordered[0]!, ordered[1]!.slice(0, 130) as Hex]),
      "InvalidAttestorSignature",
      [1n],
    );
    const sig = ordered[1]!;
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = n - BigInt(`0x${sig.slice(66, 130)}`);
    const flippedV = sig.slice(130) === "1b" ? "1c" : "1b";
    const malleated = `${sig.slice(0, 66)}${highS.toString(16).padStart(64, "0")}${flippedV}` as Hex;
    await expectRevert(send(leaves, total, [ordered[0]!, malleated]), "InvalidAttestorSignature", [1n]);
    await unchanged(0n, 0n, 0n);
    await s.receipt(await send(leaves, total, ordered));
    await unchanged(2n, total, 1n);
  });

  it("binds the chain, the registry, the leaves, the total and the batch's turn: no replay, no reorder, no other chain", async () => {
    const first = batchOf(1);
    const second = batchOf(2);
    const chainId = s.chainId;
    const registry = s.read.registry.address;
    const signAs = (message: ReturnType<typeof depositBatchMessage>, domain: { chainId: number; registry: Hex }) =>
      Promise.all(
        byAddress([a0, a1]).map((signer) =>
          signer.signTypedData({ ...depositBatchTypedData(domain.chainId, domain.registry), message }),
        ),
      );
    // Another chain, another registry: each recovers to someone else.
    const m0 = depositBatchMessage(first.leaves, first.total, 0n);
    await expectRevert(send(first.leaves, first.total, await signAs(m0, { chainId: 1, registry })), "NotAttestor");
    await expectRevert(
      send(first.leaves, first.total, await signAs(m0, { chainId, registry: s.read.positions.address })),
      "NotAttestor",
    );
    // A total or a leaf other than signed.
    const good0 = await signAs(m0, { chainId, registry });
    await expectRevert(send(first.leaves, first.total + 1n, good0), "NotAttestor");
    await expectRevert(send(second.leaves.slice(0, 1), first.total, good0), "NotAttestor");
    // Signed for turn 1, sent at turn 0: refused (reordered); then each in its turn.
    const good1 = await signAs(depositBatchMessage(second.leaves, second.total, 1n), { chainId, registry });
    await expectRevert(send(second.leaves, second.total, good1), "NotAttestor");
    await unchanged(0n, 0n, 0n);
    await s.receipt(await send(first.leaves, first.total, good0));
    // Replayed: turn 0 is over, the same signatures recover to strangers now.
    await expectRevert(send(first.leaves, first.total, good0), "NotAttestor");
    await s.receipt(await send(second.leaves, second.total, good1));
    await unchanged(3n, first.total + second.total, 2n);
  });

  it("rotates the set under governance: a removed attestor's signature no longer counts, a new one's does, M changes", async () => {
    const fresh = privateKeyToAccount(toHex(0xa77e5701n, { size: 32 }));
    const before = await s.read.registry.read.attestorSetId();
    await s.governRegistry({ functionName: "setAttestors", args: [[a0.address, a1.address, fresh.address], 2n] });
    expect(await s.read.registry.read.attestorSetId()).toBe(before + 1n);
    expect(await s.read.registry.read.isAttestor([a2.address])).toBe(false);
    expect(await s.read.registry.read.isAttestor([fresh.address])).toBe(true);
    const { leaves, total } = batchOf(1);
    await expectRevert(send(leaves, total, await s.attest(leaves, total, { signers: [a0, a2] })), "NotAttestor", [
      a2.address,
    ]);
    await s.receipt(await send(leaves, total, await s.attest(leaves, total, { signers: [a0, fresh] })));
    // Three of three now: two signatures are not enough, even of members.
    await s.governRegistry({ functionName: "setAttestors", args: [[a0.address, a1.address, fresh.address], 3n] });
    const next = batchOf(1);
    await expectRevert(
      send(next.leaves, next.total, await s.attest(next.leaves, next.total, { signers: [a0, a1] })),
      "AttestorQuorumNotMet",
      [2n, 3n],
    );
    await s.receipt(
      await send(next.leaves, next.total, await s.attest(next.leaves, next.total, { signers: [a0, a1, fresh] })),
    );
  });

  it("refuses a set that one key could rule, an empty or oversized set, a zero or repeated member; only governance sets it", async () => {
    const set = accounts.attestors.map((a) => a.address);
    const govern = (members: Hex[], threshold: bigint) =>
      s.governRegistry({ functionName: "setAttestors", args: [members, threshold] });
    await expectRevert(govern(set, 1n), "InvalidAttestorSet", [3n, 1n]);
    await expectRevert(govern(set, 4n), "InvalidAttestorSet", [3n, 4n]);
    await expectRevert(govern([], 0n), "InvalidAttestorSet", [0n, 0n]);
    const seventeen = Array.from(
      { length: 17 },
      (_, i) => privateKeyToAccount(toHex(BigInt(i + 1), { size: 32 })).address,
    );
    await expectRevert(govern(seventeen, 2n), "InvalidAttestorSet", [17n, 2n]);
    await expectRevert(govern([set[0]!, `0x${"00".repeat(20)}`], 2n), "InvalidAttestor", [`0x${"00".repeat(20)}`]);
    await expectRevert(govern([set[0]!, set[1]!, set[0]!], 2n), "InvalidAttestor", [set[0]]);
    await expectRevert(s.as(a0).registry.write.setAttestors([set, 2n]), "AccessControlUnauthorizedAccount");
    expect(await s.read.registry.read.attestors()).toEqual(set);
    expect(await s.read.registry.read.attestorSetId()).toBe(1n);
  });

  it("costs at most about 10k gas per signature: a third signature adds under 10,000", async () => {
    const { leaves, total } = batchOf(1);
    // The same batch into the same tree, with two signatures and then (reverted to before) three.
    const gasWith = async (signers: (typeof accounts.attestors)[number][]) => {
      const id = await s.snapshot();
      const receipt = await s.receipt(await send(leaves, total, await s.attest(leaves, total, { signers })));
      await s.revert(id);
      return receipt.gasUsed;
    };
    const two = await gasWith([a0, a1]);
    const three = await gasWith([a0, a1, a2]);
    expect(three - two).toBeGreaterThan(3_000n);
    expect(three - two).toBeLessThan(10_000n);
  });
});
