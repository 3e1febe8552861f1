"""Withdraw addresses leave this machine sealed to custody's key (``zsd.seal``), as the JS SDK sends them.

The key, the chain and the Redemptions contract come from ``GET /v1/relay``, read once per client; an
``unreadable_address`` answer may mean governance rotated the key since, so a flow seals once more with a
fresh read (``Sealer.retry_on_rotation``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, TypeVar

from . import seal
from .errors import ZsdError
from .resources import RelayInfo

T = TypeVar("T")


def network_of(relay: Mapping[str, Any]) -> str:
    """The network whose addresses the API pays: testnet in the sandbox, mainnet in production."""
    return "mainnet" if relay.get("environment") == "production" else "testnet"


class Sealer:
    def __init__(self, relay: RelayInfo) -> None:
        self._relay = relay
        self._cached: Optional[Dict[str, Any]] = None

    def target(self, fresh: bool = False) -> Dict[str, Any]:
        """``{key, chain_id, redemptions, network}`` from the relay (read again with ``fresh``)."""
        if fresh or self._cached is None:
            relay = self._relay.retrieve()
            key = relay.get("sealKey")
            chain_id = relay.get("chainId")
            found = (relay.get("contracts") or {}).get("Redemptions")
            if not key or key["algorithm"] != seal.SEAL_ALGORITHM or chain_id is None or not found:
                raise ZsdError(
                    "This API publishes no seal key (of a known algorithm) or no Redemptions contract: "
                    "it relays no payouts.",
                    code="relay_unavailable",
                )
            self._cached = {
                "key": seal.SealKey(key_id=int(key["keyId"]), public_key=str(key["publicKey"])),
                "chain_id": int(chain_id),
                "redemptions": str(found["address"]),
                "network": network_of(relay),
            }
        return self._cached

    def seal(self, address: str, owner: str, *, fresh: bool = False) -> str:
        """``address``, checked for the API's network (``zsd.seal.SealError`` ``invalid_address`` when it is
        not one of its shielded addresses), sealed for a payout owned by ``owner``: 0x hex."""
        target = self.target(fresh)
        return seal.seal_address(
            target["key"],
            chain_id=target["chain_id"],
            redemptions=target["redemptions"],
            owner=owner,
            address=address,
            network=target["network"],
        )

    def check(self, address: str) -> None:
        """``zsd.seal.SealError`` (``invalid_address``) unless ``address`` is a shielded address of the API's network:
        for a flow that must refuse it before an earlier step (a repayment) spends anything."""
        seal.check_shielded_address(address, self.target()["network"])

    def retry_on_rotation(self, attempt: Callable[[bool], T]) -> T:
        """Runs ``attempt(fresh=False)``; on ``unreadable_address`` (the key rotated), once more with a fresh key."""
        try:
            return attempt(False)
        except ZsdError as error:
            if error.code != "unreadable_address":
                raise
            return attempt(True)


def redeem_typed_data(domain: Dict[str, Any], message: Dict[str, Any]) -> Dict[str, Any]:
    """The EIP-712 typed data of a redemption (the SDK's own types: what the wallet signs is what is sent)."""
    return {
        "domain": domain,
        "types": {
            "Redeem": [
                {"name": "owner", "type": "address"},
                {"name": "amount", "type": "uint256"},
                # The least ZEC paid after the fee: sent late (a price rise, pro-rata redemptions), it reverts.
                {"name": "minZatOut", "type": "uint256"},
                {"name": "sealedAddress", "type": "bytes"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ]
        },
        "primaryType": "Redeem",
        "message": message,
    }
