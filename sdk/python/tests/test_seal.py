"""Sealed withdraw addresses: bound to their request, checked before sealing (the JS side is test/sdk/seal.test.ts)."""

from __future__ import annotations

import hashlib
import unittest
from typing import Any, Dict

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from zsd.seal import SealError, SealKey, check_shielded_address, open_sealed_address, seal_address, seal_bytes

# The development key of local chains (public, like Hardhat's mnemonic): @zsd/sdk/seal's DEV_SEAL_KEY.
DEV_SECRET = "0x" + hashlib.sha256(b"zsd development seal key 1").hexdigest()
DEV_PUBLIC = "0x" + (
    X25519PrivateKey.from_private_bytes(bytes.fromhex(DEV_SECRET[2:]))
    .public_key()
    .public_bytes(Encoding.Raw, PublicFormat.Raw)
    .hex()
)
SAPLING_TESTNET = "ztestsapling10yy2ex5dcqkclhc7z7yrnjq2z6feyjad56ptwlfgmy77dmaqqrl9gyhprdx59qgmsnyfska2kez"
SAPLING_MAINNET = "zs1z7rejlpsa98s2rrrfkwmaxu53e4ue0ulcrw0h4x5g8jl04tak0d3mm47vdtahatqrlkngh9slya"
UNIFIED_MAINNET = (
    "u1k9eh52jx5q4y8lw6x208lsep4t6yzwk7mdwz9e6239qywjkqzdcd3al3d64zwnqx296p3klxnash5w2e0elg39qrydxx0s0qz5m2gnt0"
)
CTX: Dict[str, Any] = {
    "chain_id": 31337,
    "redemptions": "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    "owner": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
}
OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"


class SealTest(unittest.TestCase):
    def test_round_trip_and_binding(self) -> None:
        key = SealKey(1, DEV_PUBLIC)
        sealed = seal_address(key, address=SAPLING_TESTNET.upper(), network="testnet", **CTX)
        self.assertEqual(open_sealed_address([(1, DEV_SECRET)], sealed=sealed, **CTX), SAPLING_TESTNET)
        self.assertEqual(len(bytes.fromhex(sealed[2:])), 65 + 256)  # padded: the length tells no address type apart
        self.assertNotEqual(sealed, seal_address(key, address=SAPLING_TESTNET, network="testnet", **CTX))
        changes: tuple[Dict[str, Any], ...] = ({"owner": OTHER}, {"chain_id": 1}, {"redemptions": OTHER})
        for change in changes:
            with self.assertRaises(SealError) as caught:
                open_sealed_address([(1, DEV_SECRET)], sealed=sealed, **{**CTX, **change})
            self.assertEqual(caught.exception.code, "unreadable")
        with self.assertRaises(SealError) as caught:
            open_sealed_address([(2, DEV_SECRET)], sealed=sealed, **CTX)
        self.assertEqual(caught.exception.code, "unknown_key")
        tampered = bytearray.fromhex(sealed[2:])
        tampered[-1] ^= 1
        with self.assertRaises(SealError):
            open_sealed_address([(1, DEV_SECRET)], sealed="0x" + tampered.hex(), **CTX)

    def test_addresses_checked_before_sealing(self) -> None:
        check_shielded_address(SAPLING_MAINNET, "mainnet")
        check_shielded_address(UNIFIED_MAINNET, "mainnet")
        check_shielded_address(SAPLING_TESTNET, "testnet")
        bad = [
            (SAPLING_TESTNET, "mainnet"),  # another network
            (SAPLING_MAINNET[:-1] + ("q" if SAPLING_MAINNET[-1] != "q" else "p"), "mainnet"),  # typo
            (UNIFIED_MAINNET[:-1] + ("q" if UNIFIED_MAINNET[-1] != "q" else "p"), "mainnet"),
            ("t1Rv4exT7bqhZqi2j7xz8bUHDMxwosrjADU", "mainnet"),  # transparent
            ("Zs1" + SAPLING_MAINNET[3:], "mainnet"),  # mixed case
            ("", "mainnet"),
            ("zs1" + "q" * 600, "mainnet"),
        ]
        for address, network in bad:
            with self.assertRaises(SealError, msg=address) as caught:
                seal_address(SealKey(1, DEV_PUBLIC), address=address, network=network, **CTX)
            self.assertEqual(caught.exception.code, "invalid_address")

    def test_unparseable_plaintext_still_opens(self) -> None:
        # What custody refunds as unreadable_address: sealed correctly, but not an address.
        sealed = seal_bytes(SealKey(1, DEV_PUBLIC), plaintext=b"not an address", **CTX)
        self.assertEqual(open_sealed_address([(1, DEV_SECRET)], sealed=sealed, **CTX), "not an address")


if __name__ == "__main__":
    unittest.main()
