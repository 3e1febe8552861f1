"""Governance's EIP-712 messages, built here so that a wallet only signs them.

A ballot signs at the nonce keyed by its proposal (GovernorNoncesKeyed: ``uint192(proposalId) << 64``,
the first and only one a voter uses on a proposal); a delegation at the token's ``nonces(delegator)``,
which ``GET /v1/governance/holders/{address}`` reports with both domains.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

SUPPORT = {"against": 0, "for": 1, "abstain": 2}

BALLOT = [
    {"name": "proposalId", "type": "uint256"},
    {"name": "support", "type": "uint8"},
    {"name": "voter", "type": "address"},
    {"name": "nonce", "type": "uint256"},
]
EXTENDED_BALLOT = BALLOT + [{"name": "reason", "type": "string"}, {"name": "params", "type": "bytes"}]
DELEGATION = [
    {"name": "delegatee", "type": "address"},
    {"name": "nonce", "type": "uint256"},
    {"name": "expiry", "type": "uint256"},
]


def keyed_nonce(proposal_id: int) -> int:
    """The governor's nonces(voter, uint192(proposalId)) before the voter's vote on it."""
    return (proposal_id % (1 << 192)) << 64


def ballot_typed_data(
    domain: Mapping[str, Any], proposal_id: int, support: str, voter: str, reason: Optional[str]
) -> Dict[str, Any]:
    """Ballot (or ExtendedBallot with a reason and params = 0x), numbers as decimal strings."""
    if support not in SUPPORT:
        raise ValueError(f"support is for, against or abstain (got {support!r})")
    message: Dict[str, Any] = {
        "proposalId": str(proposal_id),
        "support": SUPPORT[support],
        "voter": voter,
        "nonce": str(keyed_nonce(proposal_id)),
    }
    if reason is None:
        return {
            "domain": dict(domain),
            "types": {"Ballot": BALLOT},
            "primaryType": "Ballot",
            "message": message,
        }
    return {
        "domain": dict(domain),
        "types": {"ExtendedBallot": EXTENDED_BALLOT},
        "primaryType": "ExtendedBallot",
        "message": {**message, "reason": reason, "params": "0x"},
    }


def delegation_typed_data(domain: Mapping[str, Any], delegatee: str, nonce: str, expiry: int) -> Dict[str, Any]:
    return {
        "domain": dict(domain),
        "types": {"Delegation": DELEGATION},
        "primaryType": "Delegation",
        "message": {"delegatee": delegatee, "nonce": nonce, "expiry": str(expiry)},
    }


def joined_signature(signature: Mapping[str, Any]) -> str:
    """``{v, r, s}`` as the 65 bytes r ‖ s ‖ v the API takes, 0x-hex."""
    v = int(signature["v"])
    if v in (0, 1):
        v += 27
    r = str(signature["r"]).lower().removeprefix("0x").rjust(64, "0")
    s = str(signature["s"]).lower().removeprefix("0x").rjust(64, "0")
    if len(r) != 64 or len(s) != 64 or v not in (27, 28):
        raise ValueError("sign must return {v: 27 or 28, r: 32 bytes, s: 32 bytes}")
    return f"0x{r}{s}{v:02x}"
