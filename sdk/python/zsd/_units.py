"""Decimal amounts in their smallest unit and back, exactly: ZSD (18 decimals) and ZEC (8)."""

from __future__ import annotations

from decimal import MAX_PREC, Context, Decimal, DecimalException, Inexact, InvalidOperation, Rounded
from typing import Union


def to_units(amount: Union[str, int, Decimal], decimals: int, unit: str) -> int:
    """``amount`` (a decimal string, never a float: floats lose cents) in its smallest unit; ValueError for
    more than ``decimals`` decimals or <= 0."""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        raise ValueError(f"Not a {unit} amount: {amount!r}") from None
    if not value.is_finite():
        raise ValueError(f"Not a {unit} amount: {amount!r}")
    # Shifting the exponent is exact, where multiplying rounds to the context's 28 significant digits.
    try:
        units = value.scaleb(decimals, Context(prec=MAX_PREC, traps=[Inexact, Rounded]))
    except DecimalException:
        raise ValueError(f"Not a {unit} amount: {amount!r}") from None
    if units != units.to_integral_value() or units <= 0:
        raise ValueError(f"A {unit} amount is positive with at most {decimals} decimals: {amount!r}")
    return int(units)


def plain(units: int, decimals: int) -> str:
    """The amount as the API's pattern reads it (str(Decimal) may say 1E-7 or 1E+2)."""
    whole, fraction = divmod(units, 10**decimals)
    digits = f"{fraction:0{decimals}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)
