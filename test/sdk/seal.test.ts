// Sealed withdraw addresses: the envelope opens only for the
// request it was sealed for, under the key it names, and the JS and Python SDKs
// seal and open each other's envelopes.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Hex, bytesToHex, hexToBytes } from "viem";
import {
  DEV_SEAL_KEY,
  SEALED_ADDRESS_MAX_LENGTH,
  SEALED_ADDRESS_MIN_LENGTH,
  SealError,
  openSealedAddress,
  sealAddress,
  sealBytes,
  sealKeyFromSecret,
  sealedKeyId,
} from "@zsd/sdk/seal";
import { ZcashAddressError } from "@zsd/sdk/zcash";
import { ROOT } from "../../scripts/lib/paths.ts";

const SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez";
const UNIFIED_TESTNET =
  "utest1ysy5dxs0unv4svecfm6wgyw6tjfj6zf0jdr6psv23zz03k638w7ee70cspe5hh72ukn6chtppcguyhnul03agesa0dlygndqjkacmpzkt0qh7vezakr4v9x3f7fap95g3lh6du9sz77hf4zpn4uqyx66pqph9mgjr5477eqz2g75z5cf";
const context = {
  chainId: 31337,
  redemptions: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  owner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
} as const;
const other = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" as const;

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof SealError) return error.code;
    throw error;
  }
  return "opened";
}

describe("sealed addresses", () => {
  it("opens for the request it was sealed for, in the canonical form", () => {
    const sealed = sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET.toUpperCase(), "testnet");
    expect(openSealedAddress([DEV_SEAL_KEY], context, sealed)).toBe(SAPLING_TESTNET);
    expect(sealedKeyId(sealed)).toBe(1);
    // Padded: a Sapling and a Unified address seal to the same length.
    expect(hexToBytes(sealed).length).toBe(65 + 256);
    expect(hexToBytes(sealAddress(DEV_SEAL_KEY, context, UNIFIED_TESTNET, "testnet")).length).toBe(65 + 256);
    expect(
      openSealedAddress([DEV_SEAL_KEY], context, sealAddress(DEV_SEAL_KEY, context, UNIFIED_TESTNET, "testnet")),
    ).toBe(UNIFIED_TESTNET);
    // Fresh ephemeral key and nonce each time: two seals of one address are unlinkable.
    expect(sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET, "testnet")).not.toBe(sealed);
    expect(sealed.toLowerCase()).not.toContain(bytesToHex(new TextEncoder().encode("ztestsapling")).slice(2));
  });

  it("does not open for another owner, chain, contract or key, nor once tampered with", () => {
    const sealed = sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET, "testnet");
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], { ...context, owner: other }, sealed))).toBe("unreadable");
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], { ...context, chainId: 1 }, sealed))).toBe("unreadable");
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], { ...context, redemptions: other }, sealed))).toBe(
      "unreadable",
    );
    const second = sealKeyFromSecret(2, `0x${"42".repeat(32)}`);
    expect(code(() => openSealedAddress([second], context, sealed))).toBe("unknown_key");
    // The key id is bound too: relabelling an envelope for another held key fails.
    const relabelled = hexToBytes(sealed);
    relabelled[4] = 2;
    expect(
      code(() => openSealedAddress([DEV_SEAL_KEY, { ...DEV_SEAL_KEY, keyId: 2 }], context, bytesToHex(relabelled))),
    ).toBe("unreadable");
    for (const at of [5, 40, 60, hexToBytes(sealed).length - 1]) {
      const bytes = hexToBytes(sealed);
      bytes[at]! ^= 1;
      expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, bytesToHex(bytes)))).toBe("unreadable");
    }
  });

  it("refuses envelopes that are not version 1 of a valid length, and bad addresses before sealing", () => {
    const sealed = sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET, "testnet");
    const v2 = hexToBytes(sealed);
    v2[0] = 2;
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, bytesToHex(v2)))).toBe("malformed_envelope");
    const short = `0x01${"00".repeat(SEALED_ADDRESS_MIN_LENGTH - 2)}` as Hex;
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, short))).toBe("malformed_envelope");
    const long = sealBytes(DEV_SEAL_KEY, context, new Uint8Array(SEALED_ADDRESS_MAX_LENGTH - 64));
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, long))).toBe("malformed_envelope");
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, "0x0g" as Hex))).toBe("malformed_envelope");
    // A low-order ephemeral key (all zero) gives an all-zero secret: refused, not opened.
    const zero = hexToBytes(sealed);
    zero.fill(0, 5, 37);
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], context, bytesToHex(zero)))).toBe("unreadable");
    expect(() => sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET, "mainnet")).toThrow(ZcashAddressError);
    expect(() => sealAddress(DEV_SEAL_KEY, context, `${SAPLING_TESTNET.slice(0, -1)}q`, "testnet")).toThrow(
      ZcashAddressError,
    );
    // Not an address at all, sealed on purpose (what custody refunds as unreadable_address): it opens as text.
    const junk = sealBytes(DEV_SEAL_KEY, context, new TextEncoder().encode("not an address"));
    expect(openSealedAddress([DEV_SEAL_KEY], context, junk)).toBe("not an address");
  });

  it("the Python SDK opens what JS sealed, and JS opens what Python sealed", () => {
    const fromJs = sealAddress(DEV_SEAL_KEY, context, SAPLING_TESTNET, "testnet");
    const script = `
import json, sys
from zsd.seal import SealKey, open_sealed_address, seal_address
a = json.loads(sys.argv[1])
ctx = dict(chain_id=a["chainId"], redemptions=a["redemptions"], owner=a["owner"])
opened = open_sealed_address([(1, a["secret"])], sealed=a["sealed"], **ctx)
sealed = seal_address(SealKey(1, a["public"]), address=a["address"], network="testnet", **ctx)
print(json.dumps({"opened": opened, "sealed": sealed}))
`;
    const out = execFileSync(
      "python3",
      [
        "-c",
        script,
        JSON.stringify({
          ...context,
          secret: DEV_SEAL_KEY.secretKey,
          public: DEV_SEAL_KEY.publicKey,
          sealed: fromJs,
          address: SAPLING_TESTNET,
        }),
      ],
      { cwd: join(ROOT, "sdk/python"), encoding: "utf8" },
    );
    const { opened, sealed } = JSON.parse(out) as { opened: string; sealed: Hex };
    expect(opened).toBe(SAPLING_TESTNET);
    expect(openSealedAddress([DEV_SEAL_KEY], context, sealed)).toBe(SAPLING_TESTNET);
    expect(code(() => openSealedAddress([DEV_SEAL_KEY], { ...context, owner: other }, sealed))).toBe("unreadable");
  });
});
