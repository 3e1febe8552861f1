import { describe, expect, it } from "vitest";
import {
  DepositTree,
  MAX_ZAT,
  createNote,
  decodeNote,
  depositLeaf,
  encodeNote,
  encodeMintCall,
  noteCommitment,
  nullifierHash,
  registryLeaves,
} from "@zsd/sdk/notes";
import { decodeFunctionData } from "viem";
import { stableMinterAbi } from "@zsd/sdk/abis";

describe("notes library", () => {
  it("round-trips a note through its string form and rejects anything else", () => {
    const note = createNote();
    const encoded = encodeNote(note);
    expect(encoded).toMatch(/^zsdnote1[02-9ac-hj-np-z]{109}$/);
    expect(decodeNote(encoded)).toEqual(note);
    expect(() => decodeNote("zsdnote1xyz")).toThrow(/not a zsd note/);
    // One character changed or one dropped: the checksum refuses it.
    const typo = encoded.slice(0, 20) + (encoded[20] === "q" ? "p" : "q") + encoded.slice(21);
    expect(() => decodeNote(typo)).toThrow(/not a zsd note/);
    expect(() => decodeNote(encoded.slice(0, -1))).toThrow(/not a zsd note/);
    // The first releases' form (128 hex digits, no checksum) still reads.
    const hex = (v: bigint) => v.toString(16).padStart(64, "0");
    expect(decodeNote(`zsdnote1${hex(note.secret)}${hex(note.nullifierSecret)}`)).toEqual(note);
    expect(() => decodeNote(`zsdnote1${"0".repeat(128)}`)).toThrow(/secret must be/);
  });

  it("never repeats the note it refuses in its error (a one-character typo is nearly the secret)", () => {
    const encoded = encodeNote(createNote());
    const body = encoded.slice("zsdnote1".length);
    const typo = encoded.slice(0, 20) + (encoded[20] === "q" ? "p" : "q") + encoded.slice(21);
    const mixed = encoded.slice(0, 30).toUpperCase() + encoded.slice(30);
    for (const given of [
      typo,
      `${encoded}q`,
      mixed,
      encoded.slice(0, -1),
      `${encoded.slice(0, 60)}b${encoded.slice(61)}`,
    ]) {
      let message = "";
      try {
        decodeNote(given);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/not a zsd note/);
      // Any 12 characters of the note's data part would narrow the secret down.
      for (let i = 0; i + 12 <= body.length; i += 6) expect(message).not.toContain(body.slice(i, i + 12));
      expect(message.toLowerCase()).not.toContain(body.slice(40, 52));
    }
  });

  it("makes fresh secrets and distinct commitments, leaves and nullifiers", () => {
    const [a, b] = [createNote(), createNote()];
    expect(a.secret).not.toBe(b.secret);
    const leafA = depositLeaf(5n, noteCommitment(a));
    expect(leafA).not.toBe(depositLeaf(6n, noteCommitment(a)));
    expect(nullifierHash(a, leafA)).not.toBe(nullifierHash(b, leafA));
  });

  it("refuses amounts the circuit cannot range-check", () => {
    const commitment = noteCommitment(createNote());
    expect(() => depositLeaf(MAX_ZAT + 1n, commitment)).toThrow(/2\^64/);
    expect(() => depositLeaf(-1n, commitment)).toThrow(/2\^64/);
  });

  it("builds paths padded to the circuit depth and refuses unknown leaves", () => {
    const tree = new DepositTree([1n, 2n, 3n]);
    const path = tree.path({ index: 2 });
    expect(path.siblings).toHaveLength(20);
    expect(path.pathLength).toBe(1);
    expect(() => tree.path({ leaf: 99n })).toThrow(/not in the deposit tree/);
  });

  it("rebuilds the leaves from the registry's events: a queued leaf only once an insertion takes it", () => {
    const events = [
      { eventName: "DepositsRecorded", args: { firstIndex: 0n, leaves: [10n, 11n], totalZat: 5n, root: 1n } },
      { eventName: "LeafQueued", args: { sequence: 0n, leaf: 20n, amountZat: 0n } },
      { eventName: "LeafQueued", args: { sequence: 1n, leaf: 21n, amountZat: 0n } },
      // A released note is queued like change: its amount is public, its place comes with the insertion.
      { eventName: "LeafQueued", args: { sequence: 2n, leaf: 12n, amountZat: 3n } },
      { eventName: "DepositsRecorded", args: { firstIndex: 2n, leaves: [13n], totalZat: 5n, root: 2n } },
      // 21 was dropped (the tree held it): 20 and 12 entered, at 3 and 4.
      { eventName: "PendingLeafDropped", args: { leaf: 21n } },
      { eventName: "PendingLeavesInserted", args: { firstIndex: 3n, leaves: [20n, 12n], consumed: 3n, root: 3n } },
      // All of a run dropped: no leaf, nothing at firstIndex.
      { eventName: "PendingLeavesInserted", args: { firstIndex: 5n, leaves: [], consumed: 1n, root: 3n } },
    ];
    expect(registryLeaves(events)).toEqual([10n, 11n, 13n, 20n, 12n]);
    // Queued and never inserted: not a leaf.
    expect(registryLeaves(events.slice(0, 6))).toEqual([10n, 11n, 13n]);
    expect(() =>
      registryLeaves(events.filter((e) => e.eventName !== "DepositsRecorded" || e.args.firstIndex !== 2n)),
    ).toThrow(/leaf 2 is missing/);
  });

  it("encodes the mint call the minter decodes", () => {
    const proof = {
      a: [1n, 2n],
      b: [
        [3n, 4n],
        [5n, 6n],
      ],
      c: [7n, 8n],
    } as const;
    const request = {
      root: 9n,
      nullifierHash: 10n,
      collateralFloorZat: 11n,
      changeLeaf: 13n,
      mintAmount: 12n,
      recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      relayer: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      fee: 1n,
      owner: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
      hint: 14n,
    } as const;
    const decoded = decodeFunctionData({ abi: stableMinterAbi, data: encodeMintCall(proof, request) });
    expect(decoded.functionName).toBe("mint");
    expect(decoded.args).toEqual([proof, request]);
  });
});
