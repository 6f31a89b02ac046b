"""A solve's structured answer in words: the sides of a crossing and the max()/min() branch of a root.

Input: `Side`, `Case` (analysis.solve_terms), the solve's two side texts, a language, and a
function that formats an expression. Output: phrases from `printers.phrases` ("memory-bound",
"fits in memory", "y is memory-bound there", "if T_a is the larger there"); a side with no name
of its own is the relation of the file's two sides (`t_kernel(y) < 1 ms`).

>>> from costlang.queries.solve_terms import Side
>>> side_words(Side.FITS, "footprint()", "capacity()")
'fits in memory'
>>> side_words(Side.BELOW, "t_kernel(y)", "1 ms")
't_kernel(y) < 1 ms'
"""
from __future__ import annotations

from typing import Callable, Optional

from costlang.queries.solve_terms import Case, Side
from costlang.printers.words.korean import fill
from costlang.printers.words.phrases import phrase

__all__ = ["relation_side", "side_words", "side_predicate", "case_words"]


def relation_side(side: Side, lhs: str, rhs: str) -> Optional[str]:
    """`lhs < rhs` or `lhs > rhs` for a side with no name of its own, else None."""
    if side == Side.BELOW:
        return f"{lhs} < {rhs}"
    if side == Side.ABOVE:
        return f"{lhs} > {rhs}"
    return None


def side_words(side: Side, lhs: str, rhs: str, lang: str = "en") -> str:
    """The regime on one side of a crossing: 'memory-bound', 'fits in memory', 'lhs < rhs'."""
    return relation_side(side, lhs, rhs) or phrase(lang, "regime_words")[side.value]


def side_predicate(side: Side, lhs: str, rhs: str, lang: str = "en") -> str:
    """What a value on that side does: 'is memory-bound', 'fits in memory', 'satisfies lhs < rhs'."""
    relation = relation_side(side, lhs, rhs)
    if relation is not None:
        return fill(phrase(lang, "satisfies"), condition=relation)
    return phrase(lang, "regime_is")[side.value]


def case_words(case: Optional[Case], lang: str = "en", expr: Callable = str) -> str:
    """A root's max()/min() branch: 'y is memory-bound there', 'if T_a is the larger there' ('' for None)."""
    if case is None or not case.taken:
        return ""
    bounds = phrase(lang, "verdict_words")
    parts = [fill(phrase(lang, "case_bound"), kernel=t.kernel, bound=bounds[t.bound.value]) if t.kernel
             else fill(phrase(lang, "case_larger" if t.larger else "case_smaller"), term=expr(t.term))
             for t in case.taken]
    return fill(phrase(lang, "case" if case.certain else "case_if"), parts=phrase(lang, "and").join(parts))
