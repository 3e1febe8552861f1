"""Sealed withdraw addresses: a shielded Zcash address encrypted to custody's X25519 key.

The chain carries only the envelope, never the address: custody opens it and pays.
The format is the JS SDK's (``@zsd/sdk/seal``), version 1:
``version (1) | keyId (4, big-endian) | ephemeral X25519 public key (32) | nonce (12) |
ChaCha20-Poly1305 ciphertext of the UTF-8 address | tag (16)``. The key is HKDF-SHA256 of the
X25519 shared secret (salt: ephemeral | custody public key); the associated data binds the
envelope to one chain, one Redemptions contract and one owner.

Uses the ``cryptography`` package (Debian: ``python3-cryptography``); no hand-written crypto.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Optional

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SEAL_VERSION = 1
SEAL_ALGORITHM = "x25519-hkdf-sha256-chacha20poly1305"
ADDRESS_MAX_LENGTH = 512
_HEADER = 1 + 4 + 32 + 12
_TAG = 16
SEALED_ADDRESS_MIN_LENGTH = _HEADER + _TAG + 1
SEALED_ADDRESS_MAX_LENGTH = _HEADER + _TAG + ADDRESS_MAX_LENGTH
SEAL_PADDED_SHORT = 256
_KDF_INFO = b"zsd sealed withdraw address v1"
_AAD_TAG = b"zsd-sealed-address-v1"


class SealError(ValueError):
    """A sealed address that cannot be made or opened; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class SealKey:
    """A custody seal key as ``GET /v1/relay`` publishes it (``relay["sealKey"]``)."""

    key_id: int
    public_key: str  # 0x and 64 hex digits


def _hex_bytes(value: str, length: Optional[int] = None) -> bytes:
    text = value[2:] if value.startswith("0x") else value
    try:
        out = bytes.fromhex(text)
    except ValueError:
        raise SealError("malformed_envelope", "expected hex bytes") from None
    if length is not None and len(out) != length:
        raise SealError("malformed_envelope", f"expected {length} bytes, got {len(out)}")
    return out


def _aad(chain_id: int, redemptions: str, owner: str, nonce: bytes, key_id: bytes) -> bytes:
    return (
        _AAD_TAG
        + chain_id.to_bytes(32, "big")
        + _hex_bytes(redemptions, 20)
        + _hex_bytes(owner, 20)
        + nonce
        + key_id
    )


def _key(shared: bytes, ephemeral_public: bytes, custody_public: bytes) -> bytes:
    if shared == bytes(32):
        raise SealError("unreadable", "degenerate X25519 key")
    return HKDF(
        algorithm=hashes.SHA256(), length=32, salt=ephemeral_public + custody_public, info=_KDF_INFO
    ).derive(shared)


def _raw_public(key: X25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def seal_bytes(key: SealKey, *, chain_id: int, redemptions: str, owner: str, plaintext: bytes) -> str:
    """Seals raw bytes (no address check): the envelope as 0x hex."""
    if not 0 <= key.key_id <= 0xFFFFFFFF:
        raise ValueError("a key id is a uint32")
    custody_public = _hex_bytes(key.public_key, 32)
    ephemeral = X25519PrivateKey.generate()
    ephemeral_public = _raw_public(ephemeral.public_key())
    shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(custody_public))
    nonce = os.urandom(12)
    key_id = key.key_id.to_bytes(4, "big")
    aead = ChaCha20Poly1305(_key(shared, ephemeral_public, custody_public))
    sealed = aead.encrypt(nonce, plaintext, _aad(chain_id, redemptions, owner, nonce, key_id))
    return "0x" + (bytes([SEAL_VERSION]) + key_id + ephemeral_public + nonce + sealed).hex()


def seal_address(key: SealKey, *, chain_id: int, redemptions: str, owner: str, address: str, network: str) -> str:
    """Seals a shielded address for one payout request, after checking it is one of ``network``.

    The check here is the address's shape, prefix and checksum (a typo fails before anything is
    signed or burned); the relay opens the envelope and applies the full ZIP 316 rules before it
    sends anything on-chain.
    """
    check_shielded_address(address, network)
    canonical = address.lower().encode()
    # Zero-padded to a fixed size, as the JS SDK does: the envelope's length tells no address type apart.
    size = SEAL_PADDED_SHORT if len(canonical) <= SEAL_PADDED_SHORT else ADDRESS_MAX_LENGTH
    padded = canonical + bytes(size - len(canonical))
    return seal_bytes(key, chain_id=chain_id, redemptions=redemptions, owner=owner, plaintext=padded)


def open_sealed_address(
    secret_keys: Iterable[tuple[int, str]], *, chain_id: int, redemptions: str, owner: str, sealed: str
) -> str:
    """Opens an envelope with custody's ``(key_id, secret_hex)`` keys: custody's side, and tests."""
    data = _hex_bytes(sealed)
    if not SEALED_ADDRESS_MIN_LENGTH <= len(data) <= SEALED_ADDRESS_MAX_LENGTH or data[0] != SEAL_VERSION:
        raise SealError("malformed_envelope", "not a version-1 sealed address of a valid length")
    key_id = data[1:5]
    secret = dict(secret_keys).get(int.from_bytes(key_id, "big"))
    if secret is None:
        raise SealError("unknown_key", f"sealed to key {int.from_bytes(key_id, 'big')}, not held")
    private = X25519PrivateKey.from_private_bytes(_hex_bytes(secret, 32))
    ephemeral_public, nonce = data[5:37], data[37:_HEADER]
    try:
        shared = private.exchange(X25519PublicKey.from_public_bytes(ephemeral_public))
    except ValueError:
        raise SealError("unreadable", "degenerate X25519 key") from None
    aead = ChaCha20Poly1305(_key(shared, ephemeral_public, _raw_public(private.public_key())))
    try:
        plaintext = aead.decrypt(nonce, data[_HEADER:], _aad(chain_id, redemptions, owner, nonce, key_id))
    except Exception:  # cryptography's InvalidTag
        raise SealError("unreadable", "does not open for this key, owner, chain and contract") from None
    return plaintext.decode("utf-8").rstrip("\0")



# --- address shape (bech32 / bech32m, BIP 173 / 350), as ZIP 173 and ZIP 316 encode shielded addresses ---

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_PREFIXES = {
    "mainnet": {"zs": 1, "u": 0x2BC830A3},
    "testnet": {"ztestsapling": 1, "utest": 0x2BC830A3},
}


def _polymod(values: list[int]) -> int:
    generator = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    check = 1
    for value in values:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ value
        for i in range(5):
            check ^= generator[i] if (top >> i) & 1 else 0
    return check


def check_shielded_address(address: str, network: str) -> None:
    """Raises SealError("invalid_address") unless ``address`` is a Sapling (bech32) or Unified (bech32m)
    address of ``network`` ("mainnet" or "testnet") with a valid checksum."""
    if network not in _PREFIXES:
        raise ValueError("network is 'mainnet' or 'testnet'")
    if not 1 <= len(address) <= ADDRESS_MAX_LENGTH or not address.isascii() or not address.isprintable():
        raise SealError("invalid_address", "a shielded address is 1 to 512 printable ASCII characters")
    if address != address.lower() and address != address.upper():
        raise SealError("invalid_address", "mixed case is not a valid bech32 address")
    lowered = address.lower()
    hrp, sep, data = lowered.rpartition("1")
    constant = _PREFIXES[network].get(hrp)
    if not sep or constant is None:
        raise SealError(
            "invalid_address",
            f"not a shielded {network} address: Sapling starts {'zs1' if network == 'mainnet' else 'ztestsapling1'}, "
            f"Unified {'u1' if network == 'mainnet' else 'utest1'}",
        )
    if len(data) < 6 or any(c not in _CHARSET for c in data):
        raise SealError("invalid_address", "the address has characters outside bech32's alphabet")
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_CHARSET.index(c) for c in data]
    if _polymod(values) != constant:
        raise SealError("invalid_address", "the address's checksum is wrong: check it for a typo")
