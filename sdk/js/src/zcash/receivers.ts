// Whether a shielded receiver's keys are ones a wallet can pay to. The
// address encodings carry any 43 bytes; a sender's wallet (librustzcash's
// sapling-crypto `PaymentAddress::from_bytes`, orchard's
// `Address::from_raw_address_bytes`) refuses to build an output for bytes that
// are not a diversifier and key of the right curve, so custody could never pay
// them. Section numbers are those of the Zcash Protocol Specification.
import { jubjub, pallas } from "@noble/curves/misc";
import { blake2s } from "@noble/hashes/blake2s";

const text = new TextEncoder();
/** §5.4.9.5: the URS, hashed ahead of every GroupHash^J input. */
const URS = text.encode("096b36a5804bfacef1691e173c366a47ff5ba84a44f26ddd7e8d9f79d5b42df0");
/** §5.4.1.6: DiversifyHash^Sapling(d) = GroupHash^J("Zcash_gd", d). */
const DIVERSIFY_PERSONALIZATION = text.encode("Zcash_gd");

type JubjubPoint = ReturnType<typeof jubjub.ExtendedPoint.fromHex>;

/**
 * abst_J (§5.4.9.3) as amended by ZIP 216: non-canonical encodings (y ≥ q_J,
 * or x = 0 with the sign bit set) are ⊥, which noble's strict decoding also says.
 */
function abstJ(bytes: Uint8Array): JubjubPoint | undefined {
  try {
    return jubjub.ExtendedPoint.fromHex(bytes);
  } catch {
    return undefined;
  }
}

/**
 * GroupHash^J (§5.4.9.5) is ⊥ for about half of all diversifiers (not a point,
 * or a point of small order); such a d has no g_d, so no key can be derived
 * for it. The spec's address encoding (§5.6.3.1) does not say so (zcash/zips#659),
 * but sapling-crypto refuses these addresses. noble's jubjub_groupHash computes
 * the same thing with a constant-time multiplication, ~1.7 ms slower on public data.
 */
function hasDiversifiedBase(d: Uint8Array): boolean {
  const hash = blake2s.create({ personalization: DIVERSIFY_PERSONALIZATION, dkLen: 32 }).update(URS).update(d).digest();
  const point = abstJ(hash);
  return point !== undefined && !point.clearCofactor().equals(jubjub.ExtendedPoint.ZERO);
}

/** §4.2.2, ZIP 216: pk_d ∈ KA^Sapling.PublicPrimeSubgroup, the prime-order subgroup without the identity. */
function isSaplingKey(bytes: Uint8Array): boolean {
  const point = abstJ(bytes);
  return point !== undefined && !point.equals(jubjub.ExtendedPoint.ZERO) && point.isTorsionFree();
}

/**
 * What is wrong with a Sapling receiver (§5.6.3.1: d, 11 bytes || repr_J(pk_d),
 * 32 bytes), or null if a wallet can pay it.
 */
export function saplingReceiverProblem(data: Uint8Array): string | null {
  if (!hasDiversifiedBase(data.subarray(0, 11))) {
    return "its Sapling diversifier has no base point (DiversifyHash gives ⊥)";
  }
  if (!isSaplingKey(data.subarray(11, 43))) {
    return "its Sapling pk_d is not a point of Jubjub's prime-order subgroup";
  }
  return null;
}

/**
 * The same for an Orchard receiver (§5.6.4.2: d || repr_P(pk_d)). Every d has a
 * base point (DiversifyHash^Orchard never gives ⊥, §5.4.1.6), so only pk_d can
 * be wrong: abst_P (§5.4.9.6) must give a point other than the identity
 * (KA^Orchard.Public, §5.4.5.5).
 */
export function orchardReceiverProblem(data: Uint8Array): string | null {
  const problem = "its Orchard pk_d is not a Pallas point other than the identity";
  const { Fp } = pallas.CURVE;
  const bytes = data.subarray(11, 43);
  // repr_P: x little-endian in the low 255 bits, the sign of y in the top bit.
  let x = 0n;
  for (let k = 31; k >= 0; k--) x = (x << 8n) | BigInt(k === 31 ? bytes[k]! & 0x7f : bytes[k]!);
  if (x >= Fp.ORDER) return problem;
  // All zeros is the identity; x = 0 with the sign bit would need √5, which Pallas's field lacks.
  if (x === 0n && bytes[31]! >> 7 === 0) return problem;
  try {
    Fp.sqrt(Fp.add(Fp.mul(Fp.sqr(x), x), pallas.CURVE.b));
    return null;
  } catch {
    return problem;
  }
}
