"""The words of comparisons: a scenario's settings, a change as a ratio ("traffic ÷ 2"), a sweep's
crossings and marks. Used by the text report and by the JSON and CSV printers alike."""
from __future__ import annotations

from costlang.printers.numbers import exact_or_approx, expr_text, is_bound
from costlang.printers.words.phrases import phrase
from costlang.printers.words.marks import mark_text

__all__ = ["settings_words", "ratio_text", "crossing_text", "mark_text"]


def settings_words(s) -> str:
    """A scenario's settings (queries.whatif `Settings`): 'W=int4', 'as written, with B=1'."""
    if s.as_written:
        return "as written" + (f", with {'; '.join(s.applied)}" if s.applied else "")
    return "; ".join(s.applied) or "as written"


def crossing_text(c) -> str:
    """A sweep's `Crossing` (queries.sweep) in words."""
    bound = phrase("en", "verdict_words")
    return (f"crossing: {c.kernel} changes bound at {c.symbol}* = {exact_or_approx(c.value)} "
            f"({bound[c.below.value]} below, {bound['balanced']} there, {bound[c.above.value]} above)")


def ratio_text(change, value=lambda e: e) -> str:
    """after / before as a factor: "traffic ÷ 2", "I × 2", "launches unchanged".

    >>> import sympy
    >>> from costlang.queries.compare import Change
    >>> from costlang.units import BYTE
    >>> ratio_text(Change("bytes", "traffic", BYTE, 16, 8, sympy.Rational(1, 2)))
    'traffic ÷ 2'
    """
    r = None if change.ratio is None else value(change.ratio)
    if r is None:
        return f"{change.label}: no ratio"
    if r == 1:
        return f"{change.label} unchanged"
    if not is_bound(r):
        return f"{change.label} × ({expr_text(r)})"
    return f"{change.label} ÷ {exact_or_approx(1 / r)}" if r < 1 else f"{change.label} × {exact_or_approx(r)}"
