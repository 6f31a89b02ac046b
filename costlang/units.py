"""Units: the three base dimensions of the cost model (FLOP, byte, second) and unit literals.

Input: the text of a unit literal such as ``TB/s`` or ``GiB``. Output: an exact scale (a sympy
Rational) and a `Unit`, the exponent vector over FLOP, B and s. Decimal prefixes are powers of ten
(1 TB/s = 10**12 B/s); binary prefixes (KiB, MiB, GiB, TiB) are powers of two, only when written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy

__all__ = ["Unit", "DIMENSIONLESS", "FLOP", "BYTE", "SECOND", "FLOP_PER_S", "BYTE_PER_S",
           "INTENSITY", "parse_unit", "is_unit"]

_DECIMAL = {"": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_TIME = {"s": 0, "ms": -3, "us": -6, "µs": -6, "ns": -9}


@dataclass(frozen=True)
class Unit:
    """A product FLOP**flop · B**byte · s**second with integer exponents.

    `label` is the unit a query names (`query ... in tokens/s`), printed instead of the exponents;
    it only labels a result, so arithmetic on units drops it: `str(Unit(second=-1, label="tokens/s"))`
    is `tokens/s`.
    """
    flop: int = 0
    byte: int = 0
    second: int = 0
    label: str = ""

    def __mul__(self, other: "Unit") -> "Unit":
        return Unit(self.flop + other.flop, self.byte + other.byte, self.second + other.second)

    def __truediv__(self, other: "Unit") -> "Unit":
        return Unit(self.flop - other.flop, self.byte - other.byte, self.second - other.second)

    def __pow__(self, n: int) -> "Unit":
        return Unit(self.flop * n, self.byte * n, self.second * n)

    @property
    def dimensions(self) -> "Unit":
        """The unit without its label."""
        return Unit(self.flop, self.byte, self.second)

    @property
    def dimensionless(self) -> bool:
        return self == DIMENSIONLESS

    def __str__(self) -> str:
        if self.label:
            return self.label
        up = [_power(n, e) for n, e in (("FLOP", self.flop), ("B", self.byte), ("s", self.second)) if e > 0]
        down = [_power(n, -e) for n, e in (("FLOP", self.flop), ("B", self.byte), ("s", self.second)) if e < 0]
        if not up and not down:
            return "1"
        top = "·".join(up) or "1"
        return top if not down else f"{top}/{'·'.join(down)}"


def _power(name: str, e: int) -> str:
    return name if e == 1 else f"{name}^{e}"


DIMENSIONLESS = Unit()
FLOP = Unit(flop=1)
BYTE = Unit(byte=1)
SECOND = Unit(second=1)
FLOP_PER_S = FLOP / SECOND
BYTE_PER_S = BYTE / SECOND
INTENSITY = FLOP / BYTE


_UNIT_TEXT = re.compile(r"(?:[KMGTPE]i|[kMGTPE])?(?:FLOP|B)(?:/s)?|(?:m|u|µ|n)?s")  # the grammar's UNIT


def is_unit(text: str) -> bool:
    """Whether `text` is a unit literal (`s`, `GB`, `TB/s`), as the grammar's UNIT terminal reads it.

    >>> is_unit("ms"), is_unit("GiB"), is_unit("tokens")
    (True, True, False)
    """
    return _UNIT_TEXT.fullmatch(text) is not None


def parse_unit(text: str) -> tuple[sympy.Rational, Unit]:
    """Scale and unit of a unit literal the grammar accepted.

    >>> parse_unit("TB/s")
    (1000000000000, Unit(flop=0, byte=1, second=-1, label=''))
    >>> parse_unit("GiB")[0] == 2**30, parse_unit("KiB")[0], parse_unit("kB")[0]
    (True, 1024, 1000)
    >>> parse_unit("us")[0]
    1/1000000
    """
    import sympy  # here only: a unit and its words need no sympy (printers.floats)
    if text in _TIME:
        return sympy.Rational(10) ** _TIME[text], SECOND
    per_second = text.endswith("/s")
    body = text[:-2] if per_second else text
    base, unit = ("FLOP", FLOP) if body.endswith("FLOP") else ("B", BYTE)
    prefix = body[: -len(base)]
    if prefix in _BINARY:
        scale = sympy.Integer(2) ** _BINARY[prefix]
    else:
        scale = sympy.Integer(10) ** _DECIMAL[prefix]
    return scale, (unit / SECOND if per_second else unit)
