// Shielded receivers that no wallet can pay: a Sapling
// diversifier without a base point, a Sapling pk_d outside Jubjub's prime-order
// subgroup, an Orchard pk_d that is not a Pallas point. What is payable is known
// here by construction ([k]G, with or without a torsion point added) or from
// noble's own GroupHash^J (jubjub_groupHash), apart from the SDK's code.
import { jubjub, jubjub_groupHash, pallas } from "@noble/curves/misc";
import { bech32 } from "bech32";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ZcashAddressError,
  encodeSaplingAddress,
  encodeUnifiedAddress,
  parseShieldedAddress,
  type ZcashNetwork,
} from "@zsd/sdk/zcash";

const hex = (s: string) => Uint8Array.from(Buffer.from(s, "hex"));
const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
/** Little-endian, 32 bytes: how repr_J and repr_P write a coordinate. */
function le(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let k = 0, v = value; k < 32; k++, v >>= 8n) bytes[k] = Number(v & 0xffn);
  return bytes;
}
function withSignBit(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  copy[31]! |= 0x80;
  return copy;
}

function refusal(address: string, network: ZcashNetwork = "mainnet"): { code: string; message: string } {
  try {
    parseShieldedAddress(address, network);
  } catch (error) {
    if (error instanceof ZcashAddressError) return { code: error.code, message: error.message };
    throw error;
  }
  return { code: "accepted", message: "" };
}
const code = (address: string, network: ZcashNetwork = "mainnet") => refusal(address, network).code;

// Published addresses (see zcash-address.test.ts): a Sapling one and an Orchard-only unified one.
const SAPLING_MAINNET = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya";
const UNIFIED_ORCHARD =
  "u1k9eh52jx5q4y8lw6x208lsep4t6yzwk7mdwz9e6239qywjkqzdcd3al3d64zwnqx296p3klxnash5w2e0elg39qrydxx0s0qz5m2gnt0";
const SAPLING_RECEIVER = Uint8Array.from(bech32.fromWords(bech32.decode(SAPLING_MAINNET, 90).words));
const ORCHARD_RECEIVER = (() => {
  const parsed = parseShieldedAddress(UNIFIED_ORCHARD, "mainnet");
  if (parsed.kind !== "unified") throw new Error("expected a unified address");
  return parsed.items.find((i) => i.kind === "orchard")!.data;
})();
const saplingAddress = (d: Uint8Array, pkD: Uint8Array) => encodeSaplingAddress(concat(d, pkD), "mainnet");
const orchardAddress = (pkD: Uint8Array) =>
  encodeUnifiedAddress([{ typecode: 3, data: concat(ORCHARD_RECEIVER.subarray(0, 11), pkD) }], "mainnet");

// Jubjub: q_J the base field, r_J the prime subgroup's order; G lies in that subgroup.
const Jubjub = jubjub.ExtendedPoint;
const Q_J = jubjub.CURVE.Fp.ORDER;
const R_J = jubjub.CURVE.n;
const G = Jubjub.BASE;
const GD = new TextEncoder().encode("Zcash_gd");

function hasBase(d: Uint8Array): boolean {
  try {
    jubjub_groupHash(d, GD);
    return true;
  } catch {
    return false;
  }
}
const diversifier = (i: number) => Uint8Array.of(i & 0xff, i >> 8, 0, 0, 0, 0, 0, 0, 0, 0, 0);
/** The first diversifiers with and without a base point. */
const [GOOD_D, BAD_D] = (() => {
  const found: Uint8Array[][] = [[], []];
  for (let i = 0; found[0]!.length < 4 || found[1]!.length < 4; i++)
    found[hasBase(diversifier(i)) ? 0 : 1]!.push(diversifier(i));
  return found as [Uint8Array[], Uint8Array[]];
})();
/** [r_J]P clears the prime-order part: for a point off the subgroup, a torsion point. */
const TORSION8 = (() => {
  for (let y = 2n; ; y++) {
    let p;
    try {
      p = Jubjub.fromHex(le(y));
    } catch {
      continue;
    }
    const t = p.multiply(R_J - 1n).add(p);
    if (!t.multiplyUnsafe(4n).equals(Jubjub.ZERO)) return t;
  }
})();
/** The encoding of a y that no point of Jubjub has. */
const OFF_CURVE = (() => {
  for (let y = 2n; ; y++) {
    try {
      Jubjub.fromHex(le(y));
    } catch {
      return le(y);
    }
  }
})();

// Pallas: y² = x³ + 5 over F_p, of prime order; repr_P puts ỹ in the top bit.
const P_P = pallas.CURVE.Fp.ORDER;
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  for (let b = base % modulus, e = exponent; e > 0n; e >>= 1n, b = (b * b) % modulus)
    if (e & 1n) result = (result * b) % modulus;
  return result;
}
/** Euler's criterion: x³ + 5 has a square root in F_p (it is never 0: Pallas has no point of order 2). */
const onPallas = (x: bigint) => modPow((x * x * x + 5n) % P_P, (P_P - 1n) / 2n, P_P) === 1n;
function reprP(point: InstanceType<typeof pallas.ProjectivePoint>): Uint8Array {
  const { x, y } = point.toAffine();
  const bytes = le(x);
  bytes[31]! |= Number(y & 1n) << 7;
  return bytes;
}

describe("Sapling receivers no wallet can pay", () => {
  it("refuses a random-payload address with a valid checksum (accepted and 'paid' in the sandbox before)", () => {
    const random = encodeSaplingAddress(
      hex("036e62901db4f8abba453e1c051c206e8705a1c4d502bc88ce78c41f8c5b630430e53633ca7a1973a1aabd"),
      "testnet",
    );
    expect(random.startsWith("ztestsapling1")).toBe(true);
    expect(refusal(random, "testnet")).toEqual({
      code: "invalid_receiver",
      message: expect.stringMatching(/cannot be paid by any wallet/),
    });
    // All zeros, the simplest filler: d = 0 has a base point, but pk_d = (x, 0) has order 4.
    expect(code(encodeSaplingAddress(new Uint8Array(43), "testnet"), "testnet")).toBe("invalid_receiver");
  });

  it("refuses a valid pk_d behind a diversifier whose GroupHash is ⊥, and accepts it behind one that has a base point", () => {
    const pkD = SAPLING_RECEIVER.subarray(11);
    expect(code(SAPLING_MAINNET)).toBe("accepted");
    for (const d of GOOD_D) expect(code(saplingAddress(d, pkD))).toBe("accepted");
    for (const d of BAD_D) {
      expect(refusal(saplingAddress(d, pkD))).toEqual({
        code: "invalid_receiver",
        message: expect.stringMatching(/diversifier has no base point/),
      });
    }
    // About half of all diversifiers (§5.4.1.6); here, of the first 200.
    const bad = Array.from({ length: 200 }, (_, i) => code(saplingAddress(diversifier(i), pkD)) !== "accepted");
    expect(bad.filter(Boolean).length).toBeGreaterThan(60);
    expect(bad.filter(Boolean).length).toBeLessThan(140);
    expect(bad).toEqual(Array.from({ length: 200 }, (_, i) => !hasBase(diversifier(i))));
  });

  it("refuses a pk_d that is not on Jubjub, or not canonically encoded", () => {
    const d = SAPLING_RECEIVER.subarray(0, 11);
    expect(refusal(saplingAddress(d, OFF_CURVE))).toEqual({
      code: "invalid_receiver",
      message: expect.stringMatching(/pk_d is not a point of Jubjub's prime-order subgroup/),
    });
    // y + q_J < 2^255 names the same point as y, non-canonically (ZIP 216): refused, the canonical form accepted.
    let key = G;
    while (key.toAffine().y + Q_J >= 2n ** 255n) key = key.add(G);
    const { x, y } = key.toAffine();
    const aliased = le(y + Q_J);
    if (x & 1n) aliased[31]! |= 0x80;
    expect(code(saplingAddress(d, key.toRawBytes()))).toBe("accepted");
    expect(code(saplingAddress(d, aliased))).toBe("invalid_receiver");
    expect(code(saplingAddress(d, le(Q_J)))).toBe("invalid_receiver");
    expect(code(saplingAddress(d, le(2n ** 255n - 1n)))).toBe("invalid_receiver");
  });

  it("refuses a pk_d of small order: the identity, points of order 2, 4 and 8, and x = 0 with the sign bit set", () => {
    const d = SAPLING_RECEIVER.subarray(0, 11);
    const small = [
      Jubjub.ZERO.toRawBytes(),
      le(1n),
      withSignBit(le(1n)),
      le(Q_J - 1n),
      TORSION8.toRawBytes(),
      TORSION8.negate().toRawBytes(),
      TORSION8.double().toRawBytes(),
      TORSION8.double().double().toRawBytes(),
    ];
    for (const pkD of small)
      expect(code(saplingAddress(d, pkD)), Buffer.from(pkD).toString("hex")).toBe("invalid_receiver");
  });

  it("refuses a pk_d on the curve but off the prime-order subgroup (a valid key plus a torsion point)", () => {
    const d = SAPLING_RECEIVER.subarray(0, 11);
    const key = G.multiply(123_456_789n);
    expect(code(saplingAddress(d, key.toRawBytes()))).toBe("accepted");
    for (let t = TORSION8, k = 1; k < 8; t = t.add(TORSION8), k++) {
      expect(code(saplingAddress(d, key.add(t).toRawBytes())), `+ ${k}T`).toBe("invalid_receiver");
    }
  });

  it("accepts exactly the receivers a wallet can pay, for any bytes (differential)", () => {
    const receiver = fc.oneof(
      // Any bytes: payable when noble finds a base point and pk_d decodes into the subgroup.
      fc.uint8Array({ minLength: 43, maxLength: 43 }).map((data) => {
        let inSubgroup = false;
        try {
          const p = Jubjub.fromHex(data.subarray(11));
          inSubgroup = !p.equals(Jubjub.ZERO) && p.isTorsionFree();
        } catch {
          inSubgroup = false;
        }
        return { data, payable: hasBase(data.subarray(0, 11)) && inSubgroup };
      }),
      // [k]G, with j·T added: in the subgroup exactly when j = 0 (mod 8).
      fc
        .tuple(fc.uint8Array({ minLength: 11, maxLength: 11 }), fc.bigInt(1n, R_J - 1n), fc.integer({ min: 0, max: 7 }))
        .map(([d, k, j]) => {
          const point = j === 0 ? G.multiply(k) : G.multiply(k).add(TORSION8.multiplyUnsafe(BigInt(j)));
          return { data: concat(d, point.toRawBytes()), payable: hasBase(d) && j === 0 };
        }),
    );
    fc.assert(
      fc.property(receiver, fc.constantFrom<ZcashNetwork>("mainnet", "testnet"), ({ data, payable }, network) => {
        const address = encodeSaplingAddress(data, network);
        if (payable)
          expect(parseShieldedAddress(address, network)).toEqual({ kind: "sapling", network, address, data });
        else expect(code(address, network)).toBe("invalid_receiver");
      }),
      { seed: 7, numRuns: 300 },
    );
  });
});

describe("unified addresses' receivers no wallet can pay", () => {
  it("refuses an Orchard pk_d that is not a Pallas point, the identity or a non-canonical x", () => {
    expect(code(UNIFIED_ORCHARD)).toBe("accepted");
    expect(code(orchardAddress(ORCHARD_RECEIVER.subarray(11)))).toBe("accepted");
    // The other square root of the same x: still a point.
    expect(code(orchardAddress(withSignBit(ORCHARD_RECEIVER.subarray(11))))).toBe("accepted");
    let offCurve = 1n;
    while (onPallas(offCurve)) offCurve++;
    for (const pkD of [le(offCurve), le(0n), withSignBit(le(0n)), le(P_P), le(P_P + 1n), le(2n ** 255n - 1n)]) {
      expect(refusal(orchardAddress(pkD)), Buffer.from(pkD).toString("hex")).toEqual({
        code: "invalid_receiver",
        message: expect.stringMatching(/^This unified address cannot be paid by any wallet: its Orchard pk_d/),
      });
    }
  });

  it("accepts both signs of y for a Pallas point, and any Orchard pk_d exactly when it is one (differential)", () => {
    const G_P = pallas.ProjectivePoint.BASE;
    const pkD = fc.oneof(
      fc.bigInt(1n, pallas.CURVE.n - 1n).map((k) => ({ bytes: reprP(G_P.multiply(k)), payable: true })),
      fc.bigInt(1n, pallas.CURVE.n - 1n).map((k) => ({ bytes: withSignBit(reprP(G_P.multiply(k))), payable: true })),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => {
        const x = BigInt(`0x${Buffer.from(bytes).reverse().toString("hex")}`) & ((1n << 255n) - 1n);
        return { bytes, payable: x < P_P && x !== 0n && onPallas(x) };
      }),
    );
    fc.assert(
      fc.property(pkD, ({ bytes, payable }) => {
        expect(code(orchardAddress(bytes))).toBe(payable ? "accepted" : "invalid_receiver");
      }),
      { seed: 8, numRuns: 300 },
    );
  });

  it("refuses a unified address whole when any of its shielded receivers is unpayable, as a wallet does", () => {
    const sapling = { typecode: 2, data: SAPLING_RECEIVER };
    const orchard = { typecode: 3, data: ORCHARD_RECEIVER };
    const p2pkh = { typecode: 0, data: new Uint8Array(20).fill(1) };
    const badSapling = [
      { typecode: 2, data: concat(BAD_D[0]!, SAPLING_RECEIVER.subarray(11)) },
      { typecode: 2, data: concat(SAPLING_RECEIVER.subarray(0, 11), TORSION8.toRawBytes()) },
      { typecode: 2, data: concat(SAPLING_RECEIVER.subarray(0, 11), OFF_CURVE) },
    ];
    const badOrchard = { typecode: 3, data: concat(ORCHARD_RECEIVER.subarray(0, 11), le(0n)) };
    expect(code(encodeUnifiedAddress([p2pkh, sapling, orchard], "mainnet"))).toBe("accepted");
    for (const bad of badSapling) {
      expect(refusal(encodeUnifiedAddress([p2pkh, bad, orchard], "mainnet"))).toEqual({
        code: "invalid_receiver",
        message: expect.stringMatching(/^This unified address cannot be paid by any wallet: its Sapling /),
      });
      expect(code(encodeUnifiedAddress([bad], "testnet"), "testnet")).toBe("invalid_receiver");
    }
    expect(code(encodeUnifiedAddress([p2pkh, sapling, badOrchard], "mainnet"))).toBe("invalid_receiver");
    // Receivers of unknown types are not looked into (ZIP 316: ignored), nor transparent ones.
    expect(code(encodeUnifiedAddress([sapling, { typecode: 9, data: new Uint8Array(43) }], "mainnet"))).toBe(
      "accepted",
    );
    // The cheaper refusals come first: another network's address says so, whatever its receivers.
    expect(code(encodeUnifiedAddress([badSapling[0]!], "testnet"), "mainnet")).toBe("wrong_network");
  });

  it("uses a base point G that is in Jubjub's prime-order subgroup (else the constructions above prove nothing)", () => {
    expect(G.isTorsionFree() && !G.equals(Jubjub.ZERO)).toBe(true);
    expect(TORSION8.equals(Jubjub.ZERO) || TORSION8.isTorsionFree()).toBe(false);
    expect(TORSION8.multiplyUnsafe(8n).equals(Jubjub.ZERO)).toBe(true);
  });
});
