"""Memoised sympy work: the kernels of a model repeat a few shapes, so their Max/Min are computed once.

`sympy.Max` and `sympy.Min` on symbolic arguments compare them (`_find_localzeros`), which is most
of an analysis's time; a transformer's layers give the same few pairs again and again. `smax` and
`smin` return the same objects as `sympy.Max`/`sympy.Min`, remembered per argument tuple (the
arguments are immutable sympy expressions, so sharing results is safe). The tables are bounded.
"""
from __future__ import annotations

import sympy

__all__ = ["smax", "smin", "clear"]

_LIMIT = 8192
_TABLES: dict = {sympy.Max: {}, sympy.Min: {}}


def _memo(kind, args):
    table = _TABLES[kind]
    result = table.get(args)
    if result is None:
        if len(table) >= _LIMIT:
            table.clear()
        result = table[args] = kind(*args)
    return result


def smax(*args) -> sympy.Expr:
    """`sympy.Max(*args)`, computed once per distinct argument tuple.

    >>> B = sympy.Symbol("B", positive=True)
    >>> smax(2 * B, B) is smax(2 * B, B)
    True
    """
    return _memo(sympy.Max, args)


def smin(*args) -> sympy.Expr:
    """`sympy.Min(*args)`, computed once per distinct argument tuple."""
    return _memo(sympy.Min, args)


def clear() -> None:
    for table in _TABLES.values():
        table.clear()
