"""Floats in words: the number style, significant digits and SI or binary prefixes, without sympy.

Input: a float (a table cell of a sweep, the float of an exact value) and its `Unit`. Output: text
such as `67.13 µs`, `1.074 GFLOP`, `74.51 GiB`. `printers.numbers` formats exact values through
these functions once it has their float; a sweep read back from its compiled plan
(`queries.compiled`) formats its cells with them alone, so that path never imports sympy.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass

from costlang.units import BYTE, BYTE_PER_S, DIMENSIONLESS, FLOP, FLOP_PER_S, SECOND, Unit

__all__ = ["NumberStyle", "number_style", "current_style", "sig", "float_text", "float_cell", "prefixed",
           "binary", "SI", "TIME", "PREFIXED", "SI_UNITS"]

SI = [(12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, "")]
TIME = [(0, "s"), (-3, "ms"), (-6, "µs"), (-9, "ns"), (-12, "ps")]
_BINARY = [(40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"), (0, "")]
PREFIXED = {FLOP: "FLOP", BYTE: "B", FLOP_PER_S: "FLOP/s", BYTE_PER_S: "B/s"}
SI_UNITS = (SECOND, BYTE, FLOP, BYTE_PER_S, FLOP_PER_S)  # scaled with SI prefixes (binary ones for bytes)


@dataclass(frozen=True)
class NumberStyle:
    """How values print: `binary` bytes in KiB/MiB/GiB/TiB (and B/s as GiB/s); `exact` integers in
    full (`137438953472 FLOP`, not `137.4 GFLOP`) and fractions exactly beside their decimal."""
    binary: bool = False
    exact: bool = False


_STYLE: contextvars.ContextVar = contextvars.ContextVar("costlang_number_style", default=NumberStyle())


def current_style() -> NumberStyle:
    return _STYLE.get()


@contextlib.contextmanager
def number_style(binary: bool = False, exact: bool = False):
    """Print values in this style inside the block (`costlang run --units binary --exact`).

    >>> with number_style(binary=True):
    ...     float_cell(80e9, BYTE)
    '74.51 GiB'
    """
    token = _STYLE.set(NumberStyle(binary, exact))
    try:
        yield
    finally:
        _STYLE.reset(token)


def sig(x: float, digits: int = 4) -> str:
    """`x` to `digits` significant digits, without exponent noise for everyday magnitudes.

    >>> sig(14.285714), sig(0.1666666), sig(1365.3333), sig(2e-05), sig(120000.0), sig(14450.0)
    ('14.29', '0.1667', '1365', '2e-05', '120000', '14450')
    """
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        exp_i = int(exp)
        if -4 <= exp_i < 15:
            return _trim(f"{x:.{max(0, digits - 1 - exp_i)}f}") if exp_i >= 0 else text
        return f"{mant}e{'+' if exp_i > 0 else '-'}{abs(exp_i):02d}"
    return text


def _trim(text: str) -> str:
    """Drop trailing zeros of a fraction part (never of an integer)."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def binary(x: float, base: str) -> str:
    """Bytes (or B/s) with a binary prefix: 2^30 B = 1 GiB."""
    for power, prefix in _BINARY:
        if abs(x) >= 2.0 ** power * (1 - 1e-12):
            return f"{sig(x / 2.0 ** power)} {prefix}{base}"
    return f"{sig(x)} {base}"


def prefixed(x: float, table, base: str) -> str:
    """x with the largest prefix of `table` (SI or TIME) it reaches: `prefixed(1.5e9, SI, "B")` is 1.5 GB."""
    if x == 0:
        return f"0 {table[-1][1] if base == '' else base}".replace("0 ps", "0 s")
    for power, prefix in table:
        if abs(x) >= 10.0 ** power * (1 - 1e-12):
            return f"{sig(x / 10.0 ** power)} {prefix}{base}"
    power, prefix = table[-1]
    return f"{sig(x / 10.0 ** power)} {prefix}{base}"


def prefixed_unit(x: float, unit: Unit) -> str:
    """A finite float of one of `SI_UNITS` with its prefixed unit, in the current style."""
    if _STYLE.get().binary and unit in (BYTE, BYTE_PER_S):
        return binary(x, PREFIXED[unit])
    if unit in PREFIXED:
        return prefixed(x, SI, PREFIXED[unit])
    return prefixed(x, TIME, "")


def float_text(x: float) -> str:
    """4 significant digits, without an exponent between 0.001 and 10^7 (table cells).

    >>> float_text(1234.5678), float_text(0.000123), float_text(2.5e7), float_text(float("nan"))
    ('1235', '0.000123', '2.5e+07', 'nan')
    """
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x == 0 or not 1e-3 <= abs(x) < 1e7:
        return f"{x:.4g}"
    decimals = max(0, 3 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def float_cell(x: float, unit) -> str:
    """A table cell with its unit, SI-prefixed where the unit allows (`67.13 µs`, `1.074 GFLOP`;
    `0.9998 FLOP/B`). Every cell is a float, so none is marked ≈.

    >>> float_cell(6.713e-05, SECOND), float_cell(1.074e9, FLOP), float_cell(0.99984, FLOP / BYTE)
    ('67.13 µs', '1.074 GFLOP', '0.9998 FLOP/B')
    """
    if unit in SI_UNITS and math.isfinite(float(x)):
        return prefixed_unit(float(x), unit)
    text = float_text(x)
    return text if unit is None or unit == DIMENSIONLESS else f"{text} {unit}"
