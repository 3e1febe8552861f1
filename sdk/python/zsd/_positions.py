"""What a position's signers sign (the minter's EIP-712 messages), and ZEC amounts as the minter counts them.

The types are the SDK's own, equal to the JavaScript SDK's (``@zsd/sdk`` ``positions.ts``), not read from the API's
terms: what the wallet signs is what this code means to send. uint256 values are decimal strings, as JSON carries
them without losing digits (a note commitment is a 254-bit number).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._units import plain, to_units

# The BN254 scalar field: a note commitment is one of its elements, and 0 means "no note" to the minter.
SNARK_SCALAR_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617

_DESTINATION = [
    {"name": "sealedAddress", "type": "bytes"},
    {"name": "noteCommitment", "type": "uint256"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]

TYPES: Dict[str, List[Dict[str, str]]] = {
    "Repay": [
        {"name": "positionId", "type": "uint256"},
        # The most burned: a debt a redemption shrank below it is repaid whole, and no more.
        {"name": "maxAmount", "type": "uint256"},
        {"name": "payer", "type": "address"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
    "WithdrawCollateral": [
        {"name": "positionId", "type": "uint256"},
        {"name": "amountZat", "type": "uint256"},
        {"name": "sealedAddress", "type": "bytes"},
        {"name": "noteCommitment", "type": "uint256"},
        {"name": "nonce", "type": "uint256"},
        {"name": "deadline", "type": "uint256"},
    ],
    # A breach of a bound reverts (DebtAboveMaximum, ZatOutBelowMinimum, SeizedValueBelowMinimum) and moves nothing.
    "Close": [
        {"name": "positionId", "type": "uint256"},
        {"name": "maxDebt", "type": "uint256"},
        {"name": "minZatOut", "type": "uint256"},
        *_DESTINATION,
    ],
    "Liquidate": [
        {"name": "positionId", "type": "uint256"},
        {"name": "maxDebt", "type": "uint256"},
        {"name": "minSeizedZat", "type": "uint256"},
        {"name": "minSeizedValue", "type": "uint256"},
        *_DESTINATION,
    ],
}


def position_typed_data(
    primary_type: str, domain: Mapping[str, Any], message: Mapping[str, Any]
) -> Dict[str, Any]:
    """EIP-712 typed data of a position action (``Repay``, ``WithdrawCollateral``, ``Close``, ``Liquidate``)
    on the minter's ``domain`` (``positions.terms(signer)["domain"]``)."""
    return {
        "domain": {"name": "ZSD Minter", "version": "1", **domain},
        "types": {primary_type: [dict(field) for field in TYPES[primary_type]]},
        "primaryType": primary_type,
        "message": dict(message),
    }


def position_number(position_id: str) -> str:
    """A position id (a positive integer, as a string) checked before anything is signed."""
    # The API's own pattern: ASCII digits only (str.isdigit takes "²", which int() refuses).
    if not re.fullmatch(r"[1-9][0-9]{0,19}", position_id):
        raise ValueError(f"A position id is a positive integer, as a string (got {position_id!r})")
    return position_id


def destination_of(
    withdraw_address: Optional[str], note_commitment: Optional[Union[str, int]]
) -> Tuple[Optional[str], Optional[str]]:
    """Exactly one of an address (checked and sealed later) and a note commitment (a field element, not 0), the
    commitment as the decimal string the API and the typed data take; ValueError before anything is sent."""
    if (withdraw_address is None) == (note_commitment is None):
        raise ValueError("give exactly one of withdraw_address and note_commitment")
    if note_commitment is None:
        return withdraw_address, None
    # type() and not isinstance(): True is an int to Python.
    text = str(note_commitment) if type(note_commitment) is int else note_commitment
    if not isinstance(text, str) or not re.fullmatch(r"[0-9]{1,78}", text) or not 0 < int(text) < SNARK_SCALAR_FIELD:
        raise ValueError(f"note_commitment is a note's commitment, a decimal field element (got {note_commitment!r})")
    return None, str(int(text))


def to_zat(amount: Union[str, int, Decimal]) -> int:
    """ZEC (a decimal string, never a float) in zatoshis, exactly; ValueError for more than 8 decimals or <= 0."""
    return to_units(amount, 8, "ZEC")


def plain_zec(zat: int) -> str:
    """The amount signed, as the API's pattern reads it (str(Decimal) may say 1E-7)."""
    return plain(zat, 8)
